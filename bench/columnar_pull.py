"""Times one pull of the same rows into a pandas DataFrame with mds_client, three ways:
paging the JSON API (cursor), one Arrow download, one Parquet download. Used by
bench/phases/columnar.ts; prints JSON {"json": seconds, "arrow": …, "parquet": …, "rows": n}.
Usage: python3 columnar_pull.py BASE_URL KEY DATE_FROM
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python" / "src"))
from mds_client import Client  # noqa: E402

base, key, date_from = sys.argv[1:4]
client = Client(base, key)
client.datasets()  # the OpenAPI document once, outside the timings
out = {}
for via in ("arrow", "parquet", "json"):
    start = time.perf_counter()
    df = client.get("etf/kline", via=via, date_from=date_from)
    out[via] = time.perf_counter() - start
    out["rows_" + via] = len(df)
    del df
print(json.dumps(out))
