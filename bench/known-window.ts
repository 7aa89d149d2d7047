import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { CATALOG } from '../src/catalog/catalog.js';
import { createStore } from '../src/storage/create-store.js';
import type { WriteOutcome } from '../src/storage/store.js';
import { acceptedRecord } from '../test/helpers/batches.js';
import type { BatchRecord } from '../src/model/batch.js';
import type { Row } from '../src/model/values.js';
import { SqliteDb } from '../src/storage/sqlite/sqlite-db.js';
import { sql } from '../src/storage/sql.js';
import { throughTsx } from '../src/worker-threads.js';

/**
 * Knowledge time's residual window (docs/point-in-time.md, "When a change is known"): the time
 * from the clock read that becomes a batch's known instant to the end of its transaction (the
 * last one-row statements and the COMMIT), over BATCHES batches of ROWS new etf_daily rows, on
 * SQLite and, when BENCH_PG_URL names a database to use (it gets the service's tables), on
 * PostgreSQL. On SQLite, with and without the read gate (sqlite/read-gate.ts): a reader thread
 * reads the dataset's latest known instant in a loop meanwhile, and a read *contradicts* when a
 * change known before the read was sent is not in its answer (`as_of` at its sending instant
 * would answer it); and the CPU a read's gate costs (READS reads with and without, same run).
 * `node --import tsx bench/known-window.ts`
 */
const BATCHES = Number(process.env.BENCH_BATCHES ?? 200);
const ROWS = Number(process.env.BENCH_ROWS ?? 1000);
const READS = Number(process.env.BENCH_READS ?? 20_000);

/** The reader thread: reads until told to stop, then posts [sent instant, latest known seen][]. */
if (!isMainThread) {
  const { file, gate } = workerData as { file: string; gate: boolean };
  const db = new SqliteDb({ file, readGate: gate, checkpoints: 'none', readOnly: true });
  const seen: [string, string][] = [];
  let stop = false;
  parentPort?.on('message', () => (stop = true));
  parentPort?.postMessage('ready');
  while (!stop) {
    const sent = new Date().toISOString();
    const [v] = await db.values(sql`SELECT max(known_at) FROM mds_changes WHERE dataset = 'etf_daily'`);
    seen.push([sent, typeof v === 'string' ? v : '']);
    // Let the stop message in.
    if (seen.length % 64 === 0) await new Promise((r) => setImmediate(r));
  }
  await db.close();
  parentPort?.postMessage(seen);
}

const etf = CATALOG.byName.get('etf_daily');
if (!etf) throw new Error('etf_daily is not in the catalog');
const dataset = etf;

function rows(k: number): Row[] {
  const out: Row[] = [];
  for (let i = 0; i < ROWS; i++) {
    const close = 1 + (i % 97) / 100;
    out.push({
      symbol: `W${k}`,
      date: new Date(Date.UTC(2000, 0, 1) + i * 86_400_000).toISOString().slice(0, 10),
      open: close,
      high: close,
      low: close,
      close,
      pre_close: close,
      change: 0,
      pct_chg: 0,
      volume: 1000,
      amount: 1000 * close,
      turnover_rate: null,
      source: 'bench',
      updated_at: '2024-01-01T00:00:00.000Z',
    });
  }
  return out;
}

const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

async function measure(label: string, url: string, reader?: { file: string; gate: boolean }): Promise<void> {
  const store = await createStore(url, CATALOG);
  await store.migrate();
  const windows: number[] = [];
  const recorded: number[] = [];
  const known: string[] = [];
  const worker = reader ? new Worker(throughTsx(import.meta.url), { workerData: reader }) : null;
  if (worker) await new Promise((r) => worker.once('message', r));
  try {
    for (let k = 0; k < BATCHES; k++) {
      let lastClockRead = 0;
      const clock = (): string => {
        lastClockRead = performance.now();
        return new Date().toISOString();
      };
      const now = new Date().toISOString();
      const r = await store.batches.applyBatch(
        {
          batchId: `window-${process.pid}-${k}`,
          dataset,
          rows: rows(k),
          prune: null,
          now,
          clock,
        },
        (o: WriteOutcome): BatchRecord => {
          recorded.push(performance.now() - lastClockRead);
          return acceptedRecord(o, {
            batch_id: `window-${process.pid}-${k}`,
            dataset: dataset.name,
            source: 'bench',
            business_date: '2000-01-01',
            source_system: 'bench',
            source_run_id: 'bench',
            record_count: ROWS,
            created_at: now,
          });
        },
      );
      windows.push(performance.now() - lastClockRead);
      if (r.kind !== 'applied') throw new Error(`batch ${k}: ${r.kind}`);
      known.push(r.record.processed_at ?? '');
    }
  } finally {
    await store.close();
  }
  let reads = '';
  if (worker) {
    const seen = new Promise<[string, string][]>((r) => worker.once('message', r));
    worker.postMessage('stop');
    const all = await seen;
    // A read contradicts when the latest change known at or before its sending is not in it.
    let i = 0;
    let contradicted = 0;
    for (const [sent, got] of all) {
      while (i < known.length && (known[i] as string) <= sent) i++;
      const due = i > 0 ? (known[i - 1] as string) : '';
      if (got < due) contradicted++;
    }
    reads = `  concurrent reads: ${all.length}, contradicting as_of at their sending instant: ${contradicted}`;
  }
  const f = (x: number): string => `${x.toFixed(2)} ms`;
  const line = (xs: number[]): string =>
    `median ${f(pct(xs, 0.5))}, p95 ${f(pct(xs, 0.95))}, p99 ${f(pct(xs, 0.99))}, max ${f(Math.max(...xs))}`;
  console.log(`${label}: ${BATCHES} batches of ${ROWS} rows`);
  console.log(`  clock read → known instant recorded: ${line(recorded)}`);
  console.log(`  clock read → transaction end (status record, COMMIT): ${line(windows)}`);
  if (reads) console.log(reads);
}

/** CPU per read of one small statement on a reader's connection, with and without the gate. */
function gateCost(file: string): void {
  const cpu = (gate: boolean): number => {
    const db = new SqliteDb({ file, readGate: gate, checkpoints: 'none', readOnly: true });
    const text = `SELECT version FROM mds_dataset_state WHERE dataset = 'etf_daily'`;
    for (let i = 0; i < 1000; i++) db.readCompiled('values', text, []);
    const t = process.cpuUsage();
    for (let i = 0; i < READS; i++) db.readCompiled('values', text, []);
    const u = process.cpuUsage(t);
    void db.close();
    return (u.user + u.system) / READS;
  };
  // Alternated, twice each: the machine's load drifts.
  const off = [cpu(false), cpu(false)];
  const on = [cpu(true), cpu(true)];
  off.push(cpu(false));
  on.push(cpu(true));
  const med = (xs: number[]): number => pct(xs, 0.5);
  console.log(
    `SQLite read gate: CPU per one-row read ${med(off).toFixed(1)} µs without, ${med(on).toFixed(1)} µs with (${READS} reads × 3 each, process.cpuUsage)`,
  );
}

if (isMainThread) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-known-window-'));
  try {
    const ungated = path.join(dir, 'off.db');
    const gated = path.join(dir, 'on.db');
    await measure('SQLite (WAL, synchronous=FULL), no read gate', `sqlite:${ungated}`, {
      file: ungated,
      gate: false,
    });
    await measure('SQLite (WAL, synchronous=FULL), read gate', `sqlite:${gated}`, {
      file: gated,
      gate: true,
    });
    gateCost(gated);
    const pg = process.env.BENCH_PG_URL;
    if (pg) await measure('PostgreSQL', pg);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
