import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildQueryDatabase, code, ingestBatches, tradingDays, yearAfter } from './data.js';
import { pushBatches } from './ingest.js';
import { runLoad } from './load.js';
import { randomPaths } from './measure.js';
import { loadReference } from './phases/bars.js';
import { cpuSeconds, freePort, startServer, tsxArgs } from './proc.js';

/**
 * CPU profile of the service under one load, and its top functions by self time:
 *   tsx bench/profile.ts <random|repeated|ingest|qfq|1M> [seconds]
 * qfq / 1M: the bars phase's random one-year pages with `adjust=qfq` / `interval=1M` (its
 * factors and calendar are pushed first; set BENCH_CODES/BENCH_DAYS to the data set's sizes).
 * The service runs with `node --cpu-prof`; the .cpuprofile is kept (path printed) for
 * Chrome DevTools. Uses the quick data set unless BENCH_CODES / BENCH_DAYS say otherwise.
 */
const kind = process.argv[2] ?? 'random';
const seconds = Number(process.argv[3] ?? 5);
const codes = Number(process.env.BENCH_CODES ?? 300);
const days = Number(process.env.BENCH_DAYS ?? 1000);
const KEY = 'bench-query-key-0123456789abcdef';
const IKEY = 'bench-ingest-key-0123456789abcdef';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

function top(file: string, n: number): string[] {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: ProfileNode[] };
  const self = new Map<string, number>();
  let total = 0;
  for (const node of prof.nodes) {
    const hits = node.hitCount ?? 0;
    total += hits;
    const f = node.callFrame;
    const where = f.url ? `${f.url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName || '(anonymous)'} ${where}`;
    self.set(key, (self.get(key) ?? 0) + hits);
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
}

const dataDir = process.env.BENCH_DATA_DIR ?? path.join(os.tmpdir(), 'mds-bench-data');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-prof-'));
const file =
  kind === 'ingest'
    ? path.join(work, 'ingest.db')
    : await buildQueryDatabase(dataDir, codes, days, false, (s) => console.error(s));
const port = await freePort();
const profArgs = ['--cpu-prof', `--cpu-prof-dir=${work}`, '--import', 'tsx'];
// BENCH_PROFILE_NAIVE=1: profile the naive baseline server instead, under the same load.
const naive = process.env.BENCH_PROFILE_NAIVE === '1';
const svc = await startServer(
  naive ? 'naive' : 'service',
  naive
    ? [...profArgs, ...tsxArgs('baseline-server.ts', 'naive', String(port), file).slice(2)]
    : [...profArgs, 'src/main.ts'],
  {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${file}`,
    MDS_QUERY_KEYS: KEY,
    MDS_INGEST_KEYS: IKEY,
    MDS_STATIC_RATE_PER_MINUTE: '1000000000',
    LOG_LEVEL: 'warn',
    MDS_WORKERS: '1',
  },
  port,
  naive ? '/api/v1/etf/kline' : '/health',
);
try {
  if (kind === 'ingest') {
    await pushBatches(svc.url, IKEY, ingestBatches('7', 10, 10_000));
  } else {
    const dayList = tradingDays(days);
    if (kind === 'qfq' || kind === '1M') await loadReference(svc);
    const bars = randomPaths(100_000, 17);
    const paths =
      kind === 'qfq'
        ? bars.map((p) => `${p}&adjust=qfq`)
        : kind === '1M'
          ? bars.map((p) => `${p.replace(/&offset=\d+/, '')}&interval=1M`)
          : kind === 'repeated'
            ? [`/api/v1/etf/kline?code=${code(7)}&date_from=2017-03-01&date_to=2018-02-28&limit=100`]
            : Array.from({ length: 100_000 }, (_, i) => {
                const from = dayList[(i * 7919) % (dayList.length - 260)] as string;
                const to = yearAfter(from);
                return `/api/v1/etf/kline?code=${code((i * 104729) % codes)}&date_from=${from}&date_to=${to}&limit=100&offset=${(i % 2) * 100}`;
              });
    const cpu0 = cpuSeconds(svc.pid);
    const r = await runLoad({
      url: svc.url,
      paths,
      headers: { 'Q-API-KEY': KEY },
      connections: 32,
      durationSec: seconds,
    });
    const cpuMs = ((cpuSeconds(svc.pid) - cpu0) * 1000) / r.requests;
    console.log(
      `${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, CPU ${cpuMs.toFixed(3)} ms/req`,
    );
  }
} finally {
  await svc.stop();
}
// The largest profile is the main thread's (tsx's loader thread writes a small one too).
const prof = fs
  .readdirSync(work)
  .filter((f) => f.endsWith('.cpuprofile'))
  .sort((a, b) => fs.statSync(path.join(work, b)).size - fs.statSync(path.join(work, a)).size)[0];
if (!prof) throw new Error('no .cpuprofile written');
console.log(`profile: ${path.join(work, prof)}`);
for (const line of top(path.join(work, prof), 30)) console.log(line);
