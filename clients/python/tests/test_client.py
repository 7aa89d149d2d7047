"""Tests of mds_client against a live service started here (``node --import tsx src/main.ts``
on a fresh SQLite file, or the built server that ``MDS_SERVER_MAIN`` names: npm test's run of this
suite gives ``dist/main.js``). Run from clients/python: ``python3 -m unittest -v``.
The pandas, polars and pyarrow parts are skipped, saying so, when those are not installed.
"""

from __future__ import annotations

import datetime as dt
import http.server
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from mds_client import (  # noqa: E402
    AuthError,
    BadRequest,
    BatchRejected,
    Client,
    InvalidRows,
    MissingFactors,
    NotFound,
    RateLimited,
)

ROOT = HERE.parents[2]
QUERY_KEY = "py-test-query-key-0123456789"
INGEST_KEY = "py-test-ingest-key-0123456789"
ADMIN_TOKEN = "py-test-admin-token-0123456789"


HAS_PANDAS, HAS_POLARS, HAS_PYARROW = (importlib.util.find_spec(m) is not None for m in ("pandas", "polars", "pyarrow"))
SKIP_PANDAS = "pandas is not installed (pip install 'mds-client[pandas]'): pandas tests SKIPPED"
SKIP_POLARS = "polars is not installed (pip install 'mds-client[polars]'): polars tests SKIPPED"
SKIP_PYARROW = "pyarrow is not installed (pip install 'mds-client[arrow]'): Arrow/Parquet tests SKIPPED"

