import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CATALOG, type Dataset } from '../src/catalog/catalog.js';
import type { BatchMeta, IngestRecord } from '../src/contract/batch.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { ROW_JSON_COLUMN, rowJson } from '../src/model/row-json.js';
import { BASELINE_BATCH, REV_BATCH, REV_FROM, REV_OP } from '../src/model/revisions.js';

/**
 * Bench data: deterministic etf_daily rows (codes × trading days), a SQLite file built through
 * the store's own migrate() (so the schema and indexes are the service's), and ingest batches.
 */

/** The etf_daily ingest columns, in the order rows are generated. */
export const ETF_COLUMNS = [
  'symbol',
  'date',
  'open',
  'high',
  'low',
  'close',
  'pre_close',
  'change',
  'pct_chg',
  'volume',
  'amount',
  'turnover_rate',
  'source',
  'updated_at',
] as const;

export type EtfRow = Record<(typeof ETF_COLUMNS)[number], string | number>;

export const SOURCE = 'bench';
export const ETF_DAILY = CATALOG.byName.get('etf_daily') as Dataset;
const UPDATED_AT = '2026-01-01T00:00:00Z';

/** A loaded row's revision stamp: inserted by the baseline batch (what migrate gives old rows). */
export const BASELINE_STAMP = {
  columns: [REV_OP, REV_BATCH, REV_FROM],
  values: ['insert', BASELINE_BATCH, '2026-01-01T00:00:00.000Z'],
} as const;

/** A small fast PRNG (mulberry32) so every run builds the same rows. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function code(i: number, prefix = '5'): string {
  return `${prefix}${String(10000 + i).padStart(5, '0')}`;
}

/** `n` weekdays from `from` (a weekday; default 2016-01-04) on, as YYYY-MM-DD. */
export function tradingDays(n: number, from = '2016-01-04'): string[] {
  const out: string[] = [];
  const d = new Date(`${from}T00:00:00Z`);
  while (out.length < n) {
    const wd = d.getUTCDay();
    if (wd !== 0 && wd !== 6) out.push(d.toISOString().slice(0, 10));
    d.setUTCDate(d.getUTCDate() + 1);
  }
  return out;
}

/** The day before the same date one year later: a one-year window ending on a real date. */
export function yearAfter(from: string): string {
  const d = new Date(`${from}T00:00:00Z`);
  d.setUTCFullYear(d.getUTCFullYear() + 1);
  d.setUTCDate(d.getUTCDate() - 1);
  return d.toISOString().slice(0, 10);
}

const r2 = (x: number): number => Math.round(x * 100) / 100;

/** Every day of one code: a random walk, all 14 fields filled. */
export function codeRows(symbol: string, days: readonly string[], seed: number): EtfRow[] {
  const rand = rng(seed);
  let close = 1 + rand() * 4;
  const rows: EtfRow[] = [];
  for (const date of days) {
    const pre = close;
    close = Math.max(0.1, pre * (1 + (rand() - 0.5) * 0.04));
    const open = pre * (1 + (rand() - 0.5) * 0.01);
    const volume = Math.floor(rand() * 1e7);
    rows.push({
      symbol,
      date,
      open: r2(open),
      high: r2(Math.max(open, close) * (1 + rand() * 0.01)),
      low: r2(Math.min(open, close) * (1 - rand() * 0.01)),
      close: r2(close),
      pre_close: r2(pre),
      change: r2(close - pre),
      pct_chg: r2(((close - pre) / pre) * 100),
      volume,
      amount: r2(volume * close),
      turnover_rate: r2(rand() * 5),
      source: SOURCE,
      updated_at: UPDATED_AT,
    });
  }
  return rows;
}

/** Creates the schema exactly as the service does. */
export async function migrate(file: string): Promise<void> {
  const store = new SqliteStore(CATALOG, { file });
  await store.migrate();
  await store.close();
}

/**
 * Forgets the statistics of tables that were empty when ANALYZE ran. The data set is analysed
 * before any batch, so its revision tables are recorded as holding 0 rows; SQLite's planner
 * then drives a batch's revision update from the revision table, scanning the batch's changes
 * once per revision: quadratic in the revisions written (a second 10,000-record batch took
 * 13 s instead of 0.6 s). Without statistics it assumes a large table and looks keys up.
 */
function dropEmptyTableStats(file: string): void {
  const db = new Database(file);
  if (db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'`).get()) {
    db.exec(`DELETE FROM sqlite_stat1 WHERE stat = '0' OR stat LIKE '0 %'`);
  }
  db.close();
}

/**
 * The query data set: `codes` × `days` etf_daily rows in a SQLite file, cached under `dir`
 * (the file name carries the size; delete it or set BENCH_REBUILD=1 to rebuild).
 */
