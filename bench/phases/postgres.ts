import pg from 'pg';
import { CFG, INGEST_KEY, log, startBaseline, startService } from '../context.js';
import { SHAPES, shapeBatches } from '../data.js';
import { serviceIngestRow, stepProfile, stepRows } from '../ingest.js';
import { AUTH, REPEATED, measure, measureTogether, queryRow, randomPaths } from '../measure.js';
import { buildMinimalPg, pgRawUpsertCeiling, pgTableBytes, pgTableSizes } from '../minimal.js';
import { benchPgDatabase } from '../pg-query-data.js';
import type { Row } from '../table.js';
import { createTestDatabase } from '../../test/helpers/postgres.js';
import { barPages, loadReference } from './bars.js';
import { INGEST_SHAPES, STORAGE_GOAL } from './ingest.js';
import { pgStoragePhase } from './storage.js';

/**
 * PostgreSQL, when DATABASE_URL points at a server: random pages against the naive route on
 * the minimal table, one polled URL, storage per row (its ingest rows are the `ingest`
 * phase's: postgresIngest).
 */
export async function postgresPhase(rows: Row[], adminUrl: string): Promise<void> {
  const url = await benchPgDatabase(adminUrl);
  const minimalUrl = await buildMinimalPg(url, log);
  await pgStoragePhase(rows, url, minimalUrl);
  const paths = randomPaths(400_000, 4343);
  const warm = randomPaths(20_000, 434343);
  const naiveServer = await startBaseline('naive-pg', minimalUrl);
  try {
    const svc = await startService(url, undefined);
    try {
      const [naive, random] = await measureTogether([
        { server: naiveServer, paths, warmPaths: warm },
        { server: svc, paths, headers: AUTH, warmPaths: warm },
      ]);
      const phase = 'PostgreSQL random pages';
      rows.push(queryRow(phase, 'naive (Fastify + pg, minimal table)', naive!));
      rows.push(
        queryRow(phase, svc.name, random!, {
          ratio: random!.load.rps / naive!.load.rps,
          vs: 'naive',
          goal: '≥ 2.0× naive, p99 ≤ naive',
          met: random!.load.rps >= 2 * naive!.load.rps && random!.load.p99 <= naive!.load.p99,
        }),
      );
      const repeated = await measure(svc, [REPEATED], AUTH);
      rows.push(queryRow('PostgreSQL repeated URL', svc.name, repeated));
      // Adjusted and monthly pages (stored monthly bars) on PostgreSQL too: informative.
      await loadReference(svc);
      await barPages(rows, svc, 'PostgreSQL bars: random pages', false);
    } finally {
      await svc.stop();
    }
  } finally {
    await naiveServer.stop();
  }
}

/** Issue 31: each shape at least this × the raw COPY of the same run. */
const PG_GOAL = 0.35;

/**
 * The PostgreSQL ingest rows alone (also `BENCH_PHASES=pgingest`; no query data set needed):
 * per shape, the raw COPY upsert into a fresh minimal table against the service pushed over
 * HTTP, where a batch's time went, and bytes per row (every table of the service's database
 * against the minimal table), each side its own database, dropped afterwards.
 */
export async function postgresIngest(rows: Row[], adminUrl: string): Promise<void> {
  for (const shape of INGEST_SHAPES) {
    const phase = `PostgreSQL ingest, ${SHAPES[shape].label}`;
    const batches = shapeBatches(shape, '6', CFG.batches);
    const records = batches.reduce((n, b) => n + b.rows.length, 0);
    const rawDb = await createTestDatabase(adminUrl, 'mds_bench');
    let ceiling: number;
    let minBytes: number;
    try {
      ceiling = await pgRawUpsertCeiling(rawDb.url, batches);
      await vacuumAnalyze(rawDb.url);
      minBytes = (await pgTableBytes(rawDb.url, 'etf_daily')) / records;
    } finally {
      await rawDb.drop();
    }
    log(`PostgreSQL ${shape} raw COPY: ${ceiling.toFixed(0)} records/s`);
    rows.push({
      phase,
      server: 'raw COPY upsert, minimal table (staging + INSERT … ON CONFLICT)',
      rate: ceiling,
      unit: 'rec/s',
    });
    // One batch at a time on a database of its own: the figure of the rounds before the bench
    // pushed as mds push does (two in flight, below).
    const oneDb = await createTestDatabase(adminUrl, 'mds_bench');
    try {
      const one = await startService(oneDb.url, undefined);
      try {
        rows.push(await serviceIngestRow(phase, one, INGEST_KEY, batches, ceiling, PG_GOAL, 1));
      } finally {
        await one.stop();
      }
    } finally {
      await oneDb.drop();
    }
    const db = await createTestDatabase(adminUrl, 'mds_bench');
    try {
      const svc = await startService(db.url, undefined);
      try {
        const before = await stepProfile(svc.url);
        const row = await serviceIngestRow(phase, svc, INGEST_KEY, batches, ceiling, PG_GOAL);
        log(`PostgreSQL ${shape} service: ${row.rate!.toFixed(0)} records/s (${row.ratio!.toFixed(2)}×)`);
        rows.push(row, ...stepRows(phase, before, await stepProfile(svc.url), records));
      } finally {
        await svc.stop();
      }
      // Both sides vacuumed first: dead tuples of the upserts are not what a row costs.
      await vacuumAnalyze(db.url);
      const sizes = await pgTableSizes(db.url);
      const svcBytes = sizes.reduce((n, t) => n + t.bytes, 0) / records;
      const parts = sizes
        .filter((t) => t.bytes >= 0.01 * svcBytes * records)
        .map((t) => `${t.name} ${(t.bytes / records).toFixed(0)}`)
        .join(', ');
      log(
        `storage ${shape} (PostgreSQL): service ${svcBytes.toFixed(0)} B/row (${parts}), minimal ${minBytes.toFixed(0)}`,
      );
      rows.push({
        phase: `storage per etf_daily row after the ${shape} shape (PostgreSQL)`,
        server: `service's tables ${svcBytes.toFixed(0)} bytes/row (${parts}); minimal table ${minBytes.toFixed(0)}`,
        rate: null,
        ratio: svcBytes / minBytes,
        vs: 'minimal',
        goal: `≤ ${STORAGE_GOAL}× minimal`,
        met: svcBytes <= STORAGE_GOAL * minBytes,
      });
    } finally {
      await db.drop();
    }
  }
}

async function vacuumAnalyze(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('VACUUM ANALYZE');
  } finally {
    await c.end();
  }
}
