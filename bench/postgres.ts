import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ingestBatches, type IngestBatch } from './data.js';
import { pushBatches } from './ingest.js';
import { BENCH_DIR, rssMeter, type Server } from './proc.js';
import type { Row } from './table.js';
import { createTestDatabase } from '../test/helpers/postgres.js';

/**
 * PostgreSQL figures, when DATABASE_URL points at a server: the bench creates a database of its
 * own there (dropped afterwards), pushes the same 10k-record batches through the service, and
 * compares with the raw ceiling of bench/pg-ingest.ts (COPY into a staging table +
 * INSERT … ON CONFLICT, written by the PostgreSQL engineer) when that file exists.
 */
export interface PgDeps {
  startService(file: string, workers: number): Promise<Server>;
  log(s: string): void;
  batches: number;
  batchSize: number;
  INGEST_KEY: string;
}

type Ceiling = (url: string, batches: readonly IngestBatch[]) => Promise<number>;

async function loadCeiling(): Promise<Ceiling | null> {
  const file = path.join(BENCH_DIR, 'pg-ingest.ts');
  if (!fs.existsSync(file)) return null;
  // Imported by URL: the file is owned by the PostgreSQL engineer and may not exist yet.
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const fn = mod.pgRawUpsertCeiling ?? mod.default;
  return typeof fn === 'function' ? (fn as Ceiling) : null;
}

const freshDatabase = (adminUrl: string): ReturnType<typeof createTestDatabase> =>
  createTestDatabase(adminUrl, 'mds_bench');

export async function postgresPhase(rows: Row[], adminUrl: string, deps: PgDeps): Promise<void> {
  const phase = 'PostgreSQL ingest 10k-record batches';
  let ceiling: number | null = null;
  const batches = ingestBatches('6', deps.batches, deps.batchSize);
  const fn = await loadCeiling();
  if (fn) {
    const db = await freshDatabase(adminUrl);
    try {
      ceiling = await fn(db.url, batches);
      deps.log(`PostgreSQL raw ceiling: ${ceiling.toFixed(0)} records/s`);
      rows.push({
        phase,
        server: 'raw ceiling (COPY to staging + INSERT … ON CONFLICT)',
        rate: ceiling,
        unit: 'rec/s',
      });
    } finally {
      await db.drop();
    }
  } else {
    rows.push({ phase, server: 'raw ceiling: bench/pg-ingest.ts not present', rate: null });
  }
  const db = await freshDatabase(adminUrl);
  try {
    const svc = await deps.startService(db.url, 1);
    try {
      const meter = rssMeter(svc.pid);
      const rate = await pushBatches(svc.url, deps.INGEST_KEY, batches);
      const rssMb = meter.stop();
      deps.log(`PostgreSQL service ingest: ${rate.toFixed(0)} records/s`);
      rows.push({
        phase,
        server: 'service over HTTP (end to end)',
        rate,
        unit: 'rec/s',
        rssMb,
        ...(ceiling
          ? {
              ratio: rate / ceiling,
              vs: 'raw ceiling',
              goal: '≥ 0.5× raw ceiling',
              met: rate >= 0.5 * ceiling,
            }
          : {}),
      });
    } finally {
      await svc.stop();
    }
  } catch (err) {
    rows.push({ phase, server: `service failed: ${String(err).slice(0, 120)}`, rate: null });
  } finally {
    await db.drop();
  }
}
