import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startService } from './context.js';
import { freshPgDatabase, sqliteFileBytes } from './minimal.js';
import { minuteInFlight, monthDays, pushBodies, timed } from './phases/minute.js';
import { cpuSeconds, type Server } from './proc.js';
import { CATALOG } from '../src/catalog/catalog.js';
import { buildBatch, contentBatchId, toRecord } from '../src/client/batch-builder.js';
import { dayBars } from '../test/helpers/minute-bars.js';

/**
 * Issue 30's year of the whole market: CODES codes × DAYS weekdays of 1-minute bars from
 * 2024-01-02 (240 a code and day, 300 million at the defaults) pushed day by day, as the minute
 * phase pushes one day (100,000-bar batches, `mds push`'s two in flight, each day's bodies built
 * before its clock starts), to the built service at its default start-up on a fresh database;
 * Building a day's bodies as the minute phase does (bars as objects, JSON) costs the pusher about
 * 10 µs a bar, three times what the service spends on them: here TEMPLATES days are built so, and
 * every other day is one of them with its date written over (the same width) and its checksum and
 * batch_id computed anew. Each code-day is its own block, so a repeated walk compresses as a new
 * one would. Then its size and the minute reads of the goals on it (a day in June, so every read has months
 * of blocks before and after it). Run `npm run build` first.
 *
 *   npx tsx bench/minute-year.ts [sqlite|postgres] [days=250] [codes=5000]
 *   BENCH_MINUTE_YEAR_DIR (SQLite file's folder, default $TMPDIR/mds-minute-year);
 *   BENCH_MINUTE_YEAR_PG (PostgreSQL admin URL; the database mds_minute_year is made anew)
 */
const backend = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
const DAYS = Number(process.argv[3] ?? 250);
const CODES = Number(process.argv[4] ?? 5000);
const DIR = process.env.BENCH_MINUTE_YEAR_DIR ?? path.join(os.tmpdir(), 'mds-minute-year');
const PG_ADMIN = process.env.BENCH_MINUTE_YEAR_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const load = (): string => os.loadavg()[0]?.toFixed(1) ?? '?';

async function freshDatabase(): Promise<string> {
  if (backend === 'sqlite') {
    fs.rmSync(DIR, { recursive: true, force: true });
    fs.mkdirSync(DIR, { recursive: true });
    return path.join(DIR, 'year.db');
  }
  return freshPgDatabase(PG_ADMIN, 'mds_minute_year');
}

async function databaseBytes(db: string): Promise<number> {
  if (backend === 'sqlite') return sqliteFileBytes(db);
  const c = new pg.Client({ connectionString: db });
  await c.connect();
  await c.query('VACUUM');
  const r = await c.query('SELECT pg_database_size(current_database())::bigint AS n');
  await c.end();
  return Number((r.rows[0] as { n: string }).n);
}

/**
 * `queries` of the minute endpoint after `warm` (default: the first query once): the median wall
 * time and the service's CPU a request.
 */
async function measure(svc: Server, queries: string[], warm = queries.slice(0, 1)): Promise<string> {
  const path = (q: string): string => `/api/v1/stock/minute?${q}`;
  const m = await timed(svc, queries.map(path), warm.map(path));
  return `median ${m.wallMs.toFixed(1)} ms wall, ${m.cpuMs.toFixed(1)} ms CPU a request, ${m.bytes} bytes`;
}

const TEMPLATES = 5;
const stockMinute = CATALOG.byName.get('stock_minute');
if (!stockMinute) throw new Error('no stock_minute dataset');
const dataset = stockMinute;

interface Template {
  day: string;
  /** Each 100,000-bar batch's records as the bytes sent (JCS key order, as `mds push` sends). */
  batches: { records: Buffer; count: number }[];
}

function templateDay(day: string): Template {
  const all = Array.from({ length: CODES }, (_, i) => dayBars(String(i + 1).padStart(6, '0'), day)).flat();
  const batches: Template['batches'] = [];
  for (let i = 0; i < all.length; i += 100_000) {
    const part = all.slice(i, i + 100_000).map((r) => toRecord(dataset, r));
    // buildBatch's records are in JCS key order; their JSON text is the bytes its checksum hashes.
    const { records } = buildBatch(dataset, part, {
      source: 'eastmoney',
      businessDate: day,
      snapshotType: 'incremental',
      runId: 't',
    });
    batches.push({ records: Buffer.from(JSON.stringify(records)), count: part.length });
  }
  return { day, batches };
}