export async function buildQueryDatabase(
  dir: string,
  codes: number,
  days: number,
  rebuild: boolean,
  log: (s: string) => void,
): Promise<string> {
  fs.mkdirSync(dir, { recursive: true });
  // v2: rows carry their stored response JSON (src/model/row-json.ts); v3: and their revision
  // stamp, as every row a service stores does (the baseline batch's insert).
  const file = path.join(dir, `etf-${codes}x${days}-v3.db`);
  const done = `${file}.complete`;
  if (!rebuild && fs.existsSync(done) && fs.existsSync(file)) {
    log(`query data: reusing ${file}; migrating it to this release's schema`);
    // A kept file from an older release is upgraded here, once, not by each server at start
    // (a row JSON rebuild of millions of rows would outlast the servers' readiness wait).
    await migrate(file);
    dropEmptyTableStats(file);
    return file;
  }
  for (const f of [file, `${file}-wal`, `${file}-shm`, done]) fs.rmSync(f, { force: true });
  const t0 = Date.now();
  await migrate(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  // Secondary indexes are dropped during the load and rebuilt by migrate() afterwards: faster.
  const secondary = (
    db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'etf_daily' AND sql IS NOT NULL",
      )
      .pluck()
      .all() as string[]
  ).filter((n) => n.startsWith('ix_'));
  for (const n of secondary) db.exec(`DROP INDEX "${n}"`);
  const cols = [...ETF_COLUMNS, ROW_JSON_COLUMN, 'created_at', ...BASELINE_STAMP.columns];
  const json = rowJson(ETF_DAILY);
  const insert = db.prepare(
    `INSERT INTO etf_daily (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
  );
  const dayList = tradingDays(days);
  const load = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      for (const r of codeRows(code(i), dayList, i + 1)) {
        insert.run(...ETF_COLUMNS.map((c) => r[c]), json(r), UPDATED_AT, ...BASELINE_STAMP.values);
      }
    }
  });
  for (let i = 0; i < codes; i += 100) {
    load(i, Math.min(codes, i + 100));
    log(`query data: ${Math.min(codes, i + 100) * days} rows`);
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  await migrate(file);
  const v = new Database(file);
  v.exec('ANALYZE');
  v.pragma('wal_checkpoint(TRUNCATE)');
  v.close();
  dropEmptyTableStats(file);
  fs.writeFileSync(done, new Date().toISOString());
  log(`query data: built ${codes * days} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return file;
}

export interface IngestBatch {
  /** The HTTP body, serialised once before timing. */
  body: string;
  rows: EtfRow[];
}

/** A batch request of spec 2.3 for these rows, checksummed as JSON.stringify(records). */
export function batchBody(id: string, rows: readonly EtfRow[]): string {
  const records: IngestRecord[] = rows.map((r) => ({
    idempotency_key: `etf_daily:${r.symbol}:${r.date}:${r.source}`,
    unique_key: { symbol: r.symbol, date: r.date, source: r.source },
    data: r,
  }));
  const json = JSON.stringify(records);
  const meta: BatchMeta = {
    schema_version: '3.0',
    batch_id: id,
    source_system: 'upstream',
    source_run_id: 'bench',
    dataset: 'etf_daily',
    table: 'etf_daily',
    operation: 'upsert',
    snapshot_type: 'incremental',
    business_date: String(rows[rows.length - 1]?.date ?? '2024-01-02'),
    source: SOURCE,
    record_count: rows.length,
    send_time: new Date().toISOString(),
  };
  const sha256 = createHash('sha256').update(json).digest('hex');
  return `{"meta":${JSON.stringify(meta)},"records":${json},"checksum":{"sha256":"${sha256}"}}`;
}

/**
 * The two shapes a batch of daily bars takes (issue 31), as 10,000-record batches:
 * - daily: one trading day of many codes (10,000 codes × 1 day; batch b is day b), the push
 *   after each close;
 * - backfill: many days of few codes (5 codes × 2,000 days; batch b is codes 5b … 5b+4), the
 *   history a team loads first.
 */
export type IngestShape = 'daily' | 'backfill';
export const SHAPES: Record<IngestShape, { codes: number; days: number; label: string }> = {
  daily: { codes: 10_000, days: 1, label: 'daily shape: 10,000 codes × 1 day' },
  backfill: { codes: 5, days: 2_000, label: 'backfill shape: 5 codes × 2,000 days' },
};

/** `count` batches of the shape, every record new on a fresh database (codes with prefix `prefix`). */
export function shapeBatches(shape: IngestShape, prefix: string, count: number): IngestBatch[] {
  const out: IngestBatch[] = [];
  if (shape === 'backfill') {
    const { codes, days } = SHAPES.backfill;
    const dayList = tradingDays(days);
    for (let b = 0; b < count; b++) {
      const rows: EtfRow[] = [];
      for (let i = b * codes; i < (b + 1) * codes; i++)
        rows.push(...codeRows(code(i, prefix), dayList, 7919 * (i + 1)));
      out.push({ body: batchBody(`bench-${shape}-${prefix}-${b}-${process.pid}`, rows), rows });
    }
    return out;
  }
  // Each code's walk over `count` days, cut by day.
  const dayList = tradingDays(count);
  const walks = Array.from({ length: SHAPES.daily.codes }, (_, i) =>
    codeRows(code(i, prefix), dayList, 7919 * (i + 1)),
  );
  for (let b = 0; b < count; b++) {
    const rows = walks.map((w) => w[b] as EtfRow);
    out.push({ body: batchBody(`bench-${shape}-${prefix}-${b}-${process.pid}`, rows), rows });
  }
  return out;
}

/**
 * `count` batches of `size` new rows (codes with prefix `prefix`, 250 days each), so every
 * record is an insert on a fresh database.
 */
export function ingestBatches(prefix: string, count: number, size: number): IngestBatch[] {
  const perCode = 250;
  const days = tradingDays(perCode);
  const all: EtfRow[] = [];
  for (let i = 0; all.length < count * size; i++)
    all.push(...codeRows(code(i, prefix), days, 7919 * (i + 1)));
  const out: IngestBatch[] = [];
  for (let b = 0; b < count; b++) {
    const rows = all.slice(b * size, (b + 1) * size);
    out.push({ body: batchBody(`bench-${prefix}-${b}-${process.pid}`, rows), rows });
  }
  return out;
}
