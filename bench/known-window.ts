import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CATALOG } from '../src/catalog/catalog.js';
import { createStore } from '../src/storage/create-store.js';
import type { WriteOutcome } from '../src/storage/store.js';
import type { BatchRecord } from '../src/model/batch.js';
import type { Row } from '../src/model/values.js';

/**
 * Knowledge time's residual window (docs/point-in-time.md, "When a change is known"): the time
 * from the clock read that becomes a batch's known instant to the end of its transaction (the
 * last one-row statements and the COMMIT), over BATCHES batches of ROWS new etf_daily rows, on
 * SQLite and, when BENCH_PG_URL names a database to use (it gets the service's tables), on
 * PostgreSQL. `node --import tsx bench/known-window.ts`
 */
const BATCHES = Number(process.env.BENCH_BATCHES ?? 200);
const ROWS = Number(process.env.BENCH_ROWS ?? 1000);

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

async function measure(label: string, url: string): Promise<void> {
  const store = await createStore(url, CATALOG);
  await store.migrate();
  const windows: number[] = [];
  const recorded: number[] = [];
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
          updatedAtGiven: new Uint8Array(ROWS).fill(1),
          prune: null,
          now,
          clock,
        },
        (o: WriteOutcome): BatchRecord => {
          recorded.push(performance.now() - lastClockRead);
          return {
            batch_id: `window-${process.pid}-${k}`,
            dataset: dataset.name,
            source: 'bench',
            operation: 'upsert',
            snapshot_type: 'incremental',
            business_date: '2000-01-01',
            source_system: 'bench',
            source_run_id: 'bench',
            record_count: ROWS,
            checksum: '',
            status: 'accepted',
            accepted: o.written,
            rejected: 0,
            duplicate: o.unchanged,
            pruned: o.pruned,
            errors: [],
            created_at: now,
            processed_at: o.processedAt,
            reverted_at: null,
          };
        },
      );
      windows.push(performance.now() - lastClockRead);
      if (r.kind !== 'applied') throw new Error(`batch ${k}: ${r.kind}`);
    }
  } finally {
    await store.close();
  }
  const f = (x: number): string => `${x.toFixed(2)} ms`;
  const line = (xs: number[]): string =>
    `median ${f(pct(xs, 0.5))}, p95 ${f(pct(xs, 0.95))}, p99 ${f(pct(xs, 0.99))}, max ${f(Math.max(...xs))}`;
  console.log(`${label}: ${BATCHES} batches of ${ROWS} rows`);
  console.log(`  clock read → known instant recorded: ${line(recorded)}`);
  console.log(`  clock read → transaction end (status record, COMMIT): ${line(windows)}`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-known-window-'));
try {
  await measure('SQLite (WAL, synchronous=FULL)', `sqlite:${path.join(dir, 'w.db')}`);
  const pg = process.env.BENCH_PG_URL;
  if (pg) await measure('PostgreSQL', pg);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