/** `day`'s bodies from a template day: the records' dates written over, the meta built for them. */
function dayBodies(template: Template, day: string): Buffer[] {
  const from = Buffer.from(template.day);
  return template.batches.map((t, i) => {
    const records = Buffer.from(t.records);
    for (let at = records.indexOf(from); at >= 0; at = records.indexOf(from, at + 10)) records.write(day, at);
    const sha256 = createHash('sha256').update(records).digest('hex');
    const opts = { source: 'eastmoney', businessDate: day, snapshotType: 'incremental' as const };
    const { meta } = buildBatch(dataset, [], { ...opts, runId: `year-${day}-${i}` });
    const head = JSON.stringify({
      meta: { ...meta, batch_id: contentBatchId(dataset, opts, sha256), record_count: t.count },
    });
    return Buffer.concat([
      Buffer.from(`${head.slice(0, -1)},"records":`),
      records,
      Buffer.from(`,"checksum":{"sha256":"${sha256}"}}`),
    ]);
  });
}

const days = monthDays('2024-01-02', DAYS);
const templates = days.slice(0, TEMPLATES).map(templateDay);
const db = await freshDatabase();
let svc = await startService(db, undefined);
const bars = CODES * 240;
let pushed = 0;
let pushSeconds = 0;
let serviceCpu = 0;
const t0 = performance.now();
try {
  for (const [i, day] of days.entries()) {
    const bodies = dayBodies(templates[i % TEMPLATES] as Template, day);
    const cpu0 = cpuSeconds(svc.pid);
    pushSeconds += await pushBodies(svc.url, bodies, minuteInFlight());
    serviceCpu += cpuSeconds(svc.pid) - cpu0;
    pushed += bars;
    if ((i + 1) % 10 === 0 || i === days.length - 1)
      console.log(
        `[${i + 1}/${days.length}] ${day}: ${pushed} bars; pushing ${pushSeconds.toFixed(0)} s ` +
          `(${(pushed / pushSeconds).toFixed(0)} bars/s, service CPU ${((serviceCpu * 1e6) / pushed).toFixed(2)} µs a bar); ` +
          `wall ${((performance.now() - t0) / 1000).toFixed(0)} s; load ${load()}`,
      );
  }
} finally {
  await svc.stop();
}
const bytes = await databaseBytes(db);
console.log(
  `${backend}: ${pushed} bars (${CODES} codes × ${days.length} days) pushed in ${pushSeconds.toFixed(0)} s ` +
    `(${(pushed / pushSeconds).toFixed(0)} bars/s); database ${(bytes / 1e9).toFixed(2)} GB, ` +
    `${(bytes / pushed).toFixed(1)} bytes a bar`,
);

// The reads of issue 30's goals on the year, from one process (MDS_WORKERS=1) as bench/minute-read.ts.
const DAY = days[Math.min(days.length - 1, 105)] as string;
const month = days.filter((d) => d.slice(0, 7) === DAY.slice(0, 7));
const code = (i: number): string => String(i + 1).padStart(6, '0');
svc = await startService(db, 1, { MDS_WORKERS: '1' });
try {
  // The day page after 3,000 pages of other URLs (limit=999 and below: the same rows), as
  // bench/minute-read.ts: a fresh process's first requests run unoptimised.
  const dayPage = (i: number, limit: number): string =>
    `code=${code(i % CODES)}&date=${DAY}&limit=${limit - Math.floor(i / CODES)}`;
  const reads: [string, string[], string[]?][] = [
    [
      `one code, one day (${DAY}), JSON page`,
      Array.from({ length: Math.min(CODES, 500) }, (_, i) => dayPage(i, 1000)),
      Array.from({ length: 3000 }, (_, i) => dayPage(i, 999)),
    ],
    [
      `one code, one month (${month.length} days), Arrow`,
      Array.from(
        { length: 30 },
        (_, i) => `code=${code(i)}&date_from=${month[0]}&date_to=${month.at(-1)}&format=arrow`,
      ),
    ],
    [
      `all ${CODES} codes, one day, interval=5m, Arrow`,
      Array.from({ length: 3 }, () => `date=${DAY}&interval=5m&format=arrow`),
    ],
  ];
  for (const [what, queries, warm] of reads)
    console.log(`${what}: ${await measure(svc, queries, warm)}; load ${load()}`);
} finally {
  await svc.stop();
}
