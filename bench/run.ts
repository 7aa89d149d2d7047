import os from 'node:os';
import { CFG, CONNECTIONS, DATA_DIR, QUICK, elapsedSec, log } from './context.js';
import { buildQueryDatabase } from './data.js';
import { loadGeneratorName } from './load.js';
import { barsPhase } from './phases/bars.js';
import { columnarPhase } from './phases/columnar.js';
import { duringIngestPhase } from './phases/during-ingest.js';
import { historyPhase } from './phases/history.js';
import { ingestPhase } from './phases/ingest.js';
import { createTestDatabase } from '../test/helpers/postgres.js';
import { postgresIngest, postgresPhase } from './phases/postgres.js';
import { queryPhase } from './phases/query.js';
import { freezePhase } from './phases/freeze.js';
import { benchPgDatabase } from './pg-query-data.js';
import { replicaPhase } from './phases/replica.js';
import { storagePhase } from './phases/storage.js';
import { minuteFile, minutePhase } from './phases/minute.js';
import { minuteDuringPhase } from './phases/minute-during.js';
import { printTable, type Row } from './table.js';

/**
 * `npm run bench`: builds its own data, starts each server as its own process on 127.0.0.1,
 * loads it from another process (wrk, installed when missing; autocannon when it cannot be
 * had), and prints one table of side-by-side figures and goal ratios. The references (naive
 * route, raw ingest) use a minimal table: the dataset's fields, unique key as primary key.
 *
 * BENCH_PHASES picks phases (comma-separated; all by default): see PHASES below.
 * BENCH_QUICK=1: a small data set and 3 s loads (a smoke run, not for the docs).
 */
interface Ctx {
  /** The SQLite query data set (etf_daily, CFG.codes × CFG.days rows), built on first use. */
  file: () => Promise<string>;
  /** DATABASE_URL when it points at PostgreSQL. */
  pgUrl: string | null;
}

const PHASES: Record<string, (rows: Row[], ctx: Ctx) => Promise<void> | void> = {
  query: async (rows, { file }) => queryPhase(rows, await file()),
  storage: async (rows, { file }) => storagePhase(rows, await file()),
  // Both shapes on SQLite and, when DATABASE_URL points at PostgreSQL, there too.
  ingest: async (rows, { pgUrl }) => {
    await ingestPhase(rows);
    if (pgUrl) await postgresIngest(rows, pgUrl);
  },
  during: async (rows, { file }) => duringIngestPhase(rows, await file()),
  columnar: async (rows, { file }) => columnarPhase(rows, await file()),
  bars: async (rows, { file }) => barsPhase(rows, await file()),
  history: async (rows, { pgUrl }) => {
    await historyPhase(rows);
    if (pgUrl) await inFreshDatabase(pgUrl, 'mds_bench', (url) => historyPhase(rows, url, 'PostgreSQL'));
  },
  pg: async (rows, { pgUrl }) => {
    if (pgUrl) return postgresPhase(rows, pgUrl);
    log('PostgreSQL: skipped (DATABASE_URL does not point at one)');
    rows.push({ phase: 'PostgreSQL', server: 'skipped: DATABASE_URL not set to postgres://…', rate: null });
  },
  // Issue 24: /health and another key's page while one key runs heavy reads.
  freeze: async (rows, { file }) => freezePhase(rows, await file(), 'SQLite'),
  freezepg: async (rows, { pgUrl }) => {
    if (!pgUrl) {
      log('PostgreSQL freeze: skipped (DATABASE_URL does not point at one)');
      return;
    }
    await freezePhase(rows, await benchPgDatabase(pgUrl), 'PostgreSQL');
  },
  // Issue 30: a market day of minute bars, on SQLite and, with DATABASE_URL, PostgreSQL.
  minute: async (rows, { pgUrl }) => {
    await minutePhase(rows, minuteFile(), 'SQLite');
    if (pgUrl)
      await inFreshDatabase(pgUrl, 'mds_bench_minute', (url) => minutePhase(rows, url, 'PostgreSQL'));
  },
  // Issue 30: /health and a daily page while a market day of minute bars is pushed.
  minuteduring: async (rows, { pgUrl }) => {
    await minuteDuringPhase(rows, minuteFile(), 'SQLite');
    if (pgUrl)
      await inFreshDatabase(pgUrl, 'mds_bench_minute_during', (url) =>
        minuteDuringPhase(rows, url, 'PostgreSQL'),
      );
  },
  // A private primary and a streaming replica (no DATABASE_URL needed).
  replica: (rows) => replicaPhase(rows),
  // The PostgreSQL rows of `ingest` alone (not in the default list: `ingest` runs them).
  pgingest: async (rows, { pgUrl }) => {
    if (pgUrl) return postgresIngest(rows, pgUrl);
    log('PostgreSQL ingest: skipped (DATABASE_URL does not point at one)');
  },
};

/** `run` on a PostgreSQL database made for it, dropped after. */
async function inFreshDatabase(
  pgUrl: string,
  prefix: string,
  run: (url: string) => Promise<void>,
): Promise<void> {
  const db = await createTestDatabase(pgUrl, prefix);
  try {
    await run(db.url);
  } finally {
    await db.drop();
  }
}

async function main(): Promise<void> {
  const all = Object.keys(PHASES).filter((p) => p !== 'pgingest');
  const wanted = (process.env.BENCH_PHASES ?? all.join(',')).split(',');
  const unknown = wanted.filter((p) => !(p in PHASES));
  if (unknown.length)
    throw new Error(`unknown BENCH_PHASES ${unknown.join(', ')}: known ${Object.keys(PHASES).join(', ')}`);
  const generator = loadGeneratorName();
  log(
    `mode ${QUICK ? 'quick' : 'full'}: ${CFG.codes} codes × ${CFG.days} days, ${CFG.durationSec} s loads, ${CONNECTIONS} connections, ${generator}`,
  );
  const rows: Row[] = [];
  // Only the phases that read it wait for it (the ingest phases build their own data).
  let built: Promise<string> | null = null;
  const file = (): Promise<string> =>
    (built ??= buildQueryDatabase(DATA_DIR, CFG.codes, CFG.days, process.env.BENCH_REBUILD === '1', log));
  const pgUrl = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : null;
  for (const name of wanted) {
    log(`phase ${name}`);
    try {
      await PHASES[name]!(rows, { file, pgUrl });
    } catch (err) {
      // One failing phase is a line of the table, not the end of the run.
      log(`phase ${name} failed: ${String(err)}`);
      rows.push({ phase: name, server: `failed: ${String(err).slice(0, 160)}`, rate: null });
    }
  }
  printTable(rows, {
    mode: QUICK ? 'quick' : 'full',
    rows: CFG.codes * CFG.days,
    durationSec: CFG.durationSec,
    connections: CONNECTIONS,
    cpus: os.cpus().length,
    node: process.version,
    loadGenerator: generator,
  });
  log(`done in ${elapsedSec().toFixed(0)} s`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
