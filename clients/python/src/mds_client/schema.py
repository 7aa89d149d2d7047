"""What the client knows about each dataset, read from the service's ``/openapi.json``.

Nothing about the datasets is hard-coded here: row field types (for DataFrame dtypes), the
ingest fields and the unique key (for batches) all come from the document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

#: Field kinds the client distinguishes, from the JSON Schema of a field.
KINDS = ("string", "number", "integer", "flag", "date", "timestamp")


def field_kind(schema: Dict[str, Any]) -> Tuple[str, bool]:
    """(kind, nullable) of one property of a row or ingest schema."""
    t = schema.get("type")
    types = t if isinstance(t, list) else [t]
    nullable = "null" in types
    base = next((x for x in types if x != "null"), "string")
    fmt = schema.get("format")
    if base == "string" and fmt == "date":
        return "date", nullable
    if base == "string" and fmt == "date-time":
        return "timestamp", nullable
    if base == "integer":
        enum = [v for v in schema.get("enum", []) if v is not None]
        return ("flag" if sorted(enum) == [0, 1] else "integer"), nullable
    if base == "number":
        return "number", nullable
    return "string", nullable


@dataclass
class Field:
    name: str
    kind: str
    nullable: bool
    #: Ingest fields: the batch schema requires it.
    required: bool = False
    #: Numeric fields: the unit the catalog declares (``x-mds-unit``: ``CNY``, ``shares``, ``%``, …).
    unit: Optional[str] = None


@dataclass
class DatasetInfo:
    """One dataset: its name, query path, row fields, ingest fields and unique key."""

    name: str
    path: str
    row_fields: List[Field] = field(default_factory=list)
    ingest_fields: List[Field] = field(default_factory=list)
    key: List[str] = field(default_factory=list)
    #: The query parameters that are row filters (``x-mds-filter``: exact, like, range).
    filters: List[str] = field(default_factory=list)
    #: The row field ``date_from`` / ``date_to`` bound (``x-mds-field``); None: no range filter,
    #: or a service too old to say.
    range_field: Optional[str] = None
    #: The default sort field and order (the ``sort`` / ``order`` parameters' defaults).
    sort: Optional[str] = None
    order: Optional[str] = None
    #: Exact filters holding instrument codes (``x-mds-code``), e.g. ``["code"]``.
    code_filters: List[str] = field(default_factory=list)
    #: Each code filter's market (``cn``: also 510300.SH, sh510300; ``us``: as written).
    code_markets: Dict[str, str] = field(default_factory=dict)
    #: The factor dataset ``adjust=qfq|hfq`` reads (``x-mds-factors`` on ``adjust``, e.g.
    #: ``adj_factor``); None: the endpoint adjusts nothing.
    factors: Optional[str] = None
    #: Row name → ingest name where they differ (``x-mds-ingest-names``: ``code`` → ``symbol``).
    ingest_names: Dict[str, str] = field(default_factory=dict)

    @property
    def units(self) -> Dict[str, str]:
        """Each numeric row field's unit, e.g. ``{"close": "CNY", "volume": "shares"}``."""
        return {f.name: f.unit for f in self.row_fields if f.unit}

    def row_field(self, name: str) -> Optional[Field]:
        return next((f for f in self.row_fields if f.name == name), None)

    def ingest_field(self, name: str) -> Optional[Field]:
        return next((f for f in self.ingest_fields if f.name == name), None)


def _resolve(doc: Dict[str, Any], schema: Dict[str, Any]) -> Dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = doc
        for part in ref[2:].split("/"):
            node = node[part]
        return node
    return schema


def _fields(doc: Dict[str, Any], schema: Dict[str, Any]) -> List[Field]:
    schema = _resolve(doc, schema)
    required = set(schema.get("required", []))
    out = []
    for name, prop in schema.get("properties", {}).items():
        prop = _resolve(doc, prop)
        kind, nullable = field_kind(prop)
        unit = prop.get("x-mds-unit")
        out.append(Field(name, kind, nullable, name in required, unit if isinstance(unit, str) else None))
    return out


def datasets_from_openapi(doc: Dict[str, Any]) -> Dict[str, DatasetInfo]:
    """Every dataset of the document, by name (``query_<name>`` operations)."""
    out: Dict[str, DatasetInfo] = {}
    schemas = doc.get("components", {}).get("schemas", {})
    for path, item in doc.get("paths", {}).items():
        op = item.get("get") or {}
        op_id = op.get("operationId", "")
        if not op_id.startswith("query_"):
            continue
        name = op_id[len("query_"):]
        info = DatasetInfo(name=name, path=path)
        content = op.get("responses", {}).get("200", {}).get("content", {}).get("application/json", {})
        envelope = _resolve(doc, content.get("schema", {}))
        data = _resolve(doc, envelope.get("properties", {}).get("data", {}))
        info.row_fields = _fields(doc, data.get("items", {}))
        for p in op.get("parameters", []):
            p = _resolve(doc, p)
            pname = p.get("name")
            if p.get("x-mds-filter"):
                info.filters.append(pname)
            if p.get("x-mds-code"):
                info.code_filters.append(pname)
                info.code_markets[pname] = str(p["x-mds-code"])
            if p.get("x-mds-filter") == "range" and isinstance(p.get("x-mds-field"), str):
                info.range_field = p["x-mds-field"]
            if pname == "adjust" and isinstance(p.get("x-mds-factors"), str):
                info.factors = p["x-mds-factors"]
            if pname in ("sort", "order"):
                setattr(info, pname, _resolve(doc, p.get("schema", {})).get("default"))
        names = op.get("x-mds-ingest-names")
        if isinstance(names, dict):
            info.ingest_names = {str(k): str(v) for k, v in names.items()}
        batch = schemas.get("%s_batch" % name)
        if batch:
            records = _resolve(doc, batch["properties"]["records"])
            record = _resolve(doc, records["items"])
            info.ingest_fields = _fields(doc, record["properties"]["data"])
            info.key = list(_resolve(doc, record["properties"]["unique_key"]).get("required", []))
        out[name] = info
    return out
