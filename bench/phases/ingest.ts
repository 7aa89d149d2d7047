import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BATCH_SIZE, CFG, INGEST_KEY, log, startService } from '../context.js';
import { ingestBatches } from '../data.js';
import { pushOne, serviceIngestRow } from '../ingest.js';
import { sqliteRawUpsertCeiling, sqliteTableBytes } from '../minimal.js';
import { rssMeter } from '../proc.js';
import type { Row } from '../table.js';

/** SQLite ingest: 10k-record batches end to end against the raw upsert on the minimal table. */
export async function ingestPhase(rows: Row[]): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-ingest-'));
  try {
    log(`ingest: building ${CFG.batches} × ${BATCH_SIZE} records and one ${CFG.bigBatch}-record batch`);
    const batches = ingestBatches('7', CFG.batches, BATCH_SIZE);
    const cpu0 = process.cpuUsage();
    const ceiling = sqliteRawUpsertCeiling(path.join(dir, 'raw.db'), batches);
    const cpu = process.cpuUsage(cpu0);
    const records = CFG.batches * BATCH_SIZE;
    log(`ingest raw ceiling: ${ceiling.toFixed(0)} records/s`);
    const phase = 'ingest 10k-record batches';
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
      const row = await serviceIngestRow(phase, svc, INGEST_KEY, batches, ceiling, 0.4);
      log(`ingest service: ${row.rate!.toFixed(0)} records/s rss ${row.rssMb!.toFixed(0)} MB`);
      rows.push(row);
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
        server: `${svc.name} over HTTP`,
        rate: bigRate,
        unit: 'rec/s',
        rssMb: bigRss,
        goal: 'peak RSS ≤ 1 GB (whole service)',
        met: bigRss <= 1024,
      });
    } finally {
      await svc.stop();
    }
    // The rows as ingest wrote them (their revision stamps, and the revision table, which new
    // rows leave empty), against the raw upsert's minimal table holding its batches' rows.
    const svcRows = CFG.batches * BATCH_SIZE + CFG.bigBatch;
    const svcBytes =
      (sqliteTableBytes(path.join(dir, 'service.db'), 'etf_daily') +
        sqliteTableBytes(path.join(dir, 'service.db'), 'mds_rev_etf_daily')) /
      svcRows;
    const minBytes = sqliteTableBytes(path.join(dir, 'raw.db'), 'etf_daily') / records;
    log(
      `ingest storage: service ${svcBytes.toFixed(0)} B/row with history, minimal ${minBytes.toFixed(0)} B/row`,
    );
    rows.push({
      phase: 'storage per ingested etf_daily row (SQLite)',
      server: `service with its revision table: ${svcBytes.toFixed(0)} bytes/row; minimal ${minBytes.toFixed(0)}`,
      rate: null,
      ratio: svcBytes / minBytes,
      vs: 'minimal',
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
