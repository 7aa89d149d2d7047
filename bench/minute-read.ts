import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CATALOG } from '../src/catalog/catalog.js';
import { createStore } from '../src/storage/create-store.js';
import { IngestService } from '../src/ingest/ingest-service.js';
import { buildBatch, toRecord } from '../src/client/batch-builder.js';
import { dayBars } from '../test/helpers/minute-bars.js';
import { startService } from './context.js';
import { monthDays, timed } from './phases/minute.js';

/**
 * Issue 30's minute reads, each as the service's CPU per request (all its processes, from
 * /proc, summed over many requests so the 10 ms ticks do not matter) beside the median wall time:
 * one code's day as a JSON page (1,000 different codes, so the response cache never answers),
 * one code's month as Arrow, every code's day at interval=5m as Arrow, and a limit=10 page of every
 * code's day in time order (20 offsets), and `/health`: what any request costs. Builds given in
 * BENCH_MAINS (`label=path/to/dist/main.js,…`) are measured in turns on one database, so the
 * machine's load falls on each alike.
 *
 *   npx tsx bench/minute-read.ts [sqlite|postgres] [codes=5000]
 *   BENCH_MINUTE_DB: a database seeded by an earlier run (a SQLite file or a PostgreSQL URL);
 *   BENCH_SEED=0 to reuse it as it is; BENCH_ROUNDS (2), BENCH_READS (1,2,3,4,5), BENCH_ENV (A=1;B=2),
 *   BENCH_WARM (3000)
 */
const backend = process.argv[2] ?? 'sqlite';
const codes = Number(process.argv[3] ?? 5000);
const DAY = '2024-03-01';
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const mains = (process.env.BENCH_MAINS ?? `this=${path.resolve('dist/bundle/main.js')}`)
  .split(',')
  .map((s) => {
    const [label, file] = s.split('=') as [string, string];
    return { label, file };
  });

const code = (i: number): string => String(i + 1).padStart(6, '0');

async function seed(url: string): Promise<void> {
  const store = await createStore(url, CATALOG);
  await store.migrate();
  const ingest = new IngestService(CATALOG, store, { maxRecords: 200_000 });
  const dataset = CATALOG.byName.get('stock_minute');
  if (!dataset) throw new Error('no stock_minute dataset');
  const days = monthDays(DAY, 21);
  const all = [
    ...Array.from({ length: codes }, (_, i) => dayBars(code(i), DAY)).flat(),
    ...days.slice(1).flatMap((d) => dayBars(code(0), d)),
  ];
  for (let i = 0; i < all.length; i += 100_000) {
    const rows = all.slice(i, i + 100_000);
    const batch = buildBatch(
      dataset,
      rows.map((r) => toRecord(dataset, r)),
      { source: 'eastmoney', businessDate: DAY, snapshotType: 'incremental', runId: `seed-${i}` },
    );
    const out = await ingest.ingestBytes(new Uint8Array(Buffer.from(JSON.stringify(batch))));
    if (out.kind !== 'processed' || out.record.status !== 'accepted')
      throw new Error(JSON.stringify(out).slice(0, 500));
  }
  await store.close();
}

const load = (): string =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

let url = process.env.BENCH_MINUTE_DB;
if (!url) {
  if (backend === 'postgres') throw new Error('BENCH_MINUTE_DB: a PostgreSQL database URL to seed or reuse');
  url = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mds-minute-read-')), 'minute.db');
}
const dbUrl = url.startsWith('postgres') ? url : `sqlite:${url}`;
if (process.env.BENCH_SEED !== '0') {
  const c = process.cpuUsage();
  await seed(dbUrl);
  const used = process.cpuUsage(c);
  console.log(
    `seeded ${url}: ${codes} codes; ${((used.user + used.system) / 1e6).toFixed(1)} s CPU; load ${load()}`,
  );
}
// BENCH_WARM: requests before each read's measured ones (default 3,000; 1 before this round): after
// 500 a day page still cost 1.4 ms of CPU, after 3,000 0.8 ms (V8 optimises the path in tiers).
const WARM = Number(process.env.BENCH_WARM ?? 3000);
const dayPages = (limit: number, n: number): string[] =>
  Array.from(
    { length: n },
    (_, i) => `code=${code(i % codes)}&date=${DAY}&limit=${limit - Math.floor(i / codes)}`,
  );
const reads: [string, string[], string[]][] = [
  [
    'one code, one day, JSON page (240 rows)',
    Array.from({ length: Math.min(codes, 1000) }, (_, i) => `code=${code(i)}&date=${DAY}&limit=1000`),
    // The same pages with another limit (still the whole day): URLs the measured ones are not.
    dayPages(999, WARM),
  ],
  [
    'one code, one month, Arrow (5,040 rows)',
    Array.from({ length: 30 }, () => 'code=000001&format=arrow'),
    ['code=000001&format=arrow'],
  ],
  [
    `all ${codes} codes, one day, interval=5m, Arrow`,
    Array.from({ length: 3 }, () => `date=${DAY}&interval=5m&format=arrow`),
    [`date=${DAY}&interval=5m&format=arrow`],
  ],
  [
    // Other offsets, so the response cache never answers: each page of the first 200 rows.
    `all ${codes} codes, one day, a limit=10 JSON page (time order)`,
    Array.from({ length: 20 }, (_, i) => `date=${DAY}&limit=10&offset=${i * 10}`),
    [`date=${DAY}&limit=10&offset=500`],
  ],
  // What every request pays whatever it reads: the route with no key, no query and no rows.
  [
    '/health (the fixed cost)',
    Array.from({ length: 2000 }, () => '/health'),
    Array.from({ length: WARM }, () => '/health'),
  ],
];
// BENCH_READS: the reads to measure, by number (1,2,3,4,5); all by default.
const only = (process.env.BENCH_READS ?? '1,2,3,4,5').split(',').map(Number);
const chosen = reads.filter((_, i) => only.includes(i + 1));
// BENCH_ENV: extra service environment (`A=1;B=2`), e.g. MDS_READER_PROCESSES=0.
const env = Object.fromEntries(
  (process.env.BENCH_ENV ?? '')
    .split(';')
    .filter(Boolean)
    .map((kv) => kv.split('=') as [string, string]),
);
for (let round = 0; round < rounds; round++) {
  for (const m of mains) {
    const svc = await startService(url, 1, { MDS_WORKERS: '1', ...env }, m.file);
    try {
      for (const [what, queries, warm] of chosen) {
        // A minute query string, or a path of its own (/health).
        const paths = (qs: string[]): string[] =>
          qs.map((q) => (q.startsWith('/') ? q : `/api/v1/stock/minute?${q}`));
        const r = await timed(svc, paths(queries), paths(warm));
        console.log(
          `${backend} ${m.label} round ${round + 1}: ${what}: ${r.cpuMs.toFixed(2)} ms service CPU/request, median ${r.wallMs.toFixed(1)} ms wall, ${r.bytes} bytes (${queries.length} requests; load ${load()})`,
        );
      }
    } finally {
      await svc.stop();
    }
  }
}
