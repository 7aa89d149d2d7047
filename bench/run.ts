import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildQueryDatabase, code, ingestBatches, tradingDays, yearAfter } from './data.js';
import { rawUpsertCeiling, pushBatches, pushOne } from './ingest.js';
import type { LoadResult } from './load.js';
import {
  ROOT,
  cpuSeconds,
  freePort,
  processTree,
  rssMeter,
  runLoad,
  startServer,
  tsxArgs,
  type Server,
} from './proc.js';
import { postgresPhase } from './postgres.js';
import { buildPgQueryDatabase } from './pg-query-data.js';
import { printTable, type Row } from './table.js';

/**
 * `npm run bench`: builds its own data, starts each server as its own process on 127.0.0.1,
 * loads it from another process, and prints one table of side-by-side figures and goal ratios.
 * BENCH_QUICK=1: a small data set and 3 s loads (a smoke run, not for the docs).
 */
const QUICK = process.env.BENCH_QUICK === '1';
const CFG = QUICK
  ? {
      codes: 300,
      days: 1000,
      durationSec: 3,
      batches: 5,
      bigBatch: 20_000,
      deepOffset: 100_000,
      deepRuns: 10,
    }
  : {
      codes: 1500,
      days: 2000,
      durationSec: 10,
      batches: 20,
      bigBatch: 100_000,
      deepOffset: 100_000,
      deepRuns: 20,
    };
const CONNECTIONS = 32;
/** Each server's load is split into this many rounds, alternating with the others'. */
const ROUNDS = 2;
const BATCH_SIZE = 10_000;
const QUERY_KEY = 'bench-query-key-0123456789abcdef';
const INGEST_KEY = 'bench-ingest-key-0123456789abcdef';
const DATA_DIR = process.env.BENCH_DATA_DIR ?? path.join(os.tmpdir(), 'mds-bench-data');
const WORKERS = Math.max(2, os.cpus().length);
/** BENCH_PHASES=query,ingest,pg picks phases (all by default); BENCH_WORKERS=1 skips the cluster run. */
const PHASES = new Set((process.env.BENCH_PHASES ?? 'query,ingest,pg').split(','));
const ONLY_ONE_WORKER = process.env.BENCH_WORKERS === '1';

