import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CATALOG, type Dataset } from '../src/catalog/catalog.js';
import { createStore } from '../src/storage/create-store.js';
import { IngestService } from '../src/ingest/ingest-service.js';
import { refreshPeriods } from '../src/storage/period-store.js';
import { batchRevisionsSql } from '../src/storage/revisions.js';
import { compile, SQLITE, type Sql } from '../src/storage/sql.js';
import type { Tx } from '../src/storage/db.js';
import { now, type Step } from '../src/storage/step.js';
import { shapeBatches, type IngestShape } from './data.js';

/**
 * The stored periods' refresh of one batch alone (issue 31), SQLite in process: the shape's
 * batches ingested, the periods kept as they were before the last one, then that batch's
 * refreshPeriods statements run in rolled-back transactions, each over the periods as before
 * it; the CPU of the best of seven (the statements' own CPU: SQLite runs in this process).
 *
 *   npx tsx bench/period-refresh.ts [daily|backfill] [batches=4]
 */
const shape = (process.argv[2] ?? 'daily') as IngestShape;
const count = Number(process.argv[3] ?? 4);
const ETF = CATALOG.byName.get('etf_daily') as Dataset;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-period-refresh-'));
try {
  const file = path.join(dir, 'service.db');
  const batches = shapeBatches(shape, '7', count);
  const store = await createStore(`sqlite:${file}`, CATALOG);
  await store.migrate();
  const ingest = new IngestService(CATALOG, store, { maxRecords: 200_000 });
  let batchId = '';
  for (const [i, b] of batches.entries()) {
    if (i === batches.length - 1) {
      const db = new Database(file);
      db.exec('CREATE TABLE saved_periods AS SELECT * FROM mds_periods_etf_daily');
      db.close();
    }
    const out = await ingest.ingestBytes(new Uint8Array(Buffer.from(b.body)));
    if (out.kind !== 'processed') throw new Error(JSON.stringify(out));
    batchId = out.record.batch_id;
  }
  await store.close();
  const db = new Database(file);
  const stamp = db
    .prepare(`SELECT valid_from FROM mds_changes WHERE dataset = 'etf_daily' AND batch_id = ?`)
    .get(batchId) as { valid_from: string };
  // The statements, collected by a Tx that runs nothing.
  const statements: Sql[] = [];
  const collect = (s: Sql): Step<never[]> => {
    statements.push(s);
    return now([]);
  };
  const tx = { dialect: SQLITE, rows: collect, run: collect } as unknown as Tx;
  for (const step of refreshPeriods(tx, ETF, batchRevisionsSql(ETF, batchId, stamp.valid_from))) void step;
  const prepared = statements.map((s) => {
    const c = compile(s, SQLITE);
    return { st: db.prepare(c.sql), params: c.params };
  });
  const cpus: number[] = [];
  for (let round = 0; round < 7; round++) {
    db.exec(
      'BEGIN; DELETE FROM mds_periods_etf_daily; INSERT INTO mds_periods_etf_daily SELECT * FROM saved_periods',
    );
    const cpu = process.cpuUsage();
    for (const p of prepared) {
      if (p.st.reader) p.st.all(...p.params);
      else p.st.run(...p.params);
    }
    const used = process.cpuUsage(cpu);
    cpus.push((used.user + used.system) / 1000);
    db.exec('ROLLBACK');
  }
  db.close();
  const best = Math.min(...cpus);
  const rows = batches.at(-1)?.rows.length ?? 1;
  console.log(
    `${shape}, batch ${count}: periods refresh CPU ${best.toFixed(1)} ms (${((best * 1000) / rows).toFixed(1)} µs/record), rounds ${cpus.map((x) => x.toFixed(0)).join(' ')}`,
  );
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
