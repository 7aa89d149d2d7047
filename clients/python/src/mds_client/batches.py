"""Schema-3.0 ingest batches: records, the checksum, content-derived batch ids.

The checksum is the SHA-256 of the exact bytes of the ``records`` array as sent (the form the
service's docs teach first, "hash what you send"): the body is assembled around those bytes.
The batch id is derived from what the batch means (dataset, snapshot type, business date,
source and that checksum), so pushing the same rows again reuses the same id and the service
answers "duplicate" instead of writing twice; a retry after a lost answer is therefore safe.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from .errors import InvalidRows
from .schema import DatasetInfo

Row = Dict[str, Any]


def _date(v: Any) -> Any:
    if isinstance(v, _dt.datetime):
        return v.date().isoformat()
    if isinstance(v, _dt.date):
        return v.isoformat()
    if hasattr(v, "date") and callable(v.date):  # pandas.Timestamp, numpy datetime64 via pandas
        return v.date().isoformat()
    return str(v)[:10] if isinstance(v, str) else str(v)


def _timestamp(v: Any) -> Any:
    if isinstance(v, str):
        return v
    if hasattr(v, "to_pydatetime"):
        v = v.to_pydatetime()
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=_dt.timezone.utc)
        v = v.astimezone(_dt.timezone.utc)
        return v.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (v.microsecond // 1000)
    return str(v)


def _missing(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    # pandas.NA / NaT
    return type(v).__name__ in ("NAType", "NaTType")


#: Columns a pulled frame carries that the server sets: dropped, never sent.
SERVER_SET = ("created_at",)

#: The most problems an InvalidRows lists (their count is always given).
MAX_PROBLEMS = 50


def _convert(kind: str, v: Any) -> Any:
    """One value as the JSON type of its field's kind; raises ValueError when it is not one."""
    if kind == "date":
        return _date(v)
    if kind == "timestamp":
        return _timestamp(v)
    if hasattr(v, "item") and not isinstance(v, str):
        v = v.item()  # numpy scalars
    if kind == "number":
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise ValueError("a number")
        return float(v)
    if kind in ("integer", "flag"):
        if isinstance(v, bool):
            n = int(v)
        elif isinstance(v, float):
            if not v.is_integer():
                raise ValueError("an integer")
            n = int(v)
        elif isinstance(v, (int, str)):
            n = int(v)
        else:
            raise ValueError("an integer")
        if kind == "flag" and n not in (0, 1):
            raise ValueError("0 or 1")
        return n
    return str(v)


def column_fields(info: DatasetInfo, columns: Sequence[str]) -> Dict[str, Optional[str]]:
    """Each column's ingest field: by ingest name, else by row name (``code`` → ``symbol``, as
    ``client.get`` returns it); None for a column the server sets (dropped). Raises InvalidRows
    for unknown columns or two columns of one field."""
    out: Dict[str, Optional[str]] = {}
    unknown: List[str] = []
    taken: Dict[str, str] = {}
    for c in columns:
        if info.ingest_field(c) is not None:
            target = c
        elif info.ingest_field(info.ingest_names.get(c, "")) is not None:
            target = info.ingest_names[c]
        elif c in SERVER_SET:
            out[c] = None
            continue
        else:
            unknown.append(c)
            continue
        if target in taken:
            raise InvalidRows(
                "columns %r and %r are both field %s of %s: drop one" % (taken[target], c, target, info.name),
                ["columns %r and %r are both field %s" % (taken[target], c, target)],
            )
        taken[target] = c
        out[c] = target
    if unknown:
        names = ", ".join(
            f.name + ("*" if f.required else "") for f in info.ingest_fields
        )
        raise InvalidRows(
            "unknown column(s) for %s: %s; fields (* required): %s" % (info.name, ", ".join(unknown), names),
            ["unknown column %r" % c for c in unknown],
        )
    return out


