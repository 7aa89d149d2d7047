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


def clean_row(info: DatasetInfo, row: Mapping[str, Any]) -> Row:
    """One row as JSON values of its ingest fields' types; server-set columns dropped."""
    out: Row = {}
    for name, v in row.items():
        if name == "created_at" and info.ingest_field(name) is None:
            continue
        f = info.ingest_field(name)
        if _missing(v):
            out[name] = None
        elif f is None:
            out[name] = v.item() if hasattr(v, "item") else v  # the service names unknown fields
        elif f.kind == "date":
            out[name] = _date(v)
        elif f.kind == "timestamp":
            out[name] = _timestamp(v)
        elif f.kind == "number":
            out[name] = float(v)
        elif f.kind in ("integer", "flag"):
            out[name] = int(v)
        else:
            out[name] = str(v)
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
