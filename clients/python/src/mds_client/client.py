"""The client: read datasets into DataFrames, push rows as schema-3.0 batches."""

from __future__ import annotations

import datetime as _dt
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from . import batches as _batches
from . import frames
from ._http import Transport
from .errors import BadRequest, MdsError
from .schema import DatasetInfo, datasets_from_openapi

_PAGE = 1000
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
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)


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
    ) -> None:
        self.key = key
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
        self, path: str, as_: str = "pandas", via: str = "auto", parallel: Optional[int] = None, **params: Any
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
                With ``limit``, ``offset`` or ``cursor`` only that one page is fetched.

        Dtypes come from the OpenAPI document: dates → datetime64, timestamps → UTC
        datetimes, numbers → float64, integers → Int64, flags → Int8 (see docs/python-client.md).
        """
        info = self.dataset(path)
        query = [(k, _param(v)) for k, v in params.items() if v is not None]
        names = [n.strip() for n in dict(query).get("fields", "").split(",") if n.strip()]
        fields = [f for f in (info.row_field(n) for n in names) if f] if names else info.row_fields
        single_page = any(k in params for k in _PAGING)
        if via == "auto":
            via = "arrow" if (_has("pyarrow") and as_ != "records" and not single_page) else "json"
        if via in ("arrow", "parquet"):
            if single_page:
                raise BadRequest("limit/offset/cursor page the JSON answer; use via='json'", code=4001)
            table = self._download(info, query, via, self.parallel if parallel is None else parallel)
            if as_ == "arrow":
                return table
            if as_ == "polars":
                return frames.arrow_to_polars(table)
            if as_ == "records":
                return self._records_from_arrow(table)
            return frames.arrow_to_pandas(table, fields)
        if via != "json":
            raise ValueError("via must be 'auto', 'json', 'arrow' or 'parquet'")
        records = self._pages(info, query, single_page)
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

    def pages(self, path: str, **params: Any) -> Iterable[List[Dict[str, Any]]]:
        """The JSON pages of a query one by one (``cursor`` paging), for streaming use."""
        info = self.dataset(path)
        query = [(k, _param(v)) for k, v in params.items() if v is not None and k not in _PAGING]
        cursor: Optional[str] = None
        while True:
            q = query + [("limit", str(_PAGE))] + ([("cursor", cursor)] if cursor else [])
            body = self._http.request("GET", info.path, self._query_headers(), q).json()
            yield body["data"]
            cursor = body.get("meta", {}).get("next_cursor")
            if not cursor:
                return

    def _pages(self, info: DatasetInfo, query: List[Tuple[str, str]], single: bool) -> List[Dict[str, Any]]:
        if single:
            return self._http.request("GET", info.path, self._query_headers(), query).json()["data"]
        out: List[Dict[str, Any]] = []
        for page in self.pages(info.name, **dict(query)):
            out.extend(page)
        return out

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
        res = self._http.request("GET", info.path, self._query_headers(), query)
        body = res.json()
        rows = body.get("data") or []
        field = dict(query).get("fields")
        value = rows[0].get(field) if rows and field else None
        return _etag_version(res.headers.get("etag")), int(body.get("meta", {}).get("total", 0)), value

    def _download_one(self, info: DatasetInfo, query: List[Tuple[str, str]], fmt: str) -> Tuple[Any, Optional[str]]:
        """One export, read into a pyarrow Table; with the answer's ETag."""
        import pyarrow as pa

        res = self._http.request("GET", info.path, self._query_headers(), query + [("format", fmt)])
        etag = res.headers.get("etag")
        if fmt == "arrow":
            # Read batch by batch from the socket: no second copy of the bytes.
            try:
                with pa.ipc.open_stream(res.raw) as reader:
                    return reader.read_all(), etag
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
    ) -> List[Dict[str, Any]]:
        """Pushes rows (a list of dicts, or a pandas / polars DataFrame) as schema-3.0 batches.

        Column names are the dataset's ingest field names (``symbol``, ``date``, … as in
        docs/endpoints.md and the ``<dataset>_batch`` schema of ``/openapi.json``); a
        ``created_at`` column (set by the server) is dropped. Values are converted to the
        fields' JSON types (dates as ``YYYY-MM-DD``, timestamps ISO 8601 UTC, NaN/NA → null).

        Args:
            dataset: the dataset name (``"etf_daily"``).
            source: ``meta.source``; also fills an absent ``source`` field. Default: the rows'
                single ``source`` value, else ``"mds-client"``.
            snapshot: ``"incremental"`` (upsert) or ``"full"`` (the rows are the whole
                partition ``business_date`` of ``source``: rows of it not sent are deleted).
                A full snapshot is one batch, never split.
            business_date: ``meta.business_date``; default: the latest date of the key's first
                date field (or today, UTC). Required for a full snapshot without one.
            batch_size: records per batch for incremental pushes.
            run_id: ``meta.source_run_id``; default: derived from the first batch id.

        Returns:
            The batch status record of each batch (spec 2.4), in order; ``status`` is
            ``accepted``, ``partial``, ``rejected`` or ``duplicate`` (already pushed: nothing
            written). Retries (network errors, 5xx, 409/4091) resend the same batch id, so a
            batch is never applied twice.

        Raises:
            BadRequest: 400 (e.g. a malformed batch) or 422/4220 (checksum).
            Conflict: 409/4090, the batch id was used for other content.
        """
        info = self.dataset(dataset)
        if snapshot not in ("incremental", "full"):
            raise ValueError("snapshot must be 'incremental' or 'full'")
        snapshot_type = "full_snapshot" if snapshot == "full" else "incremental"
        clean = [_batches.clean_row(info, r) for r in _batches.rows_of(rows)]
        if not clean:
            raise ValueError("no rows to push")
        has_source = info.ingest_field("source") is not None
        if source is None:
            values = {r.get("source") for r in clean if r.get("source") is not None}
            source = values.pop() if len(values) == 1 else "mds-client"
        elif has_source:
            for r in clean:
                if r.get("source") is None:
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
        for part in parts:
            bid, body = _batches.build_body(
                info,
                part,
                source=source,
                snapshot_type=snapshot_type,
                business_date=business_date,
                run_id=run_id or "mds-client",
            )
            res = self._http.request("POST", "/api/v1/upstream/ingest/batches", self._ingest_headers(), body=body)
            out.append(json.loads(res.read().decode("utf-8")))
        return out

    def batch(self, batch_id: str) -> Dict[str, Any]:
        """The status record of a batch (spec 2.4); raises NotFound (4040) for an unknown id."""
        from urllib.parse import quote

        res = self._http.request(
            "GET", "/api/v1/upstream/ingest/batches/" + quote(batch_id, safe=""), self._ingest_headers()
        )
        return res.json()
