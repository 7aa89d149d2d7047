import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CATALOG } from '../src/catalog/catalog.js';
import { createStore } from '../src/storage/create-store.js';
import { IngestService } from '../src/ingest/ingest-service.js';
import { createTestDatabase } from '../test/helpers/postgres.js';
import { ingestBatches, shapeBatches, type IngestShape } from './data.js';
import { sqliteRawUpsertCeiling, pgRawUpsertCeiling } from './minimal.js';

/**
 * Ingest without HTTP: the bench's 10,000-record etf_daily batches through IngestService on a
 * fresh store in this thread (body parse, checksum, validation, the batch transaction), against
 * the minimal-table raw upsert of the same batches, in alternating rounds. Run it under
 * `node --cpu-prof --import tsx` to see where a record's time goes.
 *
 *   npx tsx bench/ingest-direct.ts [sqlite|postgres] [batches=10] [rounds=2] [daily|backfill]
 *   (the last: the batches of that shape, bench/data.ts SHAPES; else 40 codes × 250 days)
 *   (PostgreSQL: MDS_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 */
const backend = process.argv[2] ?? 'sqlite';
const count = Number(process.argv[3] ?? 10);
const rounds = Number(process.argv[4] ?? 2);
const ADMIN_URL = process.env.MDS_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const shape = process.argv[5] as IngestShape | undefined;
const batches = shape ? shapeBatches(shape, '7', count) : ingestBatches('7', count, 10_000);
const records = batches.reduce((n, b) => n + b.rows.length, 0);
const bodies = batches.map((b) => Buffer.from(b.body));

async function service(): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-ingest-direct-'));
  const pgDb = backend === 'postgres' ? await createTestDatabase(ADMIN_URL, 'mds_h1_direct') : null;
  try {
    const url = pgDb ? pgDb.url : `sqlite:${path.join(dir, 'service.db')}`;
    const store = await createStore(url, CATALOG);
    await store.migrate();
    const ingest = new IngestService(CATALOG, store, { maxRecords: 200_000 });
    const t = performance.now();
    const cpu = process.cpuUsage();
    const each: number[] = [];
    const steps = new Map<string, number>();
    for (const body of bodies) {
      const t1 = performance.now();
      const out = await ingest.ingestBytes(new Uint8Array(body));
      if (out.kind !== 'processed' || out.record.status !== 'accepted') throw new Error(JSON.stringify(out));
      for (const [k, v] of Object.entries(out.steps ?? {})) steps.set(k, (steps.get(k) ?? 0) + v);
      each.push(performance.now() - t1);
    }
    const rate = records / ((performance.now() - t) / 1000);
    const used = process.cpuUsage(cpu);
    each.sort((a, b) => a - b);
    console.log(
      `  service: CPU ${((used.user + used.system) / records).toFixed(1)} µs/record (sys ${(used.system / records).toFixed(1)}), batch median ${each[each.length >> 1]?.toFixed(0)} ms, min ${each[0]?.toFixed(0)} ms`,
    );
    console.log(
      `  steps, µs/record: ${[...steps]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${((v * 1e6) / records).toFixed(1)}`)
        .join(', ')}`,
    );
    await store.close();
    return rate;
  } finally {
    await pgDb?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function ceiling(): Promise<number> {
  if (backend === 'postgres') {
    const db = await createTestDatabase(ADMIN_URL, 'mds_h1_raw');
    try {
      return await pgRawUpsertCeiling(db.url, batches);
    } finally {
      await db.drop();
    }
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-ingest-raw-'));
  try {
    return sqliteRawUpsertCeiling(path.join(dir, 'raw.db'), batches);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

for (let r = 1; r <= rounds; r++) {
  const raw = process.env.BENCH_SKIP_RAW === '1' ? NaN : await ceiling();
  const svc = await service();
  console.log(
    `round ${r} (${backend}, ${count} × 10,000): raw ${raw.toFixed(0)} rec/s, service ${svc.toFixed(0)} rec/s, ${(svc / raw).toFixed(2)}×`,
  );
}
