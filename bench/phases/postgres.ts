import { BATCH_SIZE, CFG, INGEST_KEY, log, startBaseline, startService } from '../context.js';
import { ingestBatches } from '../data.js';
import { serviceIngestRow } from '../ingest.js';
import { AUTH, REPEATED, measure, measureTogether, queryRow, randomPaths } from '../measure.js';
import { buildMinimalPg, pgRawUpsertCeiling } from '../minimal.js';
import { benchPgDatabase } from '../pg-query-data.js';
import type { Row } from '../table.js';
import { createTestDatabase } from '../../test/helpers/postgres.js';
import { barPages, loadReference } from './bars.js';
import { pgStoragePhase } from './storage.js';

/**
 * PostgreSQL, when DATABASE_URL points at a server: random pages against the naive route on
 * the minimal table, one polled URL, storage per row, and 10k-record batches pushed through the
 * service against the raw COPY upsert into a fresh minimal table (each side its own database,
 * dropped afterwards).
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
  await postgresIngest(rows, adminUrl);
}

/** The PostgreSQL ingest rows alone (also `BENCH_PHASES=pgingest`): no query data set needed. */
export async function postgresIngest(rows: Row[], adminUrl: string): Promise<void> {
  const phase = 'PostgreSQL ingest 10k-record batches';
  const batches = ingestBatches('6', CFG.batches, BATCH_SIZE);
  const rawDb = await createTestDatabase(adminUrl, 'mds_bench');
  let ceiling: number;
  try {
    ceiling = await pgRawUpsertCeiling(rawDb.url, batches);
  } finally {
    await rawDb.drop();
  }
  log(`PostgreSQL raw ceiling: ${ceiling.toFixed(0)} records/s`);
  rows.push({
    phase,
    server: 'raw COPY upsert, minimal table (staging + INSERT … ON CONFLICT)',
    rate: ceiling,
    unit: 'rec/s',
  });
  const db = await createTestDatabase(adminUrl, 'mds_bench');
  try {
    const svc = await startService(db.url, undefined);
    try {
      const row = await serviceIngestRow(phase, svc, INGEST_KEY, batches, ceiling, 0.5);
      log(`PostgreSQL service ingest: ${row.rate!.toFixed(0)} records/s rss ${row.rssMb!.toFixed(0)} MB`);
      rows.push(row);
    } finally {
      await svc.stop();
    }
  } finally {
    await db.drop();
  }
}
