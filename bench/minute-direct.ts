import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CATALOG } from '../src/catalog/catalog.js';
import { createStore } from '../src/storage/create-store.js';
import { IngestService } from '../src/ingest/ingest-service.js';
import { buildBatch, toRecord } from '../src/client/batch-builder.js';
import { createTestDatabase } from '../test/helpers/postgres.js';
import { dayBars } from '../test/helpers/minute-bars.js';

/**
 * Minute ingest without HTTP: a market day of 1-minute bars (codes × 240) as 100,000-bar
 * stock_minute batches through IngestService on a fresh store in this thread, the step
 * profile and the CPU per bar. Run it under `node --cpu-prof --import tsx` for a profile.
 *
 *   npx tsx bench/minute-direct.ts [sqlite|postgres] [codes=2000]
 *   (PostgreSQL: MDS_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 */
const backend = process.argv[2] ?? 'sqlite';
const codes = Number(process.argv[3] ?? 2000);
const ADMIN_URL = process.env.MDS_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const all = Array.from({ length: codes }, (_, i) =>
  dayBars(String(i + 1).padStart(6, '0'), '2024-03-01'),
).flat();
// Built as `mds push` builds them (the client's records, its JCS checksum).
const dataset = CATALOG.byName.get('stock_minute');
if (!dataset) throw new Error('no stock_minute dataset');
const bodies: Buffer[] = [];
for (let i = 0; i < all.length; i += 100_000) {
  const rows = all.slice(i, i + 100_000);
  const batch = buildBatch(
    dataset,
    rows.map((r) => toRecord(dataset, r)),
    { source: 'eastmoney', businessDate: '2024-03-01', snapshotType: 'incremental', runId: `minute-${i}` },
  );
  bodies.push(Buffer.from(JSON.stringify(batch)));
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-minute-direct-'));
const pgDb = backend === 'postgres' ? await createTestDatabase(ADMIN_URL, 'mds_minute_direct') : null;
try {
  const store = await createStore(pgDb ? pgDb.url : `sqlite:${path.join(dir, 'minute.db')}`, CATALOG);
  await store.migrate();
  const ingest = new IngestService(CATALOG, store, { maxRecords: 200_000 });
  const steps = new Map<string, number>();
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (const body of bodies) {
    const out = await ingest.ingestBytes(new Uint8Array(body));
    if (out.kind !== 'processed' || out.record.status !== 'accepted')
      throw new Error(JSON.stringify(out).slice(0, 500));
    for (const [k, v] of Object.entries(out.steps ?? {})) steps.set(k, (steps.get(k) ?? 0) + v);
  }
  const wall = (performance.now() - t) / 1000;
  const used = process.cpuUsage(cpu);
  console.log(
    `${backend}: ${all.length} bars in ${wall.toFixed(2)} s wall (${(all.length / wall).toFixed(0)} bars/s), CPU ${((used.user + used.system) / all.length).toFixed(2)} µs/bar`,
  );
  console.log(
    `  steps, µs/bar: ${[...steps]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${((v * 1e6) / all.length).toFixed(2)}`)
      .join(', ')}`,
  );
  await store.close();
} finally {
  await pgDb?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
}
