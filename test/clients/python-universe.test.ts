// The Python client's client.universe() and panel(..., universe=) against a listening service
// seeded with the demo data (docs/universes.md), with a real interpreter: each compared with
// what the JSON API gives for the same question, computed independently in the script.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { QUERY_KEY, type Harness } from '../helpers/harness.js';
import { listeningDemoOn } from '../helpers/demo-seed.js';
import { pythonHas, runPythonFull } from '../helpers/python.js';
import { ROOT } from '../helpers/repo-root.js';

const DEMO = { end: '2026-12-04', days: 250, seed: 42 };

const SCRIPT = String.raw`
import json, os, sys, urllib.request, warnings
import pandas as pd
from mds_client import Client

base, key = os.environ["MDS_URL"], os.environ["MDS_KEY"]
client = Client(base, key, progress=False)

def api(path):
    req = urllib.request.Request(base + path, headers={"Q-API-KEY": key})
    return json.load(urllib.request.urlopen(req))

out = {}
past = client.universe("2026-03-02")
out["past"] = {"n": len(past), "st": bool(past.set_index("code").loc["600087", "is_st"]),
               "delist": str(past.set_index("code").loc["600087", "delist_date"].date()),
               "dtype": str(past["delist_date"].dtype).startswith("datetime64"), "meta_calendar": past.attrs["meta"]["calendar"]}
out["no_st"] = sorted(client.universe("2026-04-15", include_st=False)["code"])
out["no_st_api"] = sorted(r["code"] for r in api("/api/v1/universe?date=2026-04-15&include_st=false")["data"])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    none = client.universe("2026-12-04", index="399006")
out["none"] = {"n": len(none), "warned": [str(w.message) for w in caught]}
members = client.universe("2026-12-04", index="000300.SH", as_="records")
out["weights"] = all(isinstance(r["weight"], float) for r in members) and len(members) == 10

wide = client.panel(None, "close", "stock/daily", universe="000300", date_from="2026-01-01", date_to="2026-12-04")
out["columns"] = list(wide.columns)
# The independent answer: every bar of the range kept where an interval of the index covers its date.
spans = api("/api/v1/index/members?index_code=000300&limit=1000")["data"]
cells = {}
for code in wide.columns:
    cursor = None
    while True:
        page = api("/api/v1/stock/daily?code=%s&date_from=2026-01-01&date_to=2026-12-04&fields=code,date,close&limit=1000%s"
                   % (code, "&cursor=" + cursor if cursor else ""))
        for r in page["data"]:
            if any(s["stock_code"] == code and s["in_date"] <= r["date"] and (s["out_date"] is None or r["date"] <= s["out_date"]) for s in spans):
                cells[(r["date"], code)] = r["close"]
        cursor = page["meta"].get("next_cursor")
        if not cursor:
            break
got = {(d.strftime("%Y-%m-%d"), c): v for (d, c), v in wide.stack().dropna().items()}
out["panel_equal"] = got == cells
out["diff"] = [str(k) for k in list(set(got) ^ set(cells))[:5]] + [str((k, got[k], cells[k])) for k in got if k in cells and got[k] != cells[k]][:5]
out["panel_cells"] = len(got)
out["byd_gap"] = bool(wide.loc["2026-04-15":"2026-08-13", "002594"].isna().all())
try:
    client.panel(None, "close", "stock/daily")
    out["no_universe"] = "no error"
except ValueError as e:
    out["no_universe"] = str(e)
cs = client.cross_section("2026-12-04", universe="000300", adjust="qfq")
out["cs_members"] = {"n": len(cs), "fresh": bool((cs["stale_days"] == 0).all()), "dtype": str(cs["stale_days"].dtype)}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    fresh = client.cross_section("2026-12-04", max_stale_days=3)
out["cs_fresh"] = {"n": len(fresh), "warned": [str(w.message) for w in caught], "left_out": fresh.attrs["latest_on"]["left_out"]}
every = client.cross_section("2026-12-04").set_index("code")
out["cs_suspended"] = [str(every.loc["600610", "date"].date()), int(every.loc["600610", "stale_days"])]
out["get_latest"] = len(client.get("stock/daily", latest_on="2026-12-04"))
print(json.dumps(out, ensure_ascii=False))
`;

describe(
  'Python client: universe() and panel(universe=) on the demo data',
  { skip: !pythonHas('pandas', 'the Python universe suite') },
  () => {
    let h: Harness;
    let base: string;
    before(async () => {
      ({ h, base } = await listeningDemoOn('sqlite', DEMO));
    });
    after(async () => h?.close());

    it('answers as the JSON API does, warnings for what was not judged, a survivorship-free panel', async () => {
      let stdout: string;
      try {
        ({ stdout } = await runPythonFull(['-c', SCRIPT], {
          env: {
            ...process.env,
            MDS_URL: base,
            MDS_KEY: QUERY_KEY,
            PYTHONPATH: path.join(ROOT, 'clients', 'python', 'src'),
          },
        }));
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string };
        assert.fail(`${e.stdout ?? ''}${e.stderr ?? String(err)}`);
      }
      const out = JSON.parse(stdout) as Record<string, unknown>;
      assert.deepEqual(out.past, {
        n: 13,
        st: true,
        delist: '2026-06-08',
        dtype: true,
        meta_calendar: 'open',
      });
      assert.deepEqual(out.no_st, out.no_st_api);
      assert.equal((out.no_st as string[]).length, 12);
      const none = out.none as { n: number; warned: string[] };
      assert.equal(none.n, 0);
      assert.equal(none.warned.length, 1);
      assert.match(none.warned[0] as string, /neither membership intervals nor constituents snapshots/);
      assert.equal(out.weights, true);
      assert.ok((out.columns as string[]).includes('600087'), 'a member that left, and was delisted since');
      assert.ok((out.columns as string[]).includes('002594'));
      assert.equal(out.panel_equal, true, JSON.stringify(out.diff));
      assert.ok((out.panel_cells as number) > 2000);
      assert.equal(out.byd_gap, true);
      assert.match(String(out.no_universe), /codes=None needs universe=/);
      assert.deepEqual(out.cs_members, { n: 10, fresh: true, dtype: 'Int64' });
      const fresh = out.cs_fresh as { n: number; warned: string[]; left_out: number };
      assert.deepEqual([fresh.n, fresh.left_out], [11, 3]);
      assert.deepEqual(fresh.warned, [
        'cross_section on 2026-12-04: 3 row(s) left out as staler than max_stale_days=3',
      ]);
      assert.deepEqual(out.cs_suspended, ['2026-11-26', 6]);
      assert.equal(out.get_latest, 14);
    });
  },
);
