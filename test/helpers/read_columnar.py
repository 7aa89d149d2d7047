"""Reads an Arrow IPC stream or a Parquet file with readers we did not write (pyarrow, and
DuckDB for Parquet when it is installed) and prints what they read as JSON, for
test/query/columnar-formats.test.ts to compare with the service's JSON answer.

Doubles are printed as the hex of their IEEE-754 bits, so the comparison is bit for bit.
Usage: python3 read_columnar.py arrow|parquet FILE [arrow|parquet FILE ...]
Prints one JSON object: FILE → what was read.
"""
import datetime
import functools
import json
import struct
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


_double = struct.Struct(">d").pack


def value(v):
    """One cell as printed (the schema-less path: what a column's type does not say)."""
    # Doubles first: most cells are. bool before int (a bool is an int); datetime before date.
    if isinstance(v, float):
        return "f:" + _double(v).hex()
    if v is None:
        return None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        # The milliseconds truncated, as the JSON answer's toISOString() prints them.
        return v.isoformat(timespec="milliseconds") + "Z"
    if isinstance(v, datetime.date):
        return v.isoformat()
    return v


def cells(col):
    """A column's cells as value() prints them, by Arrow's compute functions rather than one
    Python call per cell (that was most of the reader's time: 3.4 million cells)."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    t = arr.type
    if pa.types.is_floating(t):
        # Each double's IEEE-754 bits, big-endian, as hex: one hex string for the column, cut up.
        bits = arr.cast(pa.float64()).fill_null(0.0).to_numpy().astype(">f8").tobytes().hex()
        return [None if n else "f:" + bits[16 * i : 16 * i + 16] for i, n in enumerate(arr.is_null().to_pylist())]
    if pa.types.is_timestamp(t):
        # In milliseconds, %S prints them ("05.123"): the instant in its zone (UTC) or naive UTC.
        ms = arr.cast(pa.timestamp("ms", t.tz), safe=False)
        return pc.strftime(ms, format="%Y-%m-%dT%H:%M:%SZ").to_pylist()
    if pa.types.is_date(t):
        return arr.cast(pa.string()).to_pylist()
    if pa.types.is_boolean(t):
        return arr.cast(pa.int8()).to_pylist()
    if pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr.to_pylist()
    return [value(v) for v in arr.to_pylist()]


def rows_of(table):
    return [list(r) for r in zip(*(cells(c) for c in table.columns))]


@functools.cache
def duckdb_connection():
    """One in-memory DuckDB for every file (a connection is a database of its own: opening one
    per file was most of the reader's time), or None when DuckDB is not installed."""
    try:
        import duckdb
    except ImportError:
        return None
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con


def read(kind, path):
    if kind == "arrow":
        with pa.ipc.open_stream(path) as reader:
            table = reader.read_all()
    else:
        table = pq.read_table(path)
    out = {
        "schema": [[f.name, str(f.type), f.nullable] for f in table.schema],
        "rows": rows_of(table),
    }
    if kind == "parquet":
        con = duckdb_connection()
        if con is None:
            out["duckdb"] = None
        else:
            cols = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()
            # Aware timestamps need pytz in DuckDB's Python API: read them as naive UTC instead.
            select = ", ".join(
                'CAST("%s" AS TIMESTAMP) AS "%s"' % (c[0], c[0]) if c[1] == "TIMESTAMP WITH TIME ZONE" else '"%s"' % c[0]
                for c in cols
            )
            # DuckDB's result as Arrow: its values, printed by the same cells() as pyarrow's.
            read_back = con.execute("SELECT %s FROM read_parquet(?)" % select, [path]).fetch_arrow_table()
            out["duckdb"] = {"columns": read_back.column_names, "rows": rows_of(read_back)}
    return out


args = sys.argv[1:]
# dumps, not dump: json.dump encodes in Python and writes each token (4 million writes for the
# demo seed's files, most of the reader's time); dumps is the C encoder, the same text.
sys.stdout.write(json.dumps({path: read(kind, path) for kind, path in zip(args[::2], args[1::2])}))