_server: "subprocess.Popen[bytes] | None" = None
_tmp = ""
BASE = ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setUpModule() -> None:
    global _server, _tmp, BASE
    _tmp = tempfile.mkdtemp(prefix="mds-py-")
    port = _free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "LOG_LEVEL": "warn",
        "DATABASE_URL": "sqlite:" + os.path.join(_tmp, "py.db"),
        "MDS_QUERY_KEYS": QUERY_KEY,
        "MDS_INGEST_KEYS": INGEST_KEY,
        "MDS_ADMIN_TOKEN": ADMIN_TOKEN,
        # One process: nothing here is about the cluster, whose workers each load the service.
        "MDS_WORKERS": "1",
    }
    node = os.environ.get("MDS_NODE", "node")
    # The built server when given (no TypeScript compiled at start-up), the sources otherwise.
    built = os.environ.get("MDS_SERVER_MAIN")
    entry = [built] if built else ["--import", "tsx", "src/main.ts"]
    _server = subprocess.Popen(
        [node, *entry], cwd=str(ROOT), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    BASE = "http://127.0.0.1:%d" % port
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(BASE + "/health", timeout=2).read()
            break
        except OSError:
            if _server.poll() is not None or time.time() > deadline:
                err = _server.stderr.read().decode() if _server.stderr else ""
                raise RuntimeError("the service did not start: " + err[-2000:])
            time.sleep(0.2)
    _seed()


def tearDownModule() -> None:
    if _server is not None:
        _server.terminate()
        _server.wait(timeout=30)
        if _server.stderr:
            _server.stderr.close()
    shutil.rmtree(_tmp, ignore_errors=True)


CODES = ["51%04d" % i for i in range(100)]
DAYS = [(dt.date(2024, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(23)]


def kline_rows():
    """2,300 etf_daily rows: 23 days × 100 codes, with awkward doubles and absent fields."""
    rows = []
    for di, day in enumerate(DAYS):
        for ci, code in enumerate(CODES):
            close = round(1 + ci / 7 + di / 1000, 3) if ci % 10 else 0.1 + 0.2
            rows.append(
                {
                    "symbol": code,
                    "date": day,
                    "close": close,
                    "open": None if ci % 3 == 0 else close - 0.01,
                    "volume": float(1000 * ci + di),
                    "source": "pytest",
                    "updated_at": "2024-02-01T08:00:00.250Z",
                }
            )
    return rows


def insider_rows():
    return [
        {
            "accession_number": "0000000000-24-%06d" % i,
            "line_no": i + 1,
            "issuer_cik": "0000320193",
            "owner_name": "Owner %d" % i,
            "transaction_date": "2024-03-0%d" % (i + 1),
            "transaction_code": "S",
            "is_director": i % 2,
            "is_officer": None if i == 2 else 1,
            "shares": 100.5 * i,
        }
        for i in range(3)
    ]


def _seed() -> None:
    client = Client(BASE, QUERY_KEY, ingest_key=INGEST_KEY)
    for status in client.push("etf_daily", kline_rows()):
        assert status["status"] == "accepted", status
    for status in client.push("us_insider_trades", insider_rows(), source="sec"):
        assert status["status"] == "accepted", status


class ReadTests(unittest.TestCase):
    def setUp(self) -> None:
        self.client = Client(BASE, QUERY_KEY)

    def test_records_are_every_page_in_order(self) -> None:
        rows = self.client.get("etf/kline", as_="records", via="json", source="pytest")
        self.assertEqual(len(rows), 2300)  # three pages of at most 1,000 (cursor)
        self.assertEqual([r["date"] for r in rows[:100]], [DAYS[-1]] * 100)  # date desc
        first = next(r for r in rows if r["code"] == "510000" and r["date"] == DAYS[0])
        self.assertEqual(first["close"], 0.1 + 0.2)
        self.assertIsNone(first["open"])

    def test_filters_and_fields(self) -> None:
        rows = self.client.get("etf_daily", as_="records", via="json", code="510005", fields=["date", "close"])
        self.assertEqual(len(rows), 23)
        self.assertEqual(sorted(rows[0]), ["close", "date"])

    def test_one_page_with_limit(self) -> None:
        rows = self.client.get("etf/kline", as_="records", limit=5, offset=10)
        self.assertEqual(len(rows), 5)

    def test_errors_carry_the_code(self) -> None:
        with self.assertRaises(AuthError) as e:
            Client(BASE, "not-a-key-0123456789abcdef").get("etf/kline", as_="records", limit=1)
        self.assertEqual((e.exception.status, e.exception.code), (401, 4012))
        with self.assertRaises(BadRequest) as e:
            self.client.get("etf/kline", as_="records", limit=1, nope="1")
        self.assertEqual(e.exception.code, 4001)
        with self.assertRaises(BadRequest):
            self.client.get("no/such-endpoint", as_="records")

    def test_rate_limit_is_reported_with_retry_after(self) -> None:
        req = urllib.request.Request(
            BASE + "/admin/api/keys",
            data=json.dumps({"scope": "query", "name": "py-slow", "rate_per_minute": 1}).encode(),
            headers={"Authorization": "Bearer " + ADMIN_TOKEN, "Content-Type": "application/json"},
        )
        secret = json.loads(urllib.request.urlopen(req).read())["data"]["secret"]
        slow = Client(BASE, secret, max_wait=0)  # never wait: report instead
        slow.get("etf/kline", as_="records", limit=1)
        self.assertEqual(slow.rate_limit["minute"]["r"], 0)
        with self.assertRaises(RateLimited) as e:
            slow.get("etf/kline", as_="records", limit=1)
        self.assertEqual((e.exception.status, e.exception.code), (403, 4030))
        self.assertGreater(e.exception.retry_after or 0, 0)


class _Flaky(http.server.BaseHTTPRequestHandler):
    """A peer that refuses the first request with 403/4030 and Retry-After: 1."""

    calls = 0

    def do_GET(self) -> None:  # noqa: N802
        type(self).calls += 1
        if type(self).calls == 1:
            body = b'{"code":4030,"message":"rate limit exceeded","data":[],"meta":{}}'
            self.send_response(403)
            self.send_header("Retry-After", "1")
        else:
            body = b'{"code":0,"message":"ok","data":[{"x":1}],"meta":{"next_cursor":null}}'
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class RetryTests(unittest.TestCase):
    def test_waits_retry_after_on_403_4030_then_succeeds(self) -> None:
        server = http.server.HTTPServer(("127.0.0.1", 0), _Flaky)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            client = Client("http://127.0.0.1:%d" % server.server_address[1], "k")
            waits = []
            client._http.sleep = waits.append
            res = client._http.request("GET", "/api/v1/x", {"Q-API-KEY": "k"}).json()
            self.assertEqual(res["data"], [{"x": 1}])
            self.assertEqual(waits, [1.0])
        finally:
            server.shutdown()


class PushTests(unittest.TestCase):
    def setUp(self) -> None:
        self.client = Client(BASE, QUERY_KEY, ingest_key=INGEST_KEY)

    def rows(self):
        return [
            {
                "symbol": "599999",
                "date": "2024-05-%02d" % d,
                "close": d / 3,
                "volume": 10.0,
                "source": "push",
                "updated_at": dt.datetime(2024, 5, d, 9, 30, tzinfo=dt.timezone.utc),
            }
            for d in range(1, 8)
        ]

    def test_split_idempotent_and_batch_lookup(self) -> None:
        first = self.client.push("etf_daily", self.rows(), batch_size=3)
        self.assertEqual([s["status"] for s in first], ["accepted"] * 3)
        self.assertEqual([s["record_count"] for s in first], [3, 3, 1])
        again = self.client.push("etf_daily", self.rows(), batch_size=3)
        self.assertEqual([s["status"] for s in again], ["duplicate"] * 3)
        self.assertEqual([s["batch_id"] for s in again], [s["batch_id"] for s in first])
        self.assertEqual(self.client.batch(first[0]["batch_id"])["status"], "accepted")
        with self.assertRaises(NotFound) as e:
            self.client.batch("no-such-batch")
        self.assertEqual(e.exception.code, 4040)

    def test_partial_batch_raises_with_the_errors_or_returns_them(self) -> None:
        rows = self.rows()[:2]
        rows[1]["date"] = "2024-02-30"
        with self.assertRaises(BatchRejected) as e:
            self.client.push("etf_daily", rows, source="push-partial")
        self.assertEqual(e.exception.errors[0]["field"], "date")
        self.assertEqual(e.exception.errors[0]["index"], 1)
        self.assertIn("1 of 2 records refused", e.exception.message)
        self.assertEqual(len(e.exception.statuses), 1)
        (status,) = self.client.push("etf_daily", rows, source="push-partial-2", raise_on_error=False)
        self.assertEqual((status["status"], status["accepted"], status["rejected"]), ("partial", 1, 1))
        self.assertEqual(status["errors"][0]["field"], "date")

    def test_full_snapshot_replaces_the_partition(self) -> None:
        day = [
            {"symbol": c, "date": "2024-06-03", "close": 1.0, "volume": 1.0, "updated_at": "2024-06-03T10:00:00Z"}
            for c in ("1", "2", "3")
        ]
        self.client.push("etf_daily", day, source="snap", snapshot="full")
        (status,) = self.client.push("etf_daily", day[:1], source="snap", snapshot="full")
        self.assertEqual(status["pruned"], 2)
        rows = Client(BASE, QUERY_KEY).get("etf/kline", as_="records", via="json", source="snap")
        self.assertEqual([r["code"] for r in rows], ["1"])

    @unittest.skipUnless(HAS_PANDAS, SKIP_PANDAS)
    def test_push_a_pandas_frame(self) -> None:
        import pandas as pd

        df = pd.DataFrame(self.rows())
        df["date"] = pd.to_datetime(df["date"])
        df["symbol"] = "588888"
        statuses = self.client.push("etf_daily", df)
        self.assertEqual(statuses[0]["status"], "accepted")
        back = Client(BASE, QUERY_KEY).get("etf/kline", via="json", code="588888", sort="date", order="asc")
        self.assertEqual(list(back["close"]), list(df["close"]))


@unittest.skipUnless(HAS_PANDAS, SKIP_PANDAS)
class PandasTests(unittest.TestCase):
    def setUp(self) -> None:
        self.client = Client(BASE, QUERY_KEY)

    def test_dtypes_from_the_openapi_document(self) -> None:
        df = self.client.get("etf/kline", via="json", code="510003")
        self.assertEqual(str(df["date"].dtype), "datetime64[ns]")
        self.assertEqual(str(df["updated_at"].dtype), "datetime64[ns, UTC]")
        self.assertEqual(str(df["close"].dtype), "float64")
        self.assertEqual(len(df), 23)
        trades = self.client.get("us/insider-trades", via="json")
        self.assertEqual(str(trades["is_director"].dtype), "Int8")
        self.assertEqual(str(trades["line_no"].dtype), "Int64")
        self.assertTrue(trades["is_officer"].isna().any())

    def test_timestamps_with_and_without_milliseconds_in_one_column(self) -> None:
        # pandas 3 holds text as its string dtype, not object: the ISO format must still apply
        # (a column inferred from its first value refused the second).
        import pandas as pd

        from mds_client.frames import pandas_dtypes
        from mds_client.schema import Field

        df = pd.DataFrame(
            {"t": ["2024-01-02T08:30:00.000Z", "2026-01-01T00:00:00Z"], "d": ["2024-01-02", "2024-01-03"]}
        )
        out = pandas_dtypes(df, [Field("t", "timestamp", True), Field("d", "date", True)])
        self.assertEqual(str(out["t"].dtype), "datetime64[ns, UTC]")
        self.assertEqual(out["t"].iloc[1], pd.Timestamp("2026-01-01T00:00:00Z"))
        self.assertEqual(str(out["d"].dtype), "datetime64[ns]")

    @unittest.skipUnless(HAS_PYARROW, SKIP_PYARROW)
    def test_arrow_and_parquet_downloads_equal_json_paging(self) -> None:
        import pandas.testing as pdt

        for path in ("etf/kline", "us/insider-trades"):
            by_json = self.client.get(path, via="json")
            for via in ("arrow", "parquet"):
                pdt.assert_frame_equal(self.client.get(path, via=via), by_json, check_exact=True, obj=via)


class EtagVersionTests(unittest.TestCase):
    def test_the_version_part_of_a_query_etag(self) -> None:
        from mds_client.client import _etag_version

        self.assertEqual(_etag_version('W/"12-abcdefghijklmnop"'), "12")
        self.assertEqual(_etag_version('W/"12:3-ab-defgh_jklmnop"'), "12:3")  # base64url has "-"
        for bad in (None, "", '"12-abcdefghijklmnop"', 'W/"12"', 'W/"-abcdefghijklmnop"', 'W/"12xabcdefghijklmnop"'):
            self.assertIsNone(_etag_version(bad), bad)


@unittest.skipUnless(HAS_PANDAS and HAS_PYARROW, SKIP_PANDAS if not HAS_PANDAS else SKIP_PYARROW)
class ParallelPullTests(unittest.TestCase):
    """A columnar pull split into date ranges fetched at once equals one download: same rows,
    order, dtypes; and falls back to one download where that could not be guaranteed."""

    def client(self, parallel: int = 3) -> Client:
        # Every pull here is large enough to split (the default needs 100,000 rows a part).
        c = Client(BASE, QUERY_KEY, parallel=parallel, parallel_min_rows=1)
        c.datasets()  # the OpenAPI document, before the requests counted
        c.sent = []  # type: ignore[attr-defined]
        c.factor_lookups = 0  # type: ignore[attr-defined]
        request = c._http.request

        def record(method, path, headers, params=None, body=None):  # type: ignore[no-untyped-def]
            # An adjusted export's codes are looked up in the factor dataset after its download:
            # counted apart, they are no part of the pull.
            if path == "/api/v1/market/adj-factor":
                c.factor_lookups += 1  # type: ignore[attr-defined]
            else:
                c.sent.append(dict(params or []))  # type: ignore[attr-defined]
            return request(method, path, headers, params, body)

        c._http.request = record  # type: ignore[method-assign]
        return c

    def exports(self, c: Client):  # type: ignore[no-untyped-def]
        return [q for q in c.sent if "format" in q]  # type: ignore[attr-defined]

    def assert_split_equal(self, parts: int, **params) -> None:  # type: ignore[no-untyped-def]
        import pandas.testing as pdt

        one = Client(BASE, QUERY_KEY)
        for via in ("arrow", "parquet"):
            c = self.client(parts)
            split = c.get("etf/kline", via=via, **params)
            whole = one.get("etf/kline", via=via, parallel=1, **params)
            self.assertGreater(len(whole), 0)
            pdt.assert_frame_equal(split, whole, check_exact=True, obj="%s %s" % (via, params))
            ranges = [(q.get("date_from"), q.get("date_to")) for q in self.exports(c)]
            self.assertEqual(len(ranges), parts, ranges)
            self.assertEqual(len(set(ranges)), parts, ranges)

    def test_default_order_date_desc(self) -> None:
        self.assert_split_equal(3, source="pytest")

    def test_every_date_its_own_part_and_repeated_boundaries(self) -> None:
        # 40 parts asked for 23 dates: boundaries repeat (100 rows a date) and are merged. The
        # last boundary is the earliest date, so the last range (before it) is empty: an empty
        # Arrow stream / Parquet file joined like the others.
        import pandas.testing as pdt

        for via in ("arrow", "parquet"):
            c = self.client(40)
            split = c.get("etf/kline", via=via, source="pytest")
            whole = Client(BASE, QUERY_KEY).get("etf/kline", via=via, parallel=1, source="pytest")
            pdt.assert_frame_equal(split, whole, check_exact=True, obj=via)
            exports = self.exports(c)
            self.assertEqual(len(exports), len(DAYS) + 1)
            self.assertEqual(exports[-1].get("date_to"), "2023-12-31")

    def test_ascending_within_the_users_range_and_fields_without_the_date(self) -> None:
        self.assert_split_equal(
            3, sort="date", order="asc", date_from=DAYS[3], date_to=DAYS[19], fields=["code", "close", "open"]
        )

    def test_explicit_date_sort_and_other_filters(self) -> None:
        self.assert_split_equal(2, sort="date", code=CODES[:1][0], date_from=DAYS[0])
        self.assert_split_equal(2, sort="date", order="desc", date_to=DAYS[10])

    def test_arrow_table_and_polars_equal_too(self) -> None:
        one = Client(BASE, QUERY_KEY)
        self.assertTrue(self.client(3).get("etf/kline", as_="arrow", source="pytest").equals(
            one.get("etf/kline", as_="arrow", parallel=1, source="pytest")))
        if HAS_POLARS:
            self.assertTrue(self.client(3).get("etf/kline", as_="polars", via="parquet", source="pytest").equals(
                one.get("etf/kline", as_="polars", via="parquet", parallel=1, source="pytest")))

    def test_falls_back_to_one_download(self) -> None:
        cases = [
            ("etf/kline", {"sort": "close"}),  # another field's order: a date range is not contiguous
            ("etf/kline", {"sort": "code", "order": "asc"}),
            ("etf/kline", {"interval": "1M"}),  # a bar spans dates
            ("etf/kline", {"adjust": "hfq"}),  # not a row filter
            ("etf/kline", {"as_of": "2030-01-01T00:00:00Z"}),
            ("us/13f-holdings", {}),  # default sort value_usd desc
            ("etf/basic", {}),  # no date range filter
        ]
        for path, params in cases:
            c = self.client(3)
            try:
                c.get(path, via="arrow", **params)
            except MissingFactors:
                pass  # adjust without factors is refused after the one download, unsplit
            # One request: the download, not even a probe.
            self.assertEqual(len(c.sent), 1, params)  # type: ignore[attr-defined]
            self.assertEqual(len(self.exports(c)), 1, params)
        # A service that does not name the range field (x-mds-field): no split.
        c = self.client(3)
        c.dataset("etf/kline").range_field = None
        self.assertEqual(len(c.get("etf/kline", via="arrow", source="pytest")), 2300)
        self.assertEqual(len(c.sent), 1)  # type: ignore[attr-defined]

    def test_small_pulls_and_parallel_1_are_one_download(self) -> None:
        small = self.client(2)
        small.parallel_min_rows = 100_000  # the default
        self.assertEqual(len(small.get("etf/kline", source="pytest")), 2300)
        self.assertEqual([q.get("limit") for q in small.sent], ["1", None])  # type: ignore[attr-defined]
        c = self.client(3)
        c.get("etf/kline", source="pytest", parallel=1)
        self.assertEqual(len(c.sent), 1)  # type: ignore[attr-defined]

    def test_a_batch_between_the_parts_means_one_download_again(self) -> None:
        import pandas.testing as pdt

        c = self.client(2)
        download = c._download_one
        pushed = []

        def racing(info, query, fmt):  # type: ignore[no-untyped-def]
            if not pushed:  # a batch lands after the plan, before the first part is read
                pushed.append(1)
                Client(BASE, ingest_key=INGEST_KEY).push(
                    "etf_daily",
                    [{"symbol": "577777", "date": DAYS[5], "close": 1.0, "volume": 1.0,
                      "updated_at": "2024-02-01T08:00:00Z"}],
                    source="race",
                )
            return download(info, query, fmt)

        c._download_one = racing  # type: ignore[method-assign]
        got = c.get("etf/kline", via="arrow", date_from=DAYS[0])
        self.assertIn("577777", set(got["code"]))
        self.assertEqual(len(self.exports(c)), 3)  # two parts, then the whole again
        self.assertNotIn("date_to", self.exports(c)[-1])
        pdt.assert_frame_equal(got, Client(BASE, QUERY_KEY).get("etf/kline", via="arrow", parallel=1, date_from=DAYS[0]))


@unittest.skipUnless(HAS_POLARS, SKIP_POLARS)
class PolarsTests(unittest.TestCase):
    def test_polars_dtypes(self) -> None:
        import polars as pl

        client = Client(BASE, QUERY_KEY)
        df = client.get("etf/kline", as_="polars", via="json", code="510003")
        self.assertEqual(df.schema["date"], pl.Date)
        self.assertEqual(df.schema["close"], pl.Float64)
        self.assertEqual(df.schema["updated_at"], pl.Datetime("ms", "UTC"))
        if HAS_PYARROW:
            by_arrow = client.get("etf/kline", as_="polars", via="arrow", code="510003")
            self.assertTrue(by_arrow.equals(df))


if __name__ == "__main__":
    unittest.main()


def _counting(client: Client) -> list:
    """Every HTTP request the client makes from now on: (method, path, params, status)."""
    calls: list = []
    send = client._http.request

    def request(method, path, headers, params=None, body=None):  # type: ignore[no-untyped-def]
        res = send(method, path, headers, params, body)
        calls.append((method, path, list(params or []), res.status))
        return res

    client._http.request = request  # type: ignore[method-assign]
    return calls


def calendar_rows():
    """SSE, 2024-01-01 … 2024-01-31: weekends and New Year's Day closed."""
    out = []
    for i in range(31):
        day = dt.date(2024, 1, 1) + dt.timedelta(days=i)
        is_open = 0 if day.weekday() >= 5 or i == 0 else 1
        out.append({"exchange": "SSE", "date": day.isoformat(), "is_open": is_open, "source": "sse"})
    return out


class QuantTests(unittest.TestCase):
    """Issue 27: many codes, codes as users write them, push what you pulled, panels, trading
    days, progress and the disk cache — against the live service."""

    @classmethod
    def setUpClass(cls) -> None:
        Client(BASE, QUERY_KEY, ingest_key=INGEST_KEY).push("trade_calendar", calendar_rows())

    def setUp(self) -> None:
        self.client = Client(BASE, QUERY_KEY, ingest_key=INGEST_KEY)

    def test_units_in_the_schema(self) -> None:
        units = self.client.dataset("etf/kline").units
        self.assertEqual((units["close"], units["volume"], units["pct_chg"]), ("CNY", "shares", "%"))
        self.assertEqual(self.client.dataset("market/fx").units["close"], "quote currency")

    def test_many_codes_and_their_spellings_in_one_request(self) -> None:
        calls = _counting(self.client)
        rows = self.client.get("etf/kline", as_="records", code=["510001", "510002"], date_from="20240101")
        self.assertEqual(len(rows), 46)
        calls = [c for c in calls if c[1] == "/api/v1/etf/kline"]
        self.assertEqual(len(calls), 1)
        self.assertEqual([p for p in calls[0][2] if p[0] == "code"], [("code", "510001"), ("code", "510002")])
        spelled = self.client.get("etf/kline", as_="records", code="510001.SH,sh510002")
        self.assertEqual(sorted((r["code"], r["date"]) for r in spelled), sorted((r["code"], r["date"]) for r in rows))

    def test_pushes_records_as_pulled(self) -> None:
        pulled = self.client.get("etf/kline", as_="records", code="510004")
        for r in pulled:
            r["code"] = "577004"
        statuses = self.client.push("etf_daily", pulled, source="round-trip")
        self.assertEqual([s["status"] for s in statuses], ["accepted"])
        back = self.client.get("etf/kline", as_="records", code="577004")
        self.assertEqual(len(back), 23)
        self.assertEqual({r["source"] for r in back}, {"round-trip"})  # source= is every row's
        by_date = {r["date"]: r for r in pulled}
        for r in back:
            for k in ("open", "close", "volume", "updated_at"):
                self.assertEqual(r[k], by_date[r["date"]][k], k)

    @unittest.skipUnless(HAS_PANDAS, SKIP_PANDAS)
    def test_pushes_a_frame_exactly_as_get_returned_it(self) -> None:
        df = self.client.get("etf/kline", code="510006", via="json")
        df["code"] = "577006"
        df["source"] = "round-trip-frame"
        (status,) = self.client.push("etf_daily", df)
        self.assertEqual((status["status"], status["accepted"]), ("accepted", 23))
        back = self.client.get("etf/kline", code="577006", via="json")
        cols = ["date", "open", "close", "volume", "source", "updated_at"]
        import pandas.testing as pdt

        pdt.assert_frame_equal(back[cols], df[cols], check_dtype=False)  # source: object vs str after assignment
        self.assertEqual(back.dtypes["date"], df.dtypes["date"])
        # Pushed again: the same content-derived ids and idempotency keys, nothing written.
        self.assertEqual(self.client.push("etf_daily", df)[0]["status"], "duplicate")

    def test_rows_are_checked_before_anything_is_sent(self) -> None:
        calls = _counting(self.client)
        good = {"symbol": "577100", "date": "2024-01-02", "close": 1.0, "volume": 1.0, "source": "chk"}
        with self.assertRaises(InvalidRows) as e:
            self.client.push("etf_daily", [dict(good, colse=1.0)])
        self.assertIn("unknown column(s) for etf_daily: colse", e.exception.message)
        with self.assertRaises(InvalidRows) as e:
            self.client.push("etf_daily", [good, {k: v for k, v in good.items() if k != "symbol"}, dict(good, close="abc")])
        self.assertEqual(
            e.exception.problems,
            ["row 1: symbol (or code) is required", "row 2: close must be a number (got 'abc')"],
        )
        self.assertEqual([c for c in calls if c[0] == "POST"], [])

    def test_updated_at_is_filled_with_the_push_time_and_said(self) -> None:
        row = {"symbol": "577200", "date": "2024-01-02", "close": 1.0, "volume": 100.0, "source": "plain"}
        before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
        with self.assertWarnsRegex(UserWarning, "updated_at was absent on 1 of 1 rows; set to the push time"):
            (status,) = self.client.push("etf_daily", [row])
        self.assertEqual(status["status"], "accepted")
        (back,) = self.client.get("etf/kline", as_="records", code="577200")
        stamped = dt.datetime.fromisoformat(back["updated_at"].replace("Z", "+00:00"))
        self.assertGreaterEqual(stamped, before)

    @unittest.skipUnless(HAS_PANDAS, SKIP_PANDAS)
    def test_panel_one_request_per_chunk(self) -> None:
        calls = _counting(self.client)
        wide = self.client.panel(["510001", "510002.SH", "sh510003"], "close", chunk=2, date_from="20240105")
        self.assertEqual(list(wide.columns), ["510001", "510002", "510003"])
        self.assertEqual(len(wide), 19)
        self.assertEqual(len([c for c in calls if c[1] == "/api/v1/etf/kline"]), 2)
        one = self.client.get("etf/kline", code="510002", date_from="2024-01-05", via="json").set_index("date")
        self.assertEqual(list(wide["510002"]), list(one["close"].sort_index()))
        self.assertEqual(str(wide.index.dtype), "datetime64[ns]")

    def test_trading_days_from_the_stored_calendar(self) -> None:
        days = self.client.trading_days("2024-01-01", "20240110")
        self.assertEqual([d.isoformat() for d in days][:3], ["2024-01-02", "2024-01-03", "2024-01-04"])
        self.assertEqual(len(days), 7)
        last = self.client.last_trading_days(3, end="2024-01-14")
        self.assertEqual([d.isoformat() for d in last], ["2024-01-10", "2024-01-11", "2024-01-12"])
        with self.assertWarnsRegex(UserWarning, "covers 2024-01-01 to 2024-01-31"):
            self.client.trading_days("2023-12-01", "2024-02-10")
        with self.assertRaises(BadRequest):
            self.client.last_trading_days(30, end="2024-01-14")
        # A calendar that stops before `end` cannot know the open days after it: said.
        with self.assertWarnsRegex(UserWarning, "SSE calendar ends on 2024-01-31, before 2024-02-10"):
            late = self.client.last_trading_days(2, end="2024-02-10")
        self.assertEqual([d.isoformat() for d in late], ["2024-01-30", "2024-01-31"])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            self.client.last_trading_days(2, end="2024-01-31")

    def test_progress_bar_on_stderr_with_tqdm(self) -> None:
        if importlib.util.find_spec("tqdm") is None:
            self.skipTest("tqdm is not installed: progress bar test SKIPPED")
        import contextlib
        import io

        from mds_client import _progress

        err = io.StringIO()
        delay, _progress.DELAY = _progress.DELAY, 0.0
        try:
            with contextlib.redirect_stderr(err):
                Client(BASE, QUERY_KEY, progress=True).get("etf/kline", as_="records", via="json")
        finally:
            _progress.DELAY = delay
        self.assertIn("etf_daily", err.getvalue())
        self.assertIn("rows", err.getvalue())

    def test_json_pull_without_a_progress_bar(self) -> None:
        # The silent bar (progress=False, or tqdm not installed) is given the total the JSON
        # paging learns from its first page: it once had no `total` and every such pull failed.
        rows = Client(BASE, QUERY_KEY, progress=False).get("etf/kline", as_="records", via="json")
        self.assertEqual(rows, Client(BASE, QUERY_KEY).get("etf/kline", as_="records", via="json"))
        self.assertGreater(len(rows), 0)

    def test_disk_cache_revalidates_and_keeps_as_of_answers(self) -> None:
        directory = tempfile.mkdtemp(prefix="mds-cache-", dir=_tmp)
        client = Client(BASE, QUERY_KEY, cache_dir=directory)
        calls = _counting(client)
        first = client.get("etf/kline", as_="records", via="json", code="510009")
        again = client.get("etf/kline", as_="records", via="json", code="510009")
        self.assertEqual(again, first)
        self.assertEqual([c[3] for c in calls if c[1] == "/api/v1/etf/kline"], [200, 304])
        past = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
        at = client.get("etf/kline", as_="records", via="json", code="510009", as_of=past)
        n = len(calls)
        self.assertEqual(client.get("etf/kline", as_="records", via="json", code="510009", as_of=past), at)
        self.assertEqual(len(calls), n)  # served from disk: no request at all


ADJ_DAYS = ["2024-04-0%d" % d for d in range(1, 6)]
STAMP = "2024-04-06T00:00:00.000Z"


def adjust_rows():
    """etf_daily bars of 588001 (factors from its own source, a 1:2 split on 04-03), 588002 (no
    factors) and 588003 (factors only from another source); and stock_minute bars of 600519
    with +08:00 times, as the service answers them."""
    bars = []
    for code in ("588001", "588002", "588003"):
        for i, day in enumerate(ADJ_DAYS):
            close = 10.0 + i if code != "588001" or i < 2 else (10.0 + i) / 2
            bars.append({"symbol": code, "date": day, "close": close, "volume": 100.0, "source": "adj", "updated_at": STAMP})
    factors = [
        {"symbol": "588001", "date": "2024-04-01", "adj_factor": 1.0, "source": "adj", "updated_at": STAMP},
        {"symbol": "588001", "date": "2024-04-03", "adj_factor": 2.0, "source": "adj", "updated_at": STAMP},
        {"symbol": "588003", "date": "2024-04-01", "adj_factor": 1.0, "source": "other", "updated_at": STAMP},
    ]
    minute = [
        {
            "symbol": "600519", "date": "2024-03-01", "time": "2024-03-01T09:3%d:00+08:00" % m,
            "open": 10.0, "high": 11.0, "low": 9.0, "close": 10.0 + m, "volume": 100.0,
            "amount": 1000.0, "source": "adj", "updated_at": "2024-03-01T07:00:00.250Z",
        }
        for m in (1, 2, 3)
    ]
    return bars, factors, minute


class AdjustTests(unittest.TestCase):
    """An adjusted read never hides the codes it returned as traded (every adjust
    mode, JSON pages and exports, get, panel and pages)."""

    @classmethod
    def setUpClass(cls) -> None:
        client = Client(BASE, QUERY_KEY, ingest_key=INGEST_KEY)
        bars, factors, _ = adjust_rows()
        client.push("etf_daily", bars, fill_updated_at=False)
        time.sleep(0.05)
        cls.before_factors = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        time.sleep(0.05)
        client.push("adj_factor", factors, fill_updated_at=False)

    def setUp(self) -> None:
        self.client = Client(BASE, QUERY_KEY, progress=False)

    def vias(self) -> list:
        return ["json", "arrow", "parquet"] if HAS_PYARROW else ["json"]

    def test_raises_naming_the_codes_without_factors(self) -> None:
        for adjust in ("qfq", "hfq"):
            for via in self.vias():
                for as_ in ["records"] + (["pandas"] if HAS_PANDAS else []):
                    with self.subTest(adjust=adjust, via=via, as_=as_):
                        with self.assertRaises(MissingFactors) as e:
                            self.client.get("etf/kline", as_=as_, via=via, code=["588001", "588002"], adjust=adjust)
                        self.assertEqual((e.exception.codes, e.exception.method), (["588002"], adjust))
                        self.assertIn("adjust=%s: no factors for 588002, returned as traded" % adjust, str(e.exception))
                        self.assertIn("allow_unadjusted=True", str(e.exception))

    def test_allowed_it_warns_and_returns_every_row(self) -> None:
        for via in self.vias():
            with self.subTest(via=via):
                with self.assertWarnsRegex(UserWarning, "adjust=qfq: no factors for 588002"):
                    rows = self.client.get(
                        "etf/kline", as_="records", via=via, code="588001,588002", adjust="qfq", allow_unadjusted=True
                    )
                by = {(r["code"], r["date"]): r["close"] for r in rows}
                self.assertEqual(len(by), 10)
                self.assertEqual(by[("588002", "2024-04-01")], 10.0)  # as traded
                self.assertEqual(by[("588001", "2024-04-01")], 5.0)  # adjusted: 10 × 1 ÷ 2

    def test_codes_with_factors_say_nothing(self) -> None:
        for via in self.vias():
            with self.subTest(via=via), warnings.catch_warnings():
                warnings.simplefilter("error")
                # 588003's only factor source is another one: the service adjusts with it.
                rows = self.client.get("etf/kline", as_="records", via=via, code="588001,588003", adjust="hfq")
                self.assertEqual(len(rows), 10)
                self.assertEqual(len(self.client.get("etf/kline", as_="records", via=via, code="588002")), 5)

    def test_adjust_source_and_as_of_as_the_service_judges_them(self) -> None:
        for via in self.vias():
            with self.subTest(via=via):
                with self.assertRaises(MissingFactors) as e:
                    self.client.get("etf/kline", as_="records", via=via, code="588001,588003", adjust="qfq", adjust_source="adj")
                self.assertEqual(e.exception.codes, ["588003"])
                with self.assertRaises(MissingFactors) as e:
                    self.client.get(
                        "etf/kline", as_="records", via=via, code="588001", adjust="hfq", as_of=self.before_factors
                    )
                self.assertEqual(e.exception.codes, ["588001"])

    @unittest.skipUnless(HAS_PYARROW, SKIP_PYARROW)
    def test_exports_with_many_factor_rows_and_fields_without_the_code(self) -> None:
        from mds_client import client as module

        page = module._PAGE
        module._PAGE = 1  # a chunk of codes with more factor rows than a page: asked again without those seen
        try:
            calls = _counting(self.client)
            with self.assertRaises(MissingFactors) as e:
                self.client.get("etf/kline", as_="arrow", via="arrow", code="588001,588002,588003", adjust="qfq")
            self.assertEqual(e.exception.codes, ["588002"])
            probes = [[p for p in c[2] if p[0] == "code"] for c in calls if c[1] == "/api/v1/market/adj-factor"]
            # Newest first: 588001's 04-03 factor, then the codes not yet seen, until a page holds the rest.
            self.assertEqual(
                probes,
                [[("code", "588001"), ("code", "588002"), ("code", "588003")], [("code", "588002"), ("code", "588003")]],
            )
        finally:
            module._PAGE = page
        table = self.client.get(
            "etf/kline", as_="arrow", via="arrow", code="588001,588002", adjust="qfq", fields="date,close",
            allow_unadjusted=True,
        )
        self.assertEqual(table.column_names, ["date", "close"])  # the code was asked for the check only

    @unittest.skipUnless(HAS_PANDAS, SKIP_PANDAS)
    def test_panel_and_pages(self) -> None:
        with self.assertRaises(MissingFactors) as e:
            self.client.panel(["588001", "588002"], "close", adjust="qfq")
        self.assertEqual(e.exception.codes, ["588002"])
        with self.assertWarns(UserWarning):
            wide = self.client.panel(["588001", "588002"], "close", adjust="qfq", allow_unadjusted=True)
        self.assertEqual(list(wide["588001"]), [5.0, 5.5, 6.0, 6.5, 7.0])
        with self.assertRaises(MissingFactors):
            list(self.client.pages("etf/kline", code="588002", adjust="hfq"))
        with self.assertWarns(UserWarning):
            pages = list(self.client.pages("etf/kline", code="588002", adjust="hfq", allow_unadjusted=True))
        self.assertEqual(sum(len(p) for p in pages), 5)

    @unittest.skipUnless(HAS_PANDAS, SKIP_PANDAS)
    def test_panel_with_two_sources_names_both_ways_out(self) -> None:
        Client(BASE, QUERY_KEY, ingest_key=INGEST_KEY).push(
            "etf_daily", [{"symbol": "588002", "date": ADJ_DAYS[0], "close": 10.0, "volume": 1.0, "source": "adj2", "updated_at": STAMP}],
            fill_updated_at=False,
        )
        with self.assertRaises(BadRequest) as e:
            self.client.panel(["588002"], "close")
        self.assertIn("give source=… to keep one source, or source_priority=a,b,…", str(e.exception))
        wide = self.client.panel(["588002"], "close", source_priority="adj2,adj")
        self.assertEqual(len(wide), 5)


class MinuteFrameTests(unittest.TestCase):
    """Minute bars' times carry an offset (+08:00): every frame path parses them."""

    @classmethod
    def setUpClass(cls) -> None:
        Client(BASE, QUERY_KEY, ingest_key=INGEST_KEY).push("stock_minute", adjust_rows()[2])

    def setUp(self) -> None:
        self.client = Client(BASE, QUERY_KEY, progress=False)

    @unittest.skipUnless(HAS_POLARS, SKIP_POLARS)
    def test_polars_over_json_equals_the_arrow_download(self) -> None:
        import polars as pl

        df = self.client.get("stock/minute", as_="polars", via="json", code="600519")
        self.assertEqual(df.schema["time"], pl.Datetime("ms", "UTC"))
        self.assertEqual(df.schema["updated_at"], pl.Datetime("ms", "UTC"))
        self.assertEqual(
            sorted(t.isoformat() for t in df["time"].to_list()),
            ["2024-03-01T01:31:00+00:00", "2024-03-01T01:32:00+00:00", "2024-03-01T01:33:00+00:00"],
        )
        self.assertEqual(df["updated_at"].to_list()[0].isoformat(), "2024-03-01T07:00:00.250000+00:00")
        if HAS_PYARROW:
            for via in ("arrow", "parquet"):
                self.assertTrue(self.client.get("stock/minute", as_="polars", via=via, code="600519").equals(df), via)

    @unittest.skipUnless(HAS_PANDAS, SKIP_PANDAS)
    def test_pandas_and_arrow_over_json_equal_the_downloads(self) -> None:
        import pandas.testing as pdt

        df = self.client.get("stock/minute", via="json", code="600519")
        self.assertEqual(str(df.dtypes["time"]), "datetime64[ns, UTC]")
        self.assertEqual(df["time"].iloc[-1].isoformat(), "2024-03-01T01:31:00+00:00")
        if HAS_PYARROW:
            for via in ("arrow", "parquet"):
                pdt.assert_frame_equal(self.client.get("stock/minute", via=via, code="600519"), df)
            table = self.client.get("stock/minute", as_="arrow", via="json", code="600519")
            self.assertEqual(table.column("time").to_pylist()[-1].isoformat(), "2024-03-01T01:31:00+00:00")