const started = Date.now();
const log = (s: string): void => {
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}\n`);
};

/** One-year windows of random codes: the random pages every query server is loaded with. */
function randomPaths(n: number, seed: number): string[] {
  const days = tradingDays(CFG.days);
  const out: string[] = [];
  let s = seed;
  const rand = (k: number): number => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s % k;
  };
  for (let i = 0; i < n; i++) {
    const from = days[rand(days.length - 260)] as string;
    const to = yearAfter(from);
    out.push(
      `/api/v1/etf/kline?code=${code(rand(CFG.codes))}&date_from=${from}&date_to=${to}&limit=100&offset=${rand(2) * 100}`,
    );
  }
  return out;
}

const REPEATED = `/api/v1/etf/kline?code=${code(7)}&date_from=2017-03-01&date_to=2018-02-28&limit=100`;

/**
 * How the service is started: `node dist/main.js` after `npm run build` (as in production), or,
 * when the build fails or BENCH_TSX=1, tsx on src/ (the same code, ~30 MB more RSS for tsx).
 */
let serviceEntry: string[] | null = null;
function entry(): string[] {
  if (serviceEntry) return serviceEntry;
  serviceEntry = ['--import', 'tsx', 'src/main.ts'];
  if (process.env.BENCH_TSX !== '1') {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8' });
    if (build.status === 0) serviceEntry = [path.join(ROOT, 'dist/main.js')];
    else
      log(
        `npm run build failed; running the service with tsx:\n${build.stdout}${build.stderr}`.slice(0, 2000),
      );
  }
  log(`service entry: node ${serviceEntry.join(' ')}`);
  return serviceEntry;
}

async function startService(
  file: string,
  workers: number,
  extra: Record<string, string> = {},
): Promise<Server> {
  const port = await freePort();
  return startServer(
    workers > 1 ? `service (${workers} workers)` : 'service',
    entry(),
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: file.startsWith('postgres') ? file : `sqlite:${file}`,
      MDS_QUERY_KEYS: QUERY_KEY,
      MDS_INGEST_KEYS: INGEST_KEY,
      // Limits are on (counted per request) but high enough never to refuse the bench.
      MDS_STATIC_RATE_PER_MINUTE: '1000000000',
      MDS_STATIC_DAILY_QUOTA: '1000000000000',
      MDS_WORKERS: String(workers),
      LOG_LEVEL: 'warn',
      ...extra,
    },
    port,
    '/health',
  );
}

async function startBaseline(mode: 'naive' | 'naive-pg' | 'ceiling', file: string): Promise<Server> {
  const port = await freePort();
  return startServer(
    mode,
    tsxArgs('baseline-server.ts', mode, String(port), file),
    {},
    port,
    '/api/v1/etf/kline',
  );
}

interface Measured {
  load: LoadResult;
  rssMb: number;
  /** CPU time of the server (all its processes) per request, ms: robust to a busy machine. */
  cpuMs: number;
}

interface Load {
  server: Server;
  paths: string[];
  headers?: Record<string, string>;
  warmPaths?: string[];
}

/**
 * Loads several servers in alternating rounds (A B C, A B C, …) of CFG.durationSec / ROUNDS
 * seconds each, so that a busy spell of this shared machine falls on all of them alike; each
 * server gets CFG.durationSec of load in all. Rates are summed over the rounds, p50 is the mean
 * of the rounds' p50, p99 the worst round's.
 */
async function measureTogether(loads: Load[]): Promise<Measured[]> {
  // A short warm-up (JIT, page cache) outside the measured window, on other paths.
  for (const l of loads) {
    await runLoad({
      url: l.server.url,
      paths: l.warmPaths ?? l.paths,
      headers: l.headers ?? {},
      connections: CONNECTIONS,
      durationSec: 1,
    });
  }
  const meters = loads.map((l) => rssMeter(l.server.pid));
  const cpu = loads.map(() => 0);
  const results: LoadResult[][] = loads.map(() => []);
  const seconds = CFG.durationSec / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, l] of loads.entries()) {
      const before = cpuSeconds(l.server.pid);
      // Each round starts further down the path list, so no page repeats across rounds.
      const start = Math.min(round * 50_000, Math.max(0, l.paths.length - 1));
      const r = await runLoad({
        url: l.server.url,
        paths: l.paths.slice(start),
        headers: l.headers ?? {},
        connections: CONNECTIONS,
        durationSec: seconds,
      });
      cpu[i]! += cpuSeconds(l.server.pid) - before;
      results[i]!.push(r);
    }
  }
  return loads.map((l, i) => {
    const rs = results[i]!;
    const requests = rs.reduce((n, r) => n + r.requests, 0);
    const statuses: Record<string, number> = {};
    for (const r of rs) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
    const load: LoadResult = {
      rps: requests / CFG.durationSec,
      p50: rs.reduce((n, r) => n + r.p50, 0) / rs.length,
      p99: Math.max(...rs.map((r) => r.p99)),
      requests,
      statuses,
      errors: rs.reduce((n, r) => n + r.errors, 0),
    };
    const rssMb = meters[i]!.stop();
    const cpuMs = (cpu[i]! * 1000) / Math.max(1, requests);
    const ok = (statuses['2xx'] ?? 0) + (statuses['3xx'] ?? 0);
    if (ok < requests * 0.99 || load.errors > 0) {
      throw new Error(
        `${l.server.name}: ${JSON.stringify(statuses)}, ${load.errors} errors — not a valid run`,
      );
    }
    log(
      `${l.server.name}: ${load.rps.toFixed(0)} req/s p50 ${load.p50.toFixed(1)} ms p99 ${load.p99} ms rss ${rssMb.toFixed(0)} MB cpu ${cpuMs.toFixed(3)} ms/req`,
    );
    return { load, rssMb, cpuMs };
  });
}

async function measure(
  server: Server,
  paths: string[],
  headers: Record<string, string> = {},
  warmPaths: string[] = paths,
): Promise<Measured> {
  return (await measureTogether([{ server, paths, headers, warmPaths }]))[0]!;
}

const queryRow = (phase: string, server: string, m: Measured, extra: Partial<Row> = {}): Row => ({
  phase,
  server,
  rate: m.load.rps,
  unit: 'req/s',
  p50: m.load.p50,
  p99: m.load.p99,
  rssMb: m.rssMb,
  cpuMs: m.cpuMs,
  ...extra,
});

/**
 * Median wall time (ms) of sequential requests, one distinct URL each (`path(i)`), so the
 * response cache never answers: this measures the database path.
 */
async function medianMs(
  server: Server,
  path: (i: number) => string,
  runs: number,
): Promise<{ ms: number; bodies: unknown[] }> {
  const times: number[] = [];
  const bodies: unknown[] = [];
  for (let i = 0; i < runs; i++) {
    const p = path(i);
    const t = performance.now();
    const r = await fetch(server.url + p, { headers: { 'Q-API-KEY': QUERY_KEY } });
    const body = await r.json();
    if (r.status !== 200) throw new Error(`${p}: ${r.status} ${JSON.stringify(body)}`);
    times.push(performance.now() - t);
    bodies.push(body);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)] as number, bodies };
}

async function queryPhases(rows: Row[], file: string): Promise<void> {
  // More paths than any run makes requests, so no page repeats (see load.ts).
  const paths = randomPaths(150_000, 42);
  const warm = randomPaths(20_000, 4242);
  const auth = { 'Q-API-KEY': QUERY_KEY };
  const servers: Server[] = [];
  try {
    const ceilingServer = await startBaseline('ceiling', file);
    servers.push(ceilingServer);
    const naiveServer = await startBaseline('naive', file);
    servers.push(naiveServer);
    const services: Server[] = [];
    for (const workers of ONLY_ONE_WORKER ? [1] : [1, WORKERS]) {
      const svc = await startService(file, workers);
      servers.push(svc);
      if (workers > 1 && processTree(svc.pid).length < 2) {
        rows.push({
          phase: 'random pages',
          server: `${svc.name}: MDS_WORKERS not supported by this build`,
          rate: null,
        });
      } else {
        services.push(svc);
      }
    }

    // Random pages: ceiling, naive and the service(s), in alternating rounds.
    const [ceiling, naive, ...random] = await measureTogether([
      { server: ceilingServer, paths, warmPaths: warm },
      { server: naiveServer, paths, warmPaths: warm },
      ...services.map((server) => ({ server, paths, headers: auth, warmPaths: warm })),
    ]);
    rows.push(queryRow('random pages', 'HTTP ceiling (pre-serialised page)', ceiling!));
    rows.push(queryRow('random pages', 'naive (Fastify + better-sqlite3)', naive!));
    for (const [i, svc] of services.entries()) {
      const m = random[i]!;
      rows.push(
        queryRow('random pages', svc.name, m, {
          ratio: m.load.rps / naive!.load.rps,
          vs: 'naive',
          goal: '≥ 2.0× naive, p99 ≤ naive',
          met: m.load.rps >= 2 * naive!.load.rps && m.load.p99 <= naive!.load.p99,
        }),
      );
      rows.push({
        phase: 'random pages (CPU per request)',
        server: svc.name,
        rate: null,
        cpuMs: m.cpuMs,
        ratio: naive!.cpuMs / m.cpuMs,
        vs: 'naive ÷ service',
        goal: 'informative: ≥ 2 = half the CPU of naive',
      });
    }

    // One URL polled: the ceiling again beside the service, plain and with If-None-Match.
    const conditional: Load[] = [];
    for (const svc of services) {
      const first = await fetch(svc.url + REPEATED, { headers: auth });
      const etag = first.headers.get('etag');
      if (etag)
        conditional.push({ server: svc, paths: [REPEATED], headers: { ...auth, 'If-None-Match': etag } });
    }
    const [ceiling2, ...polled] = await measureTogether([
      { server: ceilingServer, paths: [REPEATED] },
      ...services.map((server) => ({ server, paths: [REPEATED], headers: auth })),
      ...conditional,
    ]);
    rows.push(queryRow('repeated URL', 'HTTP ceiling (pre-serialised page)', ceiling2!));
    for (const [i, svc] of services.entries()) {
      const m = polled[i]!;
      rows.push(
        queryRow('repeated URL', svc.name, m, {
          ratio: m.load.rps / ceiling2!.load.rps,
          vs: 'ceiling',
          goal: '≥ 0.6× ceiling',
          met: m.load.rps >= 0.6 * ceiling2!.load.rps,
        }),
      );
    }
    for (const [i, l] of conditional.entries()) {
      const m = polled[services.length + i]!;
      rows.push(
        queryRow('repeated URL, If-None-Match → 304', l.server.name, m, {
          ratio: m.load.rps / ceiling2!.load.rps,
          vs: 'ceiling',
        }),
      );
    }
    if (services[0]) await deepPages(rows, services[0]);
  } finally {
    for (const s of servers) await s.stop();
  }
}

/** Random pages and a repeated URL on PostgreSQL: the service against the naive route on pg. */
async function pgQueryPhases(rows: Row[], adminUrl: string): Promise<void> {
  const url = await buildPgQueryDatabase(
    adminUrl,
    CFG.codes,
    CFG.days,
    process.env.BENCH_REBUILD === '1',
    log,
  );
  const paths = randomPaths(150_000, 4343);
  const warm = randomPaths(20_000, 434343);
  const auth = { 'Q-API-KEY': QUERY_KEY };
  const naiveServer = await startBaseline('naive-pg', url);
  try {
    const svc = await startService(url, 1);
    try {
      const [naive, random] = await measureTogether([
        { server: naiveServer, paths, warmPaths: warm },
        { server: svc, paths, headers: auth, warmPaths: warm },
      ]);
      const phase = 'PostgreSQL random pages';
      rows.push(queryRow(phase, 'naive (Fastify + pg)', naive!));
      rows.push(
        queryRow(phase, 'service', random!, {
          ratio: random!.load.rps / naive!.load.rps,
          vs: 'naive',
          goal: '≥ 2.0× naive, p99 ≤ naive',
          met: random!.load.rps >= 2 * naive!.load.rps && random!.load.p99 <= naive!.load.p99,
        }),
      );
      const repeated = await measure(svc, [REPEATED], auth);
      rows.push(queryRow('PostgreSQL repeated URL', 'service', repeated));
    } finally {
      await svc.stop();
    }
  } finally {
    await naiveServer.stop();
  }
}

async function deepPages(rows: Row[], svc: Server): Promise<void> {
  const base = '/api/v1/etf/kline?limit=100';
  await medianMs(svc, () => base, 1); // the first request counts the table once (cached per version)
  const shallow = await medianMs(svc, (i) => `${base}&offset=${i}`, CFG.deepRuns);
  const deep = await medianMs(svc, (i) => `${base}&offset=${CFG.deepOffset + i}`, CFG.deepRuns);
  const push = (server: string, ms: number, extra: Partial<Row> = {}): void => {
    rows.push({
      phase: 'deep page (unfiltered, sequential)',
      server,
      rate: 1000 / ms,
      unit: 'req/s',
      p50: ms,
      ...extra,
    });
  };
  push('service, offset 0', shallow.ms);
  push(`service, offset ${CFG.deepOffset.toLocaleString('en')}`, deep.ms, {
    ratio: deep.ms / shallow.ms,
    vs: 'time ÷ offset 0',
    goal: '< 10× offset 0 (or cursor)',
    met: deep.ms < 10 * shallow.ms,
  });
  // Keyset paging, when the service offers it: the cursors of the deep pages just fetched.
  const cursors = deep.bodies
    .map((b) => (b as { meta?: { next_cursor?: string | null } }).meta?.next_cursor)
    .filter((c): c is string => typeof c === 'string');
  if (cursors.length === deep.bodies.length) {
    const viaCursor = await medianMs(
      svc,
      (i) => `${base}&cursor=${encodeURIComponent(cursors[i] as string)}`,
      CFG.deepRuns,
    );
    push(`service, cursor at row ${(CFG.deepOffset + 100).toLocaleString('en')}`, viaCursor.ms, {
      ratio: viaCursor.ms / shallow.ms,
      vs: 'time ÷ offset 0',
      goal: '< 10× offset 0',
      met: viaCursor.ms < 10 * shallow.ms,
    });
  } else {
    rows.push({
      phase: 'deep page (unfiltered, sequential)',
      server: 'keyset cursor: not offered by this build',
      rate: null,
    });
  }
}

async function ingestPhases(rows: Row[]): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-ingest-'));
  try {
    log(`ingest: building ${CFG.batches} × ${BATCH_SIZE} records and one ${CFG.bigBatch}-record batch`);
    const batches = ingestBatches('7', CFG.batches, BATCH_SIZE);
    const ceiling = await rawUpsertCeiling(path.join(dir, 'raw.db'), batches);
    log(`ingest raw ceiling: ${ceiling.toFixed(0)} records/s`);
    rows.push({
      phase: 'ingest 10k-record batches',
      server: 'raw upsert ceiling (1 statement, 1 tx per batch)',
      rate: ceiling,
      unit: 'rec/s',
    });

    const svc = await startService(path.join(dir, 'service.db'), 1);
    try {
      const meter = rssMeter(svc.pid);
      const rate = await pushBatches(svc.url, INGEST_KEY, batches);
      const rssMb = meter.stop();
      log(`ingest service: ${rate.toFixed(0)} records/s rss ${rssMb.toFixed(0)} MB`);
      rows.push({
        phase: 'ingest 10k-record batches',
        server: 'service over HTTP (end to end)',
        rate,
        unit: 'rec/s',
        rssMb,
        ratio: rate / ceiling,
        vs: 'raw ceiling',
        goal: '≥ 0.4× raw ceiling',
        met: rate >= 0.4 * ceiling,
      });
      batches.length = 0;
      const big = ingestBatches('8', 1, CFG.bigBatch)[0]!;
      const bigMeter = rssMeter(svc.pid);
      const bigRate = await pushOne(svc.url, INGEST_KEY, big);
      const bigRss = bigMeter.stop();
      log(
        `ingest one ${CFG.bigBatch}-record batch: ${bigRate.toFixed(0)} records/s rss ${bigRss.toFixed(0)} MB`,
      );
      rows.push({
        phase: `ingest one ${CFG.bigBatch.toLocaleString('en')}-record batch`,
        server: 'service over HTTP',
        rate: bigRate,
        unit: 'rec/s',
        rssMb: bigRss,
        goal: 'peak RSS ≤ 1 GB',
        met: bigRss <= 1024,
      });
    } finally {
      await svc.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  log(
    `mode ${QUICK ? 'quick' : 'full'}: ${CFG.codes} codes × ${CFG.days} days, ${CFG.durationSec} s loads, ${CONNECTIONS} connections`,
  );
  const rows: Row[] = [];
  const file = await buildQueryDatabase(
    DATA_DIR,
    CFG.codes,
    CFG.days,
    process.env.BENCH_REBUILD === '1',
    log,
  );
  if (PHASES.has('query')) await queryPhases(rows, file);
  const qRss = rows.filter((r) => r.phase === 'random pages' && r.server.startsWith('service') && r.rssMb);
  for (const r of qRss) {
    rows.push({
      phase: 'memory under query load',
      server: r.server,
      rate: null,
      rssMb: r.rssMb,
      goal: 'RSS ≤ 250 MB per process',
      met: (r.rssMb ?? 0) <= 250 * (r.server.includes('workers') ? WORKERS + 1 : 1),
    });
  }
  if (PHASES.has('ingest')) await ingestPhases(rows);
  if (!PHASES.has('pg')) {
    // not asked for
  } else if (process.env.DATABASE_URL?.startsWith('postgres')) {
    await pgQueryPhases(rows, process.env.DATABASE_URL);
    await postgresPhase(rows, process.env.DATABASE_URL, {
      startService,
      log,
      batches: CFG.batches,
      batchSize: BATCH_SIZE,
      INGEST_KEY,
    });
  } else {
    log('PostgreSQL: skipped (DATABASE_URL does not point at one)');
    rows.push({ phase: 'PostgreSQL', server: 'skipped: DATABASE_URL not set to postgres://…', rate: null });
  }
  printTable(rows, {
    mode: QUICK ? 'quick' : 'full',
    rows: CFG.codes * CFG.days,
    durationSec: CFG.durationSec,
    connections: CONNECTIONS,
    cpus: os.cpus().length,
    node: process.version,
    loadGenerator: 'autocannon 8 (own process)',
  });
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
