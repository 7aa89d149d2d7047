"""The client: read datasets into DataFrames, push rows as schema-3.0 batches."""

from __future__ import annotations

import datetime as _dt
import io
import json
import re
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _progress
from . import batches as _batches
from . import frames
from ._cache import DiskCache, immutable
from ._http import Response, Transport
from .errors import BadRequest, BatchRejected, MdsError, MissingFactors
from .schema import DatasetInfo, datasets_from_openapi

_PAGE = 1000
#: Codes per request when an adjusted export's codes are looked up in the factor dataset.
_FACTOR_CHUNK = 100
_PAGING = ("limit", "offset", "cursor")


def _has(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def _param(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (_dt.date, _dt.datetime)):
        return v.isoformat()[:10] if not isinstance(v, _dt.datetime) else v.isoformat()
    if hasattr(v, "isoformat") and hasattr(v, "to_pydatetime"):  # pandas.Timestamp
        return _param(v.to_pydatetime())
    if isinstance(v, (list, tuple, set)):
        return ",".join(_param(x) for x in v)
    return str(v)


def _query(params: Dict[str, Any]) -> List[Tuple[str, str]]:
    """Keyword parameters as query pairs: ``fields`` a comma list; any other list (an exact
    filter's values, ``code=["510300", "510500"]``) one pair per value (repeated parameters)."""
    out: List[Tuple[str, str]] = []
    for k, v in params.items():
        if v is None:
            continue
        if isinstance(v, (list, tuple, set)) and k != "fields":
            out.extend((k, _param(x)) for x in v)
        else:
            out.append((k, _param(v)))
    return out


def _has_value(row: Any, name: str) -> bool:
    v = row.get(name) if hasattr(row, "get") else None
    return v is not None and not _batches._missing(v)


def _adjust_of(params: Dict[str, Any]) -> Optional[str]:
    """``qfq`` / ``hfq`` when the request adjusts prices; None for ``none`` or no ``adjust``."""
    v = params.get("adjust")
    return str(v) if v is not None and str(v) != "none" else None


def _note_without_factors(body: Dict[str, Any], into: List[str]) -> None:
    """Adds a page's ``meta.adjust.codes_without_factors`` to ``into``, each code once."""
    adjust = (body.get("meta") or {}).get("adjust") or {}
    for c in adjust.get("codes_without_factors") or []:
        if c not in into:
            into.append(c)


def _compact(d: str) -> str:
    """YYYYMMDD → YYYY-MM-DD (as the service takes both)."""
    return "%s-%s-%s" % (d[:4], d[4:6], d[6:8]) if len(d) == 8 and d.isdigit() else d


_CN_CODE = re.compile(r"^(?:(?:sh|sz|bj)\.?(\d{6})|(\d{6})\.(?:sh|sz|bj|ss|xshg|xshe))$", re.IGNORECASE)


def _stored_code(asked: str) -> str:
    """A CN code as the service stores it (src/query/codes.ts): 510300.SH, sh510300 → 510300."""
    m = _CN_CODE.match(asked)
    return (m.group(1) or m.group(2)) if m else asked


def _now_iso() -> str:
    now = _dt.datetime.now(_dt.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (now.microsecond // 1000)


def _etag_version(etag: Optional[str]) -> Optional[str]:
    """The dataset version part of a query answer's ETag, ``W/"<version>-<16 characters>"``
    (the version key, then a hash of the request): equal for two requests exactly when they
    read the same state of the dataset. None for any other form."""
    if not etag or not etag.startswith('W/"') or not etag.endswith('"'):
        return None
    inner = etag[3:-1]
    if len(inner) < 18 or inner[-17] != "-":
        return None
    return inner[:-17]


class Client:
    """A client for one market-data-service.

    Example::

        from mds_client import Client
        client = Client("http://localhost:8080", "mds_q_…", ingest_key="mds_i_…")
        df = client.get("etf/kline", code="510300", date_from="2024-01-01")
        client.push("etf_daily", df_new_rows, source="eastmoney")

    Args:
        base_url: the service's address, e.g. ``http://localhost:8080``.
        key: a query key (header ``Q-API-KEY``); needed for :meth:`get`.
        ingest_key: an ingest key (header ``UP-API-KEY``); needed for :meth:`push` and
            :meth:`batch`.
        timeout: seconds per HTTP request.
        max_retries: retries of a request on network errors, 5xx, rate limits (403/4030,
            429) and batches in progress (409/4091).
        max_wait: the longest single wait (``Retry-After``) the client accepts before raising
            :class:`~mds_client.RateLimited` instead.
        parallel: how many requests an Arrow/Parquet pull may be split into, fetched at once
            (the default for :meth:`get`); 1: always one download. See docs/python-client.md.
        parallel_min_rows: the fewest rows worth a request of their own: a pull is split into
            at most ``total // parallel_min_rows`` parts, so smaller pulls stay one download.
        progress: progress bars (tqdm) for pulls and pushes that take more than 2 seconds;
            None (default): when tqdm is installed; False: never; True: always (needs tqdm).
        cache_dir: a directory for a disk cache of query answers (opt-in): answers the service
            marks immutable (an ``as_of`` at or before the dataset's last change) are served
            from it without a request, others are revalidated by their ETag (a 304 costs no
            body). See docs/python-client.md.
    """

    def __init__(
        self,
        base_url: str,
        key: Optional[str] = None,
        *,
        ingest_key: Optional[str] = None,
        timeout: float = 300.0,
        max_retries: int = 5,
        max_wait: float = 120.0,
        parallel: int = 2,
        parallel_min_rows: int = 100_000,
        progress: Optional[bool] = None,
        cache_dir: Optional[str] = None,
    ) -> None:
        self.key = key
        self.progress = progress
        self._cache = DiskCache(cache_dir) if cache_dir else None
        self.parallel = parallel
        self.parallel_min_rows = parallel_min_rows
        self.ingest_key = ingest_key
        self._http = Transport(base_url, timeout=timeout, max_retries=max_retries, max_wait=max_wait)
        self._datasets: Optional[Dict[str, DatasetInfo]] = None

    # ------------------------------------------------------------------ metadata

    @property
    def rate_limit(self) -> Dict[str, Dict[str, int]]:
        """The last ``RateLimit`` header, e.g. ``{"minute": {"r": 599, "t": 42}}``."""
        return self._http.rate_limit

    def datasets(self) -> Dict[str, DatasetInfo]:
        """Every dataset the service serves, read once from ``/openapi.json``."""
        if self._datasets is None:
            doc = self._http.request("GET", "/openapi.json", {}).json()
            self._datasets = datasets_from_openapi(doc)
        return self._datasets

    def dataset(self, name_or_path: str) -> DatasetInfo:
        """A dataset by name (``etf_daily``) or path (``etf/kline``, ``/api/v1/etf/kline``)."""
        all_ = self.datasets()
        if name_or_path in all_:
            return all_[name_or_path]
        path = name_or_path if name_or_path.startswith("/") else "/api/v1/" + name_or_path.strip("/")
        for info in all_.values():
            if info.path == path:
                return info
        raise BadRequest("unknown dataset or path %r; datasets: %s" % (name_or_path, ", ".join(sorted(all_))), code=4001)

    # ------------------------------------------------------------------ reading

    def _query_headers(self) -> Dict[str, str]:
        if not self.key:
            raise MdsError("a query key is needed: Client(base_url, key)", code=4010)
        return {"Q-API-KEY": self.key}

    def get(
        self,
        path: str,
        as_: str = "pandas",
        via: str = "auto",
        parallel: Optional[int] = None,
        *,
        allow_unadjusted: bool = False,
        **params: Any,
    ) -> Any:
        """Every row of a query, as a DataFrame (or records, or an Arrow table).

        Args:
            path: a dataset's path (``"etf/kline"``) or name (``"etf_daily"``).
            as_: ``"pandas"`` (default), ``"polars"``, ``"records"`` (a list of dicts, values as
                in the JSON answer) or ``"arrow"`` (a ``pyarrow.Table``).
            via: ``"json"`` pages the JSON API with ``cursor`` until the last page;
                ``"arrow"`` or ``"parquet"`` download the whole result in one request (needs
                pyarrow); ``"auto"`` (default) downloads Arrow when pyarrow is installed and
                a DataFrame or table is asked for, and pages JSON otherwise.
            parallel: for Arrow/Parquet, split a large pull into up to this many date ranges
                fetched at once and joined in order (default: the client's ``parallel``, 2);
                the result is the same as one download's. 1: one download.
            **params: the endpoint's filters and common parameters (``code="510300"``,
                ``date_from="2024-01-01"``, ``fields=["date", "close"]``, ``sort``, ``order``).
                With ``limit``, ``offset`` or ``cursor`` only that one page is fetched. A pull by
                code that several sources pushed has a row per source and date: pass
                ``source_priority="eastmoney,tushare"`` for one row per date (the first listed
                source that has it), e.g. before a pivot.
            allow_unadjusted: with ``adjust="qfq"`` or ``"hfq"``, codes of the answer without
                factors are returned as traded: by default that raises
                :class:`~mds_client.MissingFactors` naming them (a frame mixing adjusted and
                raw prices is wrong research data); True returns the rows and warns instead.

        Dtypes come from the OpenAPI document: dates → datetime64, timestamps → UTC
        datetimes, numbers → float64, integers → Int64, flags → Int8 (see docs/python-client.md).
        """
        info = self.dataset(path)
        query = _query(params)
        names = [n.strip() for n in dict(query).get("fields", "").split(",") if n.strip()]
        fields = [f for f in (info.row_field(n) for n in names) if f] if names else info.row_fields
        latest = params.get("latest_on") is not None
        if not latest:
            # Only a cross-section's rows carry it (docs/universes.md).
            fields = [f for f in fields if f.name != "stale_days"]
        single_page = any(k in params for k in _PAGING)
        adjust = _adjust_of(params)
        if via == "auto":
            # A cross-section answers as JSON pages only (at most a row per code and source).
            via = "arrow" if (_has("pyarrow") and as_ != "records" and not single_page and not latest) else "json"
        if via in ("arrow", "parquet"):
            if single_page:
                raise BadRequest("limit/offset/cursor page the JSON answer; use via='json'", code=4001)
            code = info.code_filters[0] if adjust and info.code_filters else None
            extra = code is not None and bool(names) and code not in names
            if extra:
                # The codes of the answer are needed to tell which have factors: asked, then dropped.
                query = [(k, v + "," + str(code) if k == "fields" else v) for k, v in query]
            table = self._download(info, query, via, self.parallel if parallel is None else parallel)
            if adjust and code is not None:
                codes = list(dict.fromkeys(str(c) for c in table.column(code).to_pylist()))
                self._unadjusted(adjust, self._without_factors(info, codes, params), allow_unadjusted)
                if extra:
                    table = table.select([n for n in table.column_names if n != code])
            if as_ == "arrow":
                return table
            if as_ == "polars":
                return frames.arrow_to_polars(table)
            if as_ == "records":
                return self._records_from_arrow(table)
            return frames.arrow_to_pandas(table, fields)
        if via != "json":
            raise ValueError("via must be 'auto', 'json', 'arrow' or 'parquet'")
        missing: List[str] = []
        records = self._pages(info, query, single_page, missing)
        if adjust:
            self._unadjusted(adjust, missing, allow_unadjusted)
        if records:
            # The row schema may list fields only some answers carry (interval bars'
            # period_start, bar_count): the columns are those of the rows returned.
            fields = [f for f in fields if f.name in records[0]]
        if as_ == "records":
            return records
        if as_ == "polars":
            return frames.polars_frame(records, fields)
        if as_ == "arrow":
            import pyarrow as pa

            return pa.Table.from_pandas(frames.pandas_frame(records, fields), preserve_index=False)
        return frames.pandas_frame(records, fields)

    def panel(
        self,
        codes: Optional[Sequence[str]],
        field: str = "close",
        path: str = "etf/kline",
        *,
        date_from: Any = None,
        date_to: Any = None,
        chunk: int = 200,
        universe: Optional[str] = None,
        **params: Any,
    ) -> Any:
        """A wide pandas frame of one field: a row per date, a column per code.

        One request per ``chunk`` codes (a comma list), not one per code; ``params`` are the
        endpoint's other parameters (``adjust="qfq"``, ``interval="1w"``, ``source``, ``as_of``).
        Codes may be written as the endpoint takes them (``510300.SH``); columns are named as
        stored (``510300``), in the order given. A date missing for a code is NaN. With
        ``adjust``, codes without factors raise :class:`~mds_client.MissingFactors` unless
        ``allow_unadjusted=True`` is among ``params`` (as in :meth:`get`).

        ``universe="000300"``: a survivorship-free panel — a cell only where its code was a
        member of the index on that date (NaN elsewhere). With ``codes=None`` the columns are
        every code that was a member at some time between ``date_from`` and ``date_to``
        (``index/members``), delisted ones included. See docs/universes.md.

        Example::

            closes = client.panel(["510300", "510500"], "close", adjust="qfq", date_from="20240101")
            returns = closes.pct_change()
            csi300 = client.panel(None, "close", "stock/daily", universe="000300", date_from="2024-01-01")
        """
        if chunk < 1:
            raise ValueError("chunk must be ≥ 1")
        if universe is not None:
            params["universe"] = universe
            if codes is None:
                codes = self._members_between(universe, date_from, date_to)
        if codes is None:
            raise ValueError("codes=None needs universe=: the index whose members are the columns")
        info = self.dataset(path)
        if not info.code_filters:
            raise BadRequest("%s has no code filter: panel() needs one" % info.path, code=4001)
        code = info.code_filters[0]
        date = info.range_field or "date"
        wanted = list(dict.fromkeys(str(c) for c in codes))
        frames_: List[Any] = []
        with _progress.bar(self.progress, len(wanted), info.name + " panel", "codes") as bar:
            for i in range(0, len(wanted), chunk):
                part = wanted[i : i + chunk]
                frames_.append(
                    self.get(
                        info.name,
                        **{code: ",".join(part)},
                        date_from=date_from,
                        date_to=date_to,
                        fields=[code, date, field],
                        **{"parallel": 1, **params},
                    )
                )
                bar.update(len(part))
        import pandas as pd

        long = pd.concat(frames_, ignore_index=True) if frames_ else pd.DataFrame(columns=[code, date, field])
        if long.duplicated([date, code]).any():
            raise BadRequest(
                "several rows per code and date (one per source?): give source=… to keep one source, or "
                "source_priority=a,b,… for one row per date from the first listed source that has it",
                code=4001,
            )
        wide = long.pivot(index=date, columns=code, values=field).sort_index()
        # Columns in the order asked, by stored form (510300.SH → 510300); codes with no rows as NaN.
        market = info.code_markets.get(code)
        order = [_stored_code(c) if market == "cn" else c for c in wanted]
        wide = wide.reindex(columns=list(dict.fromkeys(order)))
        wide.columns.name = code
        return wide

    def _members_between(self, index: str, date_from: Any, date_to: Any) -> List[str]:
        """The codes with a membership interval of ``index`` overlapping the span, in code order."""
        params: Dict[str, Any] = {"index_code": index, "fields": ["stock_code", "in_date", "out_date"]}
        if date_to is not None:
            params["date_to"] = date_to
        rows = self.get("index/members", as_="records", via="json", **params)
        lo = _compact(_param(date_from)[:10]) if date_from is not None else None
        codes = {r["stock_code"] for r in rows if lo is None or r["out_date"] is None or r["out_date"] >= lo}
        if not codes:
            raise BadRequest("index %s has no membership intervals in that span (index/members)" % index, code=4001)
        return sorted(codes)

    def universe(self, date: Any, index: Optional[str] = None, as_: str = "pandas", **params: Any) -> Any:
        """Who was there on ``date``: every A-share code listed that day (delisted-since codes
        included) or, with ``index``, every member of the index that day, with the name and ST
        state it had then, its listing dates and index weight (``GET /api/v1/universe``).

        ``params``: ``exchange``, ``board``, ``list_status``, ``include_st`` (bool), ``as_of``.
        What the service could not judge (a code without listing data, an index with neither
        membership intervals nor snapshots, a day outside the stored calendar) is raised as a
        :class:`UserWarning`, never dropped; the frame's ``attrs["meta"]`` (``as_="records"``:
        not kept) holds the answer's meta. See docs/universes.md.

        Example::

            members = client.universe("2020-01-02", index="000300")
            codes = members["code"].tolist()
        """
        query: Dict[str, Any] = {"date": date, **params}
        if index is not None:
            query["index"] = index
        if isinstance(query.get("include_st"), bool):
            query["include_st"] = "true" if query["include_st"] else "false"
        rows: List[Dict[str, Any]] = []
        meta: Dict[str, Any] = {}
        offset = 0
        while True:
            body = self._get_query("/api/v1/universe", _query({**query, "offset": offset})).json()
            rows.extend(body["data"])
            meta = body["meta"]
            if not meta.get("has_more"):
                break
            offset += len(body["data"])
        for w in meta.get("warnings", []):
            warnings.warn("universe on %s: %s" % (meta.get("date"), w), stacklevel=2)
        if as_ == "records":
            return rows
        import pandas as pd

        columns = ["code", "name", "exchange", "board", "list_date", "delist_date", "list_status", "is_st",
                   "index_code", "in_date", "weight"]
        df = pd.DataFrame(rows, columns=columns)
        for c in ("list_date", "delist_date", "in_date"):
            df[c] = pd.to_datetime(df[c])
        df["weight"] = df["weight"].astype("float64")
        df["is_st"] = df["is_st"].astype("boolean")
        df.attrs["meta"] = {k: v for k, v in meta.items() if k not in ("limit", "offset", "has_more", "next_cursor")}
        return df

    def cross_section(
        self, date: Any, path: str = "stock/daily", *, universe: Optional[str] = None, **params: Any
    ) -> Any:
        """A cross-section as of ``date``: for each code (and source) of ``path``, its last row
        on or before ``date`` (``latest_on``), with ``stale_days`` — the trading days between
        that row and ``date``, so suspended and delisted codes are there and marked.

        ``universe="000300"``: the members of the index on ``date``, each with its last row —
        suspended members included. ``params``: the endpoint's others (``adjust="qfq"``,
        ``max_stale_days=5``, ``code``, ``source``, ``fields``, ``as_of``). What the service could
        not judge (a day outside the stored calendar, rows left out by ``max_stale_days``) is a
        :class:`UserWarning`; the answer's ``meta.latest_on`` is in ``df.attrs["latest_on"]``.

        Example::

            last = client.cross_section("2024-06-28", universe="000300", adjust="qfq")
            stale = last[last["stale_days"] > 0]
        """
        info = self.dataset(path)
        query = _query({"latest_on": date, "universe": universe, **params})
        records: List[Dict[str, Any]] = []
        meta: Dict[str, Any] = {}
        cursor: Optional[str] = None
        while True:
            q = query + [("limit", str(_PAGE))] + ([("cursor", cursor)] if cursor else [])
            body = self._get_query(info.path, q).json()
            records.extend(body["data"])
            meta = body.get("meta", {})
            cursor = meta.get("next_cursor")
            if not cursor:
                break
        latest = meta.get("latest_on") or {}
        for w in latest.get("warnings", []):
            warnings.warn("cross_section on %s: %s" % (latest.get("date"), w), stacklevel=2)
        if latest.get("left_out"):
            warnings.warn(
                "cross_section on %s: %d row(s) left out as staler than max_stale_days=%s"
                % (latest.get("date"), latest["left_out"], latest.get("max_stale_days")),
                stacklevel=2,
            )
        fields = [f for f in info.row_fields if not records or f.name in records[0]]
        df = frames.pandas_frame(records, fields)
        df.attrs["latest_on"] = latest
        return df

    def trading_days(
        self, start: Any, end: Any, exchange: str = "SSE", source: Optional[str] = None
    ) -> List[_dt.date]:
        """The open days of ``exchange`` from ``start`` to ``end`` (both included), from the
        stored trading calendar (``market/trade-calendar``). Warns when the stored calendar does
        not cover the whole span (days outside it cannot be known)."""
        rows = self.get(
            "market/trade-calendar",
            as_="records",
            via="json",
            exchange=exchange,
            date_from=start,
            date_to=end,
            source=source,
            fields=["date", "is_open"],
            sort="date",
            order="asc",
        )
        if not rows:
            warnings.warn("no stored %s calendar between %s and %s" % (exchange, _param(start), _param(end)), stacklevel=2)
            return []
        lo = _dt.date.fromisoformat(_compact(_param(start)[:10]))
        hi = _dt.date.fromisoformat(_compact(_param(end)[:10]))
        first, last = _dt.date.fromisoformat(rows[0]["date"]), _dt.date.fromisoformat(rows[-1]["date"])
        if first > lo or last < hi:
            warnings.warn(
                "the stored %s calendar covers %s to %s of the %s to %s asked: days outside it are unknown"
                % (exchange, first, last, lo, hi),
                stacklevel=2,
            )
        return [_dt.date.fromisoformat(r["date"]) for r in rows if r["is_open"] == 1]

    def last_trading_days(
        self, n: int, end: Any = None, exchange: str = "SSE", source: Optional[str] = None
    ) -> List[_dt.date]:
        """The last ``n`` open days of ``exchange`` on or before ``end`` (default: today, UTC),
        oldest first, from the stored trading calendar. Raises when it holds fewer; warns when
        the stored calendar ends before ``end`` (open days after its last day are unknown, so
        the days returned may not be the last ones)."""
        if n < 1:
            raise ValueError("n must be ≥ 1")
        end = end if end is not None else _dt.datetime.now(_dt.timezone.utc).date()
        reach = self.get(
            "market/trade-calendar", as_="records", via="json", exchange=exchange, source=source,
            date_from=end, fields=["date"], limit=1,
        )
        if not reach:
            last = self.get(
                "market/trade-calendar", as_="records", via="json", exchange=exchange, source=source,
                fields=["date"], sort="date", order="desc", limit=1,
            )
            warnings.warn(
                "the stored %s calendar ends %s, before %s: open days after it are unknown"
                % (exchange, "on " + last[0]["date"] if last else "(it is empty)", _param(end)),
                stacklevel=2,
            )
        days: List[_dt.date] = []
        for page in self.pages(
            "market/trade-calendar",
            exchange=exchange,
            is_open=1,
            date_to=end,
            source=source,
            fields=["date"],
            sort="date",
            order="desc",
        ):
            days.extend(_dt.date.fromisoformat(r["date"]) for r in page)
            if len(days) >= n:
                break
        if len(days) < n:
            raise BadRequest(
                "the stored %s calendar holds %d open days on or before %s, not %d" % (exchange, len(days), _param(end), n),
                code=4001,
            )
        return sorted(days[:n])

    def pages(self, path: str, *, allow_unadjusted: bool = False, **params: Any) -> Iterable[List[Dict[str, Any]]]:
        """The JSON pages of a query one by one (``cursor`` paging), for streaming use. Adjusted
        (``adjust=``): a page holding codes without factors raises
        :class:`~mds_client.MissingFactors` before it is yielded, unless ``allow_unadjusted``."""
        info = self.dataset(path)
        query = [(k, v) for k, v in _query(params) if k not in _PAGING]
        adjust = _adjust_of(params)
        if not adjust:
            return self._page_iter(info, query)

        def checked() -> Iterable[List[Dict[str, Any]]]:
            seen: List[str] = []
            for page in self._page_iter(info, query, missing=seen):
                new = seen[:]
                seen.clear()
                self._unadjusted(adjust, new, allow_unadjusted)
                yield page

        return checked()

    def _page_iter(
        self,
        info: DatasetInfo,
        query: List[Tuple[str, str]],
        progress: Any = None,
        missing: Optional[List[str]] = None,
    ) -> Iterable[List[Dict[str, Any]]]:
        cursor: Optional[str] = None
        while True:
            q = query + [("limit", str(_PAGE))] + ([("cursor", cursor)] if cursor else [])
            body = self._get_query(info.path, q).json()
            if missing is not None:
                _note_without_factors(body, missing)
            if progress is not None:
                if progress.total is None:
                    progress.total = int(body.get("meta", {}).get("total") or 0)
                progress.update(len(body["data"]))
            yield body["data"]
            cursor = body.get("meta", {}).get("next_cursor")
            if not cursor:
                return

    def _pages(
        self, info: DatasetInfo, query: List[Tuple[str, str]], single: bool, missing: List[str]
    ) -> List[Dict[str, Any]]:
        """Every row (or the one page asked), noting each page's codes without factors in ``missing``."""
        if single:
            body = self._get_query(info.path, query).json()
            _note_without_factors(body, missing)
            return body["data"]
        out: List[Dict[str, Any]] = []
        with _progress.bar(self.progress, None, info.name, "rows") as bar:
            for page in self._page_iter(info, query, bar, missing):
                out.extend(page)
        return out

    def _without_factors(self, info: DatasetInfo, codes: List[str], params: Dict[str, Any]) -> List[str]:
        """The ``codes`` (of an adjusted export) without factors, by the service's rule for
        ``meta.adjust.codes_without_factors``: no factor row of ``adjust_source`` (without it, of
        any source), as known at ``as_of``. Read from the factor dataset, ``_FACTOR_CHUNK`` codes
        a request, newest factor rows first (daily factors then name every current code on the
        first page); codes a full page did not name are asked again, until a page holds every
        remaining row. Each request names at least one more code, or ends the chunk."""
        if not codes or not info.factors:
            return []
        factors = self.dataset(info.factors)
        fcode = factors.code_filters[0] if factors.code_filters else "code"
        order = [("sort", factors.range_field), ("order", "desc")] if factors.range_field else []
        given = [k for k in ("adjust_source", "as_of") if params.get(k) is not None]
        common = [("source" if k == "adjust_source" else k, _param(params[k])) for k in given]
        have = set()
        for i in range(0, len(codes), _FACTOR_CHUNK):
            pending = codes[i : i + _FACTOR_CHUNK]
            while pending:
                q = [(fcode, c) for c in pending] + common + order + [("fields", fcode), ("limit", str(_PAGE))]
                body = self._get_query(factors.path, q).json()
                got = {str(r[fcode]) for r in body["data"]}
                have.update(got)
                if not got or int(body.get("meta", {}).get("total", 0)) <= len(body["data"]):
                    break
                pending = [c for c in pending if c not in got]
        return [c for c in codes if c not in have]

    @staticmethod
    def _unadjusted(method: str, codes: List[str], allow: bool) -> None:
        """Raises (or, allowed, warns) when an adjusted answer returned ``codes`` as traded."""
        if not codes:
            return
        shown = ", ".join(codes[:20]) + (" … (%d codes)" % len(codes) if len(codes) > 20 else "")
        message = "adjust=%s: no factors for %s, returned as traded (unadjusted)" % (method, shown)
        if not allow:
            raise MissingFactors(message + "; allow_unadjusted=True to accept them", codes, method)
        warnings.warn(message, stacklevel=3)

    def _get_query(self, path: str, query: List[Tuple[str, str]]) -> Response:
        """A GET of the query API, through the disk cache when there is one."""
        cache = self._cache
        if cache is None:
            return self._http.request("GET", path, self._query_headers(), query)
        url = self._http.url(path, query)
        hit = cache.get(url)
        if hit is not None and hit[2]:
            return Response(200, hit[0], io.BytesIO(hit[1]))
        headers = dict(self._query_headers())
        if hit is not None and hit[0].get("etag"):
            headers["If-None-Match"] = hit[0]["etag"]
        res = self._http.request("GET", path, headers, query)
        if res.status == 304 and hit is not None:
            return Response(200, hit[0], io.BytesIO(hit[1]))
        body = res.read()
        keep = {k: v for k, v in res.headers.items() if k in ("etag", "content-type", "cache-control")}
        if keep.get("etag") or immutable(keep):
            cache.put(url, keep, body, immutable(keep))
        return Response(res.status, res.headers, io.BytesIO(body))

    def _download(self, info: DatasetInfo, query: List[Tuple[str, str]], fmt: str, parallel: int) -> Any:
        parts = self._split(info, query, parallel) if parallel > 1 else None
        if parts is None:
            return self._download_one(info, query, fmt)[0]
        version, queries = parts
        import pyarrow as pa

        with ThreadPoolExecutor(max_workers=len(queries)) as pool:
            done = [f.result() for f in [pool.submit(self._download_one, info, q, fmt) for q in queries]]
        if any(_etag_version(etag) != version for _, etag in done):
            # A batch changed the dataset between the parts: they are not one state of it.
            return self._download_one(info, query, fmt)[0]
        return pa.concat_tables([table for table, _ in done])

    def _split(
        self, info: DatasetInfo, query: List[Tuple[str, str]], parallel: int
    ) -> Optional[Tuple[str, List[List[Tuple[str, str]]]]]:
        """The query as contiguous ranges of its range field, in answer order (with the dataset
        version they were planned at), or None when splitting cannot give the same answer.

        An export is the filters' whole result sorted by ``sort``/``order``, ties broken by the
        unique key. When that sort is the range field, the rows of disjoint, adjacent date
        ranges follow one another in the answer, each range in the same order as in the whole:
        the ranges' answers, concatenated in sort order, are the whole answer. The range field
        must be a non-null date (a null date is in no range), and every parameter a row filter
        or ``fields``/``sort``/``order`` (``adjust``, ``interval``, ``as_of`` answers are not
        split). The boundaries are the dates at ``total * i / k`` rows (JSON, ``limit=1``).
        """
        field = info.range_field
        f = info.row_field(field) if field else None
        if f is None or f.kind != "date" or f.nullable:
            return None
        given = dict(query)
        allowed = set(info.filters) | {"fields", "sort", "order"}
        if any(k not in allowed for k in given):
            return None
        # The order the service applies (src/query/parse.ts): the default order for the
        # default field, ascending for another field without ``order``.
        sort = given.get("sort", info.sort)
        if sort != field:
            return None
        order = given.get("order") or (info.order if "sort" not in given or sort == info.sort else "asc")
        if order not in ("asc", "desc"):
            return None
        probe = [(k, v) for k, v in query if k not in ("fields", "sort", "order")]
        probe += [("sort", field), ("order", order), ("fields", field), ("limit", "1")]
        version, total, _ = self._probe(info, probe)
        k = min(parallel, total // max(1, self.parallel_min_rows))
        if version is None or k < 2:
            return None
        bounds: List[str] = []
        for i in range(1, k):
            v, _, date = self._probe(info, probe + [("offset", str(total * i // k))])
            if v != version or date is None:
                return None
            if not bounds or bounds[-1] != date:
                bounds.append(date)
        # Desc (b1 > b2 > …): [b1, ∞), [b2, b1 - 1], …, (-∞, bm - 1]. Asc (b1 < b2 < …):
        # (-∞, b1], [b1 + 1, b2], …, [bm + 1, ∞). A part's bound comes from a row of the result,
        # so it lies within the user's own date_from/date_to, which it replaces: each part is
        # the user's range cut, never widened.
        try:
            days = [_dt.date.fromisoformat(b) for b in bounds]
            step = _dt.timedelta(days=1 if order == "asc" else -1)
            ranges: List[Tuple[Optional[_dt.date], Optional[_dt.date]]] = []
            prev: Optional[_dt.date] = None
            for d in [*days, None]:
                if order == "desc":
                    ranges.append((d, prev + step if prev else None))
                else:
                    ranges.append((prev + step if prev else None, d))
                prev = d
        except (ValueError, OverflowError):
            return None
        rest = [(k_, v) for k_, v in query if k_ not in ("date_from", "date_to")]
        queries = []
        for lo, hi in ranges:
            q = dict(given)
            if lo is not None:
                q["date_from"] = lo.isoformat()
            if hi is not None:
                q["date_to"] = hi.isoformat()
            queries.append(rest + [(k_, q[k_]) for k_ in ("date_from", "date_to") if k_ in q])
        return version, queries

    def _probe(self, info: DatasetInfo, query: List[Tuple[str, str]]) -> Tuple[Optional[str], int, Optional[str]]:
        """(dataset version from the ETag, meta.total, the one row's range field) of a JSON page."""
        res = self._get_query(info.path, query)
        body = res.json()
        rows = body.get("data") or []
        field = dict(query).get("fields")
        value = rows[0].get(field) if rows and field else None
        return _etag_version(res.headers.get("etag")), int(body.get("meta", {}).get("total", 0)), value

    def _download_one(self, info: DatasetInfo, query: List[Tuple[str, str]], fmt: str) -> Tuple[Any, Optional[str]]:
        """One export, read into a pyarrow Table; with the answer's ETag."""
        import pyarrow as pa

        res = self._get_query(info.path, query + [("format", fmt)])
        etag = res.headers.get("etag")
        if fmt == "arrow":
            # Read batch by batch from the socket: no second copy of the bytes.
            try:
                with pa.ipc.open_stream(res.raw) as reader, _progress.bar(
                    self.progress, None, info.name, "rows"
                ) as bar:
                    batches = []
                    for b in reader:
                        batches.append(b)
                        bar.update(b.num_rows)
                    return pa.Table.from_batches(batches, schema=reader.schema), etag
            finally:
                res.raw.close()
        import pyarrow.parquet as pq

        # A Parquet file is read from its footer: the body once into memory, read in place.
        return pq.read_table(pa.BufferReader(res.read())), etag

    @staticmethod
    def _records_from_arrow(table: Any) -> List[Dict[str, Any]]:
        rows = table.to_pylist()
        for r in rows:
            for k, v in r.items():
                if isinstance(v, _dt.datetime):
                    r[k] = v.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (
                        v.microsecond // 1000
                    )
                elif isinstance(v, _dt.date):
                    r[k] = v.isoformat()
        return rows

    # ------------------------------------------------------------------ pushing

    def _ingest_headers(self) -> Dict[str, str]:
        if not self.ingest_key:
            raise MdsError("an ingest key is needed: Client(base_url, key, ingest_key=…)", code=4010)
        return {"UP-API-KEY": self.ingest_key}

    def push(
        self,
        dataset: str,
        rows: Any,
        *,
        source: Optional[str] = None,
        snapshot: str = "incremental",
        business_date: Union[str, _dt.date, None] = None,
        batch_size: int = 10_000,
        run_id: Optional[str] = None,
        raise_on_error: bool = True,
        fill_updated_at: bool = True,
    ) -> List[Dict[str, Any]]:
        """Pushes rows (a list of dicts, or a pandas / polars DataFrame) as schema-3.0 batches.

        A frame exactly as :meth:`get` returned it can be pushed back: columns are matched by
        ingest name (``symbol``) or row name (``code``, from ``x-mds-ingest-names`` in
        ``/openapi.json``); ``created_at`` (set by the server) is dropped. Values are converted
        to the fields' JSON types (dates as ``YYYY-MM-DD``, timestamps ISO 8601 UTC, NaN/NA →
        null). The rows are checked before anything is sent, as ``mds push`` checks a file:
        an unknown column, a missing required field or a value not of its field's type raises
        :class:`~mds_client.InvalidRows` listing every problem.

        Args:
            dataset: the dataset name (``"etf_daily"``).
            source: ``meta.source`` and the ``source`` field of every row (it replaces the
                rows' own). Default: the rows' single ``source`` value, else ``"mds-client"``.
            snapshot: ``"incremental"`` (upsert) or ``"full"`` (the rows are the whole
                partition ``business_date`` of ``source``: rows of it not sent are deleted).
                A full snapshot is one batch, never split.
            business_date: ``meta.business_date``; default: the latest date of the key's first
                date field (or today, UTC). Required for a full snapshot without one.
            batch_size: records per batch for incremental pushes.
            run_id: ``meta.source_run_id``; default: derived from the first batch id.
            raise_on_error: raise :class:`~mds_client.BatchRejected` when a batch comes back
                ``rejected`` or ``partial`` (default); False: return its status record.
            fill_updated_at: a dataset's ``updated_at`` absent from a row is set to the push
                time, with a warning saying on how many rows (default); False: leave it absent.

        Returns:
            The batch status record of each batch (spec 2.4), in order; ``status`` is
            ``accepted``, ``duplicate`` (already pushed: nothing written) or, with
            ``raise_on_error=False``, ``partial`` / ``rejected``. Retries (network errors, 5xx,
            409/4091) resend the same batch id, so a batch is never applied twice.

        Raises:
            InvalidRows: the rows cannot be pushed (nothing was sent).
            BatchRejected: a batch was refused in whole or in part (the ones before it were applied).
            BadRequest: 400 (e.g. a malformed batch) or 422/4220 (checksum).
            Conflict: 409/4090, the batch id was used for other content.
        """
        info = self.dataset(dataset)
        if snapshot not in ("incremental", "full"):
            raise ValueError("snapshot must be 'incremental' or 'full'")
        snapshot_type = "full_snapshot" if snapshot == "full" else "incremental"
        given = _batches.rows_of(rows)
        if not given:
            raise ValueError("no rows to push")
        fill: Dict[str, Any] = {}
        has_source = info.ingest_field("source") is not None
        now = _now_iso()
        stamp = fill_updated_at and info.ingest_field("updated_at") is not None
        if stamp:
            fill["updated_at"] = now
        if source is not None and has_source:
            fill["source"] = source
        clean = _batches.prepare_rows(info, given, fill)
        if stamp:
            stamped = sum(1 for r, g in zip(clean, given) if r.get("updated_at") == now and not _has_value(g, "updated_at"))
            if stamped:
                warnings.warn(
                    "%s: updated_at was absent on %d of %d rows; set to the push time %s (fill_updated_at=False to leave it out)"
                    % (info.name, stamped, len(clean), now),
                    stacklevel=2,
                )
        if source is None:
            values = {r.get("source") for r in clean if r.get("source") is not None}
            source = values.pop() if len(values) == 1 else "mds-client"
        elif has_source:
            for r in clean:
                r["source"] = source
        if isinstance(business_date, _dt.date):
            business_date = business_date.isoformat()
        if business_date is None:
            business_date = _batches.default_business_date(info, clean)
            if business_date is None and snapshot_type == "full_snapshot":
                raise ValueError("a full snapshot needs business_date (the partition it replaces)")
        business_date = business_date or _dt.datetime.now(_dt.timezone.utc).date().isoformat()
        parts = [clean] if snapshot_type == "full_snapshot" else list(_batches.chunks(clean, batch_size))
        out: List[Dict[str, Any]] = []
        with _progress.bar(self.progress, len(clean), info.name + " push", "rows") as bar:
            for part in parts:
                bid, body = _batches.build_body(
                    info,
                    part,
                    source=source,
                    snapshot_type=snapshot_type,
                    business_date=business_date,
                    run_id=run_id or "mds-client",
                )
                res = self._http.request(
                    "POST", "/api/v1/upstream/ingest/batches", self._ingest_headers(), body=body
                )
                status = json.loads(res.read().decode("utf-8"))
                out.append(status)
                bar.update(len(part))
                if raise_on_error and status.get("status") in ("rejected", "partial"):
                    errors = status.get("errors") or []
                    shown = "; ".join(
                        "record %s: %s%s" % (e.get("index"), e.get("field") + ": " if e.get("field") else "", e.get("reason"))
                        for e in errors[:5]
                    )
                    raise BatchRejected(
                        "batch %s %s: %s of %s records refused (%s%s)"
                        % (bid, status.get("status"), status.get("rejected"), len(part), shown, " …" if len(errors) > 5 else ""),
                        status,
                        out,
                    )
        return out

    def batch(self, batch_id: str) -> Dict[str, Any]:
        """The status record of a batch (spec 2.4); raises NotFound (4040) for an unknown id."""
        from urllib.parse import quote

        res = self._http.request(
            "GET", "/api/v1/upstream/ingest/batches/" + quote(batch_id, safe=""), self._ingest_headers()
        )
        return res.json()
