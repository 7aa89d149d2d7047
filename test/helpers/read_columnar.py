"""Reads an Arrow IPC stream or a Parquet file with readers we did not write (pyarrow, and
DuckDB for Parquet when it is installed) and prints what they read as JSON, for
test/query/columnar-formats.test.ts to compare with the service's JSON answer.

Doubles are printed as the hex of their IEEE-754 bits, so the comparison is bit for bit.
Usage: python3 read_columnar.py arrow|parquet FILE [arrow|parquet FILE ...]
Prints one JSON object: FILE → what was read.
"""
import datetime
import json
import struct
import sys

import pyarrow as pa
import pyarrow.parquet as pq


_double = struct.Struct(">d").pack


def value(v):
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


def read(kind, path):
    if kind == "arrow":
        with pa.ipc.open_stream(path) as reader:
            table = reader.read_all()
    else:
        table = pq.read_table(path)
    out = {
        "schema": [[f.name, str(f.type), f.nullable] for f in table.schema],
        # Column by column: no dict per row.
        "rows": [[value(v) for v in row] for row in zip(*(c.to_pylist() for c in table.columns))],
    }
    if kind == "parquet":
        try:
            import duckdb
        except ImportError:
            out["duckdb"] = None
        else:
            con = duckdb.connect()
            con.execute("SET TimeZone = 'UTC'")
            cols = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()
            # Aware timestamps need pytz in DuckDB's Python API: read them as naive UTC instead.
            select = ", ".join(
                'CAST("%s" AS TIMESTAMP) AS "%s"' % (c[0], c[0]) if c[1] == "TIMESTAMP WITH TIME ZONE" else '"%s"' % c[0]
                for c in cols
            )
            rel = con.execute("SELECT %s FROM read_parquet(?)" % select, [path])
            out["duckdb"] = {
                "columns": [d[0] for d in rel.description],
                "rows": [[value(v) for v in row] for row in rel.fetchall()],
            }
    return out


args = sys.argv[1:]
# dumps, not dump: json.dump encodes in Python and writes each token (4 million writes for the
# demo seed's files, most of the reader's time); dumps is the C encoder, the same text.
sys.stdout.write(json.dumps({path: read(kind, path) for kind, path in zip(args[::2], args[1::2])}))
