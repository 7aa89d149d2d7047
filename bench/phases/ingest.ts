import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CFG, INGEST_KEY, log, startService } from '../context.js';
import { SHAPES, ingestBatches, shapeBatches, type IngestShape } from '../data.js';
import { pushOne, serviceIngestRow, stepProfile, stepRows } from '../ingest.js';
import { sqliteFileBytes, sqliteRawUpsertCeiling, sqliteTableSizes } from '../minimal.js';
import { rssMeter } from '../proc.js';
import type { Row } from '../table.js';

/** Goals of issue 31: each shape's rate against the raw reference of the same run, and storage. */
export const SQLITE_GOAL = 0.25;
export const STORAGE_GOAL = 3;
export const INGEST_SHAPES: readonly IngestShape[] = ['daily', 'backfill'];

/**
 * SQLite ingest, per shape (bench/data.ts SHAPES: daily and backfill): 10,000-record batches
 * pushed end to end over HTTP to the service at its default start-up as `mds push` sends them
 * (two in flight), then one at a time on a fresh file, against the raw
 * better-sqlite3 upsert of the same rows into the minimal table in this process; where a
 * batch's time went (the service's mds_batch_step_seconds); the database's bytes per row
 * against the minimal table's. Then one large batch (peak RSS).
 */
export async function ingestPhase(rows: Row[]): Promise<void> {
  for (const shape of INGEST_SHAPES) await sqliteShape(rows, shape);
  await bigBatch(rows);
}

async function sqliteShape(rows: Row[], shape: IngestShape): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-ingest-'));
  try {
    const batches = shapeBatches(shape, '7', CFG.batches);
    const records = batches.reduce((n, b) => n + b.rows.length, 0);
    log(`ingest ${shape}: ${batches.length} batches, ${records} records`);
    const phase = `SQLite ingest, ${SHAPES[shape].label}`;
    const cpu0 = process.cpuUsage();
    const ceiling = sqliteRawUpsertCeiling(path.join(dir, 'raw.db'), batches);
    const cpu = process.cpuUsage(cpu0);
    log(`ingest ${shape} raw upsert: ${ceiling.toFixed(0)} records/s`);
    rows.push({
      phase,
      server: 'raw upsert, minimal table (1 statement, 1 tx per batch)',
      rate: ceiling,
      unit: 'rec/s',
      // SQLite runs in this process: its CPU per record.
      cpuMs: (cpu.user + cpu.system) / 1000 / records,
    });
    const svc = await startService(path.join(dir, 'service.db'), undefined);
    try {
      const before = await stepProfile(svc.url);
      const row = await serviceIngestRow(phase, svc, INGEST_KEY, batches, ceiling, SQLITE_GOAL);
      log(`ingest ${shape} service: ${row.rate!.toFixed(0)} records/s (${row.ratio!.toFixed(2)}×)`);
      rows.push(row, ...stepRows(phase, before, await stepProfile(svc.url), records));
    } finally {
      await svc.stop();
    }
    // The same rows one batch at a time on a fresh file: the figure of the rounds before
    // the bench pushed as mds push does.
    const one = await startService(path.join(dir, 'service-one.db'), undefined);
    try {
      rows.push(await serviceIngestRow(phase, one, INGEST_KEY, batches, ceiling, SQLITE_GOAL, 1));
    } finally {
      await one.stop();
    }
    storageRow(rows, shape, path.join(dir, 'service.db'), path.join(dir, 'raw.db'), records);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Bytes per row: the service's whole database file (the rows with their JSON and indexes, the
 * revision table, the stored periods, the quality summaries, the batch records) against the
 * minimal table's file holding the same rows, both after a checkpoint.
 */
function storageRow(rows: Row[], shape: IngestShape, service: string, raw: string, records: number): void {
  const svc = sqliteFileBytes(service) / records;
  const min = sqliteFileBytes(raw) / records;
  const parts = sqliteTableSizes(service)
    .filter((t) => t.bytes >= 0.01 * svc * records)
    .map((t) => `${t.name} ${(t.bytes / records).toFixed(0)}`)
    .join(', ');
  log(
    `storage ${shape} (SQLite): service ${svc.toFixed(0)} B/row (${parts}), minimal ${min.toFixed(0)} B/row`,
  );
  rows.push({
    phase: `storage per etf_daily row after the ${shape} shape (SQLite)`,
    server: `service database file ${svc.toFixed(0)} bytes/row (${parts}); minimal table's file ${min.toFixed(0)}`,
    rate: null,
    ratio: svc / min,
    vs: 'minimal',
    goal: `≤ ${STORAGE_GOAL}× minimal`,
    met: svc <= STORAGE_GOAL * min,
  });
}

/** One large batch on a fresh service: its peak RSS (issue 13's memory goal). */
async function bigBatch(rows: Row[]): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-ingest-'));
  try {
    const big = ingestBatches('8', 1, CFG.bigBatch)[0]!;
    const svc = await startService(path.join(dir, 'service.db'), undefined);
    try {
      const meter = rssMeter(svc.pid);
      const rate = await pushOne(svc.url, INGEST_KEY, big);
      const rss = meter.stop();
      log(`ingest one ${CFG.bigBatch}-record batch: ${rate.toFixed(0)} records/s rss ${rss.toFixed(0)} MB`);
      rows.push({
        phase: `ingest one ${CFG.bigBatch.toLocaleString('en')}-record batch`,
        server: `${svc.name} over HTTP`,
        rate,
        unit: 'rec/s',
        rssMb: rss,
        goal: 'peak RSS ≤ 1 GB (whole service)',
        met: rss <= 1024,
      });
    } finally {
      await svc.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
