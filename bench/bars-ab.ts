import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CFG, CONNECTIONS, DATA_DIR, log, startService } from './context.js';
import { buildQueryDatabase } from './data.js';
import { runLoad } from './load.js';
import { AUTH, randomPaths } from './measure.js';
import { loadReference } from './phases/bars.js';
import { cpuSeconds, type Server } from './proc.js';

/**
 * The bars phase's random pages (raw, `adjust=qfq`, `interval=1M` and `1w` over one-year windows; with
 * BENCH_AB_KINDS also `hfq`, and `qfq-sql`, qfq pages sorted by close, adjusted in SQL) against
 * several builds of the service, in alternating rounds on one copy of the query data: on a
 * shared machine only builds measured side by side can be compared.
 *
 *   npx tsx bench/bars-ab.ts <rounds> <seconds> <name>:<path/to/main.js> …
 *   e.g. (another checkout built with npm run build)
 *   npx tsx bench/bars-ab.ts 4 5 before:../before/dist/main.js after:dist/main.js
 *
 * Builds of different schema versions: list the older first. Each build's startup migrates the
 * shared copy, and an older build refuses a database a newer one has migrated; the query data
 * itself is migrated by this checkout, so run this script from the oldest checkout compared.
 *
 * Per build and kind: requests/s, the service's CPU per request, and both as a ratio to the same
 * build's raw pages (the bars goal: qfq and 1M pages ≥ 0.5× raw pages).
 */
const [roundsArg, secondsArg, ...builds] = process.argv.slice(2);
const rounds = Number(roundsArg);
const seconds = Number(secondsArg);
if (!(rounds > 0) || !(seconds > 0) || builds.length === 0) {
  throw new Error('usage: npx tsx bench/bars-ab.ts <rounds> <seconds> <name>:<main.js> …');
}
const variants = builds.map((b) => {
  const [name, main] = b.split(/:(.*)/s);
  if (!name || !main) throw new Error(`not <name>:<main.js>: ${b}`);
  return { name, main: path.resolve(main) };
});

const file = await buildQueryDatabase(DATA_DIR, CFG.codes, CFG.days, false, log);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-bars-ab-'));
const copy = path.join(dir, 'service.db');
fs.copyFileSync(file, copy);
const raw = randomPaths(400_000, 17);
const all: Record<string, string[]> = {
  raw,
  qfq: raw.map((p) => `${p}&adjust=qfq`),
  hfq: raw.map((p) => `${p}&adjust=hfq`),
  // Sorted by an adjusted price: adjusted in SQL (bars-sql.ts), not in the process.
  'qfq-sql': raw.map((p) => `${p}&adjust=qfq&sort=close`),
  '1M': raw.map((p) => `${p.replace(/&offset=\d+/, '')}&interval=1M`),
  '1w': raw.map((p) => `${p.replace(/&offset=\d+/, '')}&interval=1w`),
};
// BENCH_AB_KINDS=raw,qfq,qfq-sql: only these (raw is always measured: the ratios' reference).
const picked = process.env.BENCH_AB_KINDS?.split(',') ?? ['raw', 'qfq', '1M', '1w'];
const kinds = Object.fromEntries(Object.entries(all).filter(([k]) => k === 'raw' || picked.includes(k)));
const servers: Server[] = [];
try {
  for (const v of variants) servers.push(await startService(copy, undefined, {}, v.main));
  await loadReference(servers[0] as Server);
  const sum = new Map<string, { requests: number; seconds: number; cpu: number }>();
  // Each load starts further down its path list, so no page repeats within a build.
  let start = 0;
  for (let round = -1; round < rounds; round++) {
    for (const [i, v] of variants.entries()) {
      const svc = servers[i] as Server;
      for (const [kind, paths] of Object.entries(kinds)) {
        const from = round < 0 ? 390_000 : start;
        const cpu0 = cpuSeconds(svc.pid);
        const r = await runLoad({
          url: svc.url,
          paths: paths.slice(from, from + 20_000),
          headers: AUTH,
          connections: CONNECTIONS,
          durationSec: round < 0 ? 1 : seconds,
        });
        if (round < 0) continue; // warm-up
        const cpu = cpuSeconds(svc.pid) - cpu0;
        const key = `${v.name}\t${kind}`;
        const s = sum.get(key) ?? { requests: 0, seconds: 0, cpu: 0 };
        sum.set(key, {
          requests: s.requests + r.requests,
          seconds: s.seconds + r.requests / r.rps,
          cpu: s.cpu + cpu,
        });
        log(
          `round ${round + 1} ${v.name} ${kind}: ${r.rps.toFixed(0)} req/s, CPU ${((cpu * 1000) / r.requests).toFixed(3)} ms/req`,
        );
      }
      start = (start + 20_000) % 380_000;
    }
  }
  console.log(
    '| build | pages | rate | CPU ms/req | vs raw (rate) | vs raw (CPU) |\n|---|---|---|---|---|---|',
  );
  for (const v of variants) {
    const of = (kind: string) =>
      sum.get(`${v.name}\t${kind}`) as { requests: number; seconds: number; cpu: number };
    const base = of('raw');
    for (const kind of Object.keys(kinds)) {
      const s = of(kind);
      const rps = s.requests / s.seconds;
      const cpuMs = (s.cpu * 1000) / s.requests;
      const vs =
        kind === 'raw'
          ? ['', '']
          : [
              `${(rps / (base.requests / base.seconds)).toFixed(2)}×`,
              `${((base.cpu * 1000) / base.requests / cpuMs).toFixed(2)}×`,
            ];
      console.log(
        `| ${v.name} | ${kind} | ${rps.toFixed(0)} req/s | ${cpuMs.toFixed(3)} | ${vs[0]} | ${vs[1]} |`,
      );
    }
  }
} finally {
  for (const s of servers) await s.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