def prepare_rows(
    info: DatasetInfo, rows: Sequence[Mapping[str, Any]], fill: Optional[Mapping[str, Any]] = None
) -> List[Row]:
    """Rows as ingest records' data, checked as ``mds push`` checks a file, before anything is
    sent: columns by ingest or row name, server-set columns dropped, values converted to their
    fields' JSON types (NaN / NA / NaT → null), ``fill`` applied where a value is absent, every
    required field present. Raises InvalidRows listing the problems."""
    columns: Dict[str, None] = {}
    for r in rows:
        for k in r:
            columns.setdefault(k, None)
    fields = column_fields(info, list(columns))
    kinds = {f.name: f.kind for f in info.ingest_fields}
    problems: List[str] = []
    count = 0
    out: List[Row] = []
    for i, row in enumerate(rows):
        clean: Row = {}
        bad: set = set()
        for c, v in row.items():
            target = fields.get(c)
            if target is None:
                continue
            if _missing(v):
                clean[target] = None
                continue
            try:
                clean[target] = _convert(kinds[target], v)
            except (TypeError, ValueError, OverflowError) as e:
                bad.add(target)
                count += 1
                if len(problems) < MAX_PROBLEMS:
                    what = str(e) if str(e).startswith(("a ", "an ", "0 ")) else "a %s" % kinds[target]
                    problems.append("row %d: %s must be %s (got %r)" % (i, c, what, v))
        for k, v in (fill or {}).items():
            if clean.get(k) is None:
                clean[k] = v
        for f in info.ingest_fields:
            if f.required and clean.get(f.name) is None and f.name not in bad:
                count += 1
                if len(problems) < MAX_PROBLEMS:
                    alias = next((r for r, n in info.ingest_names.items() if n == f.name), None)
                    problems.append(
                        "row %d: %s%s is required" % (i, f.name, " (or %s)" % alias if alias else "")
                    )
        out.append(clean)
    if problems:
        raise InvalidRows(
            "%d problem(s) in the rows for %s, nothing sent: %s%s"
            % (count, info.name, "; ".join(problems[:5]), " …" if count > 5 else ""),
            problems,
        )
    return out


def rows_of(data: Any) -> List[Row]:
    """A list of dicts, a pandas DataFrame or a polars DataFrame, as a list of dicts."""
    if isinstance(data, list):
        return data
    if hasattr(data, "to_dict") and hasattr(data, "columns") and hasattr(data, "iloc"):  # pandas
        return data.to_dict("records")
    if hasattr(data, "to_dicts"):  # polars
        return data.to_dicts()
    return list(data)


def record(info: DatasetInfo, data: Row) -> Dict[str, Any]:
    """The recommended record: idempotency_key = dataset and key values joined by ":"."""
    return {
        "idempotency_key": ":".join([info.name] + ["" if data.get(k) is None else str(data.get(k)) for k in info.key]),
        "unique_key": {k: data.get(k) for k in info.key},
        "data": data,
    }


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def batch_id(info: DatasetInfo, snapshot_type: str, business_date: str, source: str, checksum: str) -> str:
    h = hashlib.sha256("\n".join([info.name, snapshot_type, business_date, source, checksum]).encode()).hexdigest()
    return "py-%s-%s-%s" % (info.name, business_date, h[:24])


def build_body(
    info: DatasetInfo,
    rows: Sequence[Row],
    *,
    source: str,
    snapshot_type: str,
    business_date: str,
    run_id: str,
    send_time: Optional[_dt.datetime] = None,
) -> "tuple[str, bytes]":
    """(batch_id, request body bytes) of one batch."""
    records = dumps([record(info, r) for r in rows])
    checksum = hashlib.sha256(records).hexdigest()
    bid = batch_id(info, snapshot_type, business_date, source, checksum)
    now = (send_time or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc)
    meta = {
        "schema_version": "3.0",
        "batch_id": bid,
        "source_system": "upstream",
        "source_run_id": run_id,
        "dataset": info.name,
        "table": info.name,
        "operation": "upsert",
        "snapshot_type": snapshot_type,
        "business_date": business_date,
        "source": source,
        "record_count": len(rows),
        "send_time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    body = b'{"meta":' + dumps(meta) + b',"records":' + records + b',"checksum":{"sha256":"' + checksum.encode() + b'"}}'
    return bid, body


def chunks(rows: Sequence[Row], size: int) -> Iterable[Sequence[Row]]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


def default_business_date(info: DatasetInfo, rows: Sequence[Row]) -> Optional[str]:
    """The latest value of the first date field of the unique key (the partition, for most datasets)."""
    for k in info.key:
        f = info.ingest_field(k)
        if f is not None and f.kind == "date":
            values = [r[k] for r in rows if r.get(k)]
            return max(values) if values else None
    return None
