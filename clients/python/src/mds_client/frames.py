"""Rows → DataFrames with the dtypes the OpenAPI document gives each field.

pandas: ``date`` → ``datetime64[ns]``, ``timestamp`` → ``datetime64[ns, UTC]``, ``number`` →
``float64``, ``integer`` → ``Int64`` and ``flag`` → ``Int8`` (pandas' nullable integers, so a
missing value stays missing instead of turning the column into floats), ``string`` → ``object``.
polars: ``Date``, ``Datetime("ms", "UTC")``, ``Float64``, ``Int64``, ``Int8``, ``Utf8``.
The same dtypes whether the rows came as JSON pages or as one Arrow/Parquet download.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from .schema import Field


def _need(module: str, extra: str) -> Any:
    try:
        return __import__(module)
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "%s is needed for this; install it with: pip install 'mds-client[%s]'" % (module, extra)
        ) from e


def pandas_frame(records: List[Dict[str, Any]], fields: Sequence[Field]) -> Any:
    pd = _need("pandas", "pandas")
    names = [f.name for f in fields]
    df = pd.DataFrame.from_records(records, columns=names) if records else pd.DataFrame(columns=names)
    return pandas_dtypes(df, fields)


def _is_text(pd: Any, col: Any) -> bool:
    """Strings, as object (pandas < 3) or as pandas 3's own string dtype."""
    return bool(col.dtype == object or pd.api.types.is_string_dtype(col.dtype))


def _iso_format(pd: Any) -> Any:
    """'ISO8601' (pandas >= 2): every ISO form in one column, with or without milliseconds.
    pandas 1.x has no such format, and its inference already takes them all."""
    return "ISO8601" if int(pd.__version__.split(".")[0]) >= 2 else None


def pandas_dtypes(df: Any, fields: Sequence[Field]) -> Any:
    """Casts the columns of ``df`` that are fields to their dtypes."""
    pd = _need("pandas", "pandas")
    for f in fields:
        if f.name not in df.columns:
            continue
        col = df[f.name]
        if f.kind == "date":
            df[f.name] = pd.to_datetime(col, format="%Y-%m-%d" if _is_text(pd, col) else None).astype(
                "datetime64[ns]"
            )
        elif f.kind == "timestamp":
            df[f.name] = pd.to_datetime(col, utc=True, format=_iso_format(pd) if _is_text(pd, col) else None).astype(
                "datetime64[ns, UTC]"
            )
        elif f.kind == "number":
            df[f.name] = col.astype("float64")
        elif f.kind == "integer":
            df[f.name] = col.astype("Int64")
        elif f.kind == "flag":
            df[f.name] = col.astype("Int8")
        else:
            df[f.name] = col.astype(object).where(col.notna(), None)
    return df


def polars_frame(records: List[Dict[str, Any]], fields: Sequence[Field]) -> Any:
    pl = _need("polars", "polars")
    types = {
        "string": pl.Utf8,
        "number": pl.Float64,
        "integer": pl.Int64,
        "flag": pl.Int8,
        "date": pl.Utf8,
        "timestamp": pl.Utf8,
    }
    df = pl.DataFrame(
        {f.name: [r.get(f.name) for r in records] for f in fields},
        schema={f.name: types[f.kind] for f in fields},
    )
    return polars_dtypes(df, fields)


def polars_dtypes(df: Any, fields: Sequence[Field]) -> Any:
    pl = _need("polars", "polars")
    exprs = []
    for f in fields:
        if f.name not in df.columns:
            continue
        dtype = df.schema[f.name]
        if f.kind == "date" and dtype == pl.Utf8:
            exprs.append(pl.col(f.name).str.to_date("%Y-%m-%d"))
        elif f.kind == "timestamp" and dtype == pl.Utf8:
            # Z or an offset (minute bars: +08:00), with or without milliseconds: every
            # instant to UTC, as the pandas and Arrow paths give it.
            exprs.append(
                pl.col(f.name).str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%#z", time_unit="ms", time_zone="UTC")
            )
    return df.with_columns(exprs) if exprs else df


def arrow_to_pandas(table: Any, fields: Sequence[Field]) -> Any:
    pa = _need("pyarrow", "arrow")
    pd = _need("pandas", "pandas")
    # Integers straight into pandas' nullable types (not through float64, which rounds int64).
    ints = {pa.int64(): pd.Int64Dtype(), pa.int8(): pd.Int8Dtype()}
    return pandas_dtypes(table.to_pandas(date_as_object=False, types_mapper=ints.get), fields)


def arrow_to_polars(table: Any) -> Any:
    pl = _need("polars", "polars")
    return pl.from_arrow(table)
