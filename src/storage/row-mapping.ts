import type { ApiKeyRecord, StoredKeyScope } from '../model/keys.js';
import type { BatchRecord, BatchStatus, RecordError } from '../model/batch.js';
import { BATCH_COLUMNS } from './internal-tables.js';

/** Database row ⇄ record conversions shared by both stores. */

type DbRow = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function batchFromRow(r: DbRow): BatchRecord {
  return {
    batch_id: String(r.batch_id),
    dataset: String(r.dataset),
    source: String(r.source),
    operation: String(r.operation),
    snapshot_type: String(r.snapshot_type),
    business_date: String(r.business_date),
    source_system: String(r.source_system),
    source_run_id: String(r.source_run_id),
    record_count: num(r.record_count),
    checksum: String(r.checksum),
    status: String(r.status) as BatchStatus,
    accepted: num(r.accepted),
    rejected: num(r.rejected),
    duplicate: num(r.duplicate),
    pruned: num(r.pruned),
    errors: JSON.parse(String(r.errors)) as RecordError[],
    created_at: String(r.created_at),
    processed_at: String(r.processed_at),
    reverted_at: strOrNull(r.reverted_at),
  };
}

export function batchToParams(b: BatchRecord): (string | number | null)[] {
  return BATCH_COLUMNS.map((c) => (c === 'errors' ? JSON.stringify(b.errors) : b[c]));
}

export function keyFromRow(r: DbRow): ApiKeyRecord {
  return {
    id: String(r.id),
    name: String(r.name),
    scope: String(r.scope) as StoredKeyScope,
    prefix: String(r.prefix),
    hash: String(r.hash),
    rate_per_minute: numOrNull(r.rate_per_minute),
    daily_quota: numOrNull(r.daily_quota),
    created_at: String(r.created_at),
    last_used_at: strOrNull(r.last_used_at),
    revoked_at: strOrNull(r.revoked_at),
  };
}
