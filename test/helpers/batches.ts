import { batchChecksum } from '../../src/ingest/checksum.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import type { BatchMeta } from '../../src/contract/batch.js';
import type { BatchRecord } from '../../src/model/batch.js';
import type { WriteOutcome } from '../../src/storage/store.js';

/** Builders of schema-3.0 batches for tests: correct by default, every part overridable. */

export type Data = Record<string, unknown>;

export interface BatchOptions {
  batchId?: string;
  snapshotType?: 'incremental' | 'full_snapshot';
  businessDate?: string;
  source?: string;
  meta?: Record<string, unknown>;
}

let counter = 0;
export const uniqueId = (prefix = 'b'): string => `${prefix}-${process.pid}-${Date.now()}-${++counter}`;

/** A record for `dataset` with idempotency_key and unique_key derived from data. */
export function record(dataset: string, data: Data): Record<string, unknown> {
  const d = CATALOG.byName.get(dataset);
  if (!d) throw new Error(`no dataset ${dataset}`);
  const uk = Object.fromEntries(d.key.map((k) => [k.name, data[k.name]]));
  return {
    idempotency_key: [dataset, ...d.key.map((k) => String(data[k.name]))].join(':'),
    unique_key: uk,
    data,
  };
}

export function batch(dataset: string, rows: Data[], opts: BatchOptions = {}): Record<string, unknown> {
  const records = rows.map((r) => record(dataset, r));
  return batchOfRecords(dataset, records, opts);
}

export function batchOfRecords(
  dataset: string,
  records: unknown[],
  opts: BatchOptions = {},
): Record<string, unknown> {
  // Typed by the contract (src/contract/batch.ts): a change of the meta shape shows here.
  const meta: BatchMeta = {
    schema_version: '3.0',
    batch_id: opts.batchId ?? uniqueId(),
    source_system: 'upstream',
    source_run_id: 'run-1',
    dataset,
    table: dataset,
    operation: 'upsert',
    snapshot_type: opts.snapshotType ?? 'incremental',
    business_date: opts.businessDate ?? '2024-01-02',
    source: opts.source ?? 'eastmoney',
    record_count: records.length,
    send_time: '2024-01-02T08:00:00Z',
  };
  return {
    meta: { ...meta, ...opts.meta },
    records,
    checksum: { sha256: batchChecksum(records) },
  };
}

/**
 * The status record of a batch applied through the store directly (`store.batches.applyBatch`,
 * no ingest service): accepted, its counts from the write's outcome, known at its processed
 * instant; `over` gives what the caller's batch says otherwise (dataset, dates, errors, …).
 */
export function acceptedRecord(
  o: Pick<WriteOutcome, 'written' | 'unchanged' | 'processedAt'> & Partial<Pick<WriteOutcome, 'pruned'>>,
  over: Partial<BatchRecord> & Pick<BatchRecord, 'batch_id'>,
): BatchRecord {
  return {
    dataset: 'etf_daily',
    source: 'eastmoney',
    operation: 'upsert',
    snapshot_type: 'incremental',
    business_date: '2024-01-02',
    source_system: 'upstream',
    source_run_id: 'run-1',
    record_count: o.written + o.unchanged,
    checksum: '-',
    status: 'accepted',
    accepted: o.written,
    rejected: 0,
    duplicate: o.unchanged,
    pruned: o.pruned ?? 0,
    errors: [],
    created_at: o.processedAt,
    processed_at: o.processedAt,
    reverted_at: null,
    ...over,
  };
}

/** An adj_factor row (the bars suites' factors). */
export const adjFactor = (symbol: string, date: string, adj_factor: number, source = 'test'): Data => ({
  symbol,
  date,
  adj_factor,
  source,
  updated_at: '2024-06-04T00:00:00Z',
});

/** An etf_daily row; float noise like 9.420000000000002 on purpose. */
export function etfBar(symbol: string, date: string, extra: Data = {}): Data {
  return {
    symbol,
    date,
    open: 9.41,
    high: 9.5,
    low: 9.3,
    close: 9.420000000000002,
    volume: 123456,
    source: 'eastmoney',
    updated_at: '2024-01-02T10:00:00Z',
    ...extra,
  };
}

/** A plain etf_daily bar in whole numbers (the quality tests' good bar); `extra` spoils it. */
export function plainBar(symbol: string, date: string, extra: Data = {}): Data {
  return {
    symbol,
    date,
    open: 10,
    high: 11,
    low: 9,
    close: 10,
    volume: 100,
    source: 'test',
    updated_at: `${date}T08:30:00Z`,
    ...extra,
  };
}

/** `count` consecutive calendar days from `start` (YYYY-MM-DD). */
export function days(start: string, count: number): string[] {
  const out: string[] = [];
  const t = Date.parse(`${start}T00:00:00Z`);
  for (let i = 0; i < count; i++) out.push(new Date(t + i * 86_400_000).toISOString().slice(0, 10));
  return out;
}
