"""Times a pull of the same rows into a pandas DataFrame with mds_client, three ways:
paging the JSON API (cursor), one Arrow download, one Parquet download, in ROUNDS rounds that
alternate the three (the machine may be shared: a slow spell hits every way alike), keeping each
way's best. The downloads are the client's default: split into `parallel` (2) date ranges fetched
at once; PULL_PARALLEL=1 in the environment for one request each. With the service's pid, the CPU
seconds the service (its process and every descendant: a cluster's workers) and this client spent
on the best round too (the machine's load changes wall times; CPU shows the work each way costs).
Used by bench/phases/columnar.ts; prints JSON {"json": seconds, "arrow": …, "parquet": …,
"rows_json": n, "cpu_service_json": s, "cpu_client_json": s, …}.
Usage: python3 columnar_pull.py BASE_URL KEY DATE_FROM [ROUNDS [SERVICE_PID]]
"""
import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python" / "src"))
from mds_client import Client  # noqa: E402

base, key, date_from = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 1
pid = sys.argv[5] if len(sys.argv) > 5 else None


def _stat(p):
    """The fields of /proc/<p>/stat after the command name (state first); None once ended."""
    try:
        with open("/proc/%s/stat" % p) as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _tree(root):
    """root and all its descendants: the service is a cluster (a primary and its workers)."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat(name)
            if fields is not None:
                children.setdefault(fields[1], []).append(name)
    out, todo = [], [str(root)]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def service_cpu():
    """utime + stime of the service's processes (all their threads), seconds; 0 without a pid."""
    if pid is None:
        return 0.0
    ticks = 0
    for p in _tree(pid):
        fields = _stat(p)
        if fields is not None:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / 100.0


def client_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

client = Client(base, key, **({"parallel": int(os.environ["PULL_PARALLEL"])} if "PULL_PARALLEL" in os.environ else {}))
client.datasets()  # the OpenAPI document once, outside the timings
out = {}
for r in range(rounds):
    # Each round in a different order, so no way always follows the same one.
    order = ("arrow", "json", "parquet") if r % 2 == 0 else ("parquet", "json", "arrow")
    for via in order:
        cpu0 = (service_cpu(), client_cpu())
        start = time.perf_counter()
        df = client.get("etf/kline", via=via, date_from=date_from)
        sec = time.perf_counter() - start
        if sec <= out.get(via, sec):
            out[via] = sec
            out["cpu_service_" + via] = service_cpu() - cpu0[0]
            out["cpu_client_" + via] = client_cpu() - cpu0[1]
        out["rows_" + via] = len(df)
        del df
print(json.dumps(out))
