import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { ROOT, freePort, startServer, tsxArgs, type Server } from './proc.js';

/**
 * What every bench phase shares: the run's sizes, the keys, the log, and how servers start.
 * BENCH_QUICK=1: a small data set and 3 s loads (a smoke run, not for the docs).
 */
export const QUICK = process.env.BENCH_QUICK === '1';
export const CFG = QUICK
  ? {
      codes: 300,
      days: 1000,
      durationSec: 3,
      batches: 5,
      bigBatch: 20_000,
      deepOffset: 100_000,
      deepRuns: 10,
      pacedSec: 4,
    }
  : {
      codes: 1500,
      days: 2000,
      durationSec: 10,
      batches: 20,
      bigBatch: 100_000,
      deepOffset: 100_000,
      deepRuns: 20,
      pacedSec: 10,
    };
export const CONNECTIONS = 32;
/** Each server's load is split into this many rounds, alternating with the others'. */
export const ROUNDS = 2;
export const BATCH_SIZE = 10_000;
export const QUERY_KEY = 'bench-query-key-0123456789abcdef';
export const INGEST_KEY = 'bench-ingest-key-0123456789abcdef';
export const DATA_DIR = process.env.BENCH_DATA_DIR ?? path.join(os.tmpdir(), 'mds-bench-data');
/** What MDS_WORKERS's default (0) gives on this machine: one worker per core. */
export const DEFAULT_WORKERS = os.availableParallelism();
/** Skip the one-process run beside the defaults (BENCH_WORKERS=1, or a one-core machine). */
export const ONLY_ONE_WORKER = process.env.BENCH_WORKERS === '1' || DEFAULT_WORKERS < 2;

const started = Date.now();
export const log = (s: string): void => {
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}\n`);
};
export const elapsedSec = (): number => (Date.now() - started) / 1000;

/**
 * How the service is started: `node dist/bundle/main.js` after `npm run build` (as in
 * production), or, when the build fails or BENCH_TSX=1, tsx on src/ (the same code, ~30 MB more RSS for tsx).
 */
let serviceEntry: string[] | null = null;
function entry(): string[] {
  if (serviceEntry) return serviceEntry;
  serviceEntry = ['--import', 'tsx', 'src/main.ts'];
  if (process.env.BENCH_TSX !== '1') {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8' });
    if (build.status === 0) serviceEntry = [path.join(ROOT, 'dist/bundle/main.js')];
    else
      log(
        `npm run build failed; running the service with tsx:\n${build.stdout}${build.stderr}`.slice(0, 2000),
      );
  }
  log(`service entry: node ${serviceEntry.join(' ')}`);
  return serviceEntry;
}

/**
 * The service on `file` (a SQLite path or a postgres:// URL). `workers` sets MDS_WORKERS;
 * undefined leaves the default start-up settings (what `npm start` does). `main`: another
 * build's entry (bench/bars-ab.ts), else this checkout's.
 */
export async function startService(
  file: string,
  workers: number | undefined,
  extra: Record<string, string> = {},
  main?: string,
): Promise<Server> {
  const port = await freePort();
  const server = await startServer(
    workers === undefined
      ? `service (defaults${DEFAULT_WORKERS > 1 ? `: ${DEFAULT_WORKERS} workers` : ''})`
      : workers > 1
        ? `service (${workers} workers)`
        : 'service (one process, MDS_WORKERS=1)',
    main === undefined ? entry() : [main],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: file.startsWith('postgres') ? file : `sqlite:${file}`,
      MDS_QUERY_KEYS: QUERY_KEY,
      MDS_INGEST_KEYS: INGEST_KEY,
      // Limits are on (counted per request) but high enough never to refuse the bench.
      MDS_STATIC_RATE_PER_MINUTE: '1000000000',
      MDS_STATIC_DAILY_QUOTA: '1000000000000',
      ...(workers === undefined ? {} : { MDS_WORKERS: String(workers) }),
      LOG_LEVEL: 'warn',
      ...extra,
    },
    port,
    '/health',
  );
  await allServing(server, workers ?? DEFAULT_WORKERS);
  return server;
}

/**
 * A cluster's first worker answers /health before the others have joined the port: measure
 * only once every worker serves (the instance's `mds_cluster_workers_serving`; builds without
 * it are taken as they come).
 */
async function allServing(server: Server, workers: number): Promise<void> {
  if (workers < 2) return;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const text = await (await fetch(server.url + '/metrics')).text();
    const m = /^mds_cluster_workers_serving (\d+)$/m.exec(text);
    if (!m || Number(m[1]) >= workers) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${server.name}: not all ${workers} workers serving after 120 s`);
}

/** A reference server of bench/baseline-server.ts on the minimal table (see minimal.ts). */
export async function startBaseline(mode: 'naive' | 'naive-pg' | 'ceiling', file: string): Promise<Server> {
  const port = await freePort();
  return startServer(
    mode,
    tsxArgs('baseline-server.ts', mode, String(port), file),
    {},
    port,
    '/api/v1/etf/kline',
  );
}
