import type { Dialect } from './sql.js';

/**
 * The service's own tables (batch registry, dataset state, keys, usage), prefixed `mds_` so
 * no dataset can take their names (the catalog refuses that prefix).
 */
export function internalTableStatements(d: Dialect): string[] {
  const text = d.columnType('string');
  const int = d.columnType('integer');
  return [
    `CREATE TABLE IF NOT EXISTS mds_batches (
      batch_id ${text} PRIMARY KEY, dataset ${text} NOT NULL, source ${text} NOT NULL,
      operation ${text} NOT NULL, snapshot_type ${text} NOT NULL, business_date ${text} NOT NULL,
      source_system ${text} NOT NULL, source_run_id ${text} NOT NULL, record_count ${int} NOT NULL,
      checksum ${text} NOT NULL, status ${text} NOT NULL, accepted ${int} NOT NULL,
      rejected ${int} NOT NULL, duplicate ${int} NOT NULL, pruned ${int} NOT NULL,
      errors ${text} NOT NULL, created_at ${text} NOT NULL, processed_at ${text} NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ix_mds_batches__processed_at ON mds_batches (processed_at)`,
    `CREATE INDEX IF NOT EXISTS ix_mds_batches__dataset ON mds_batches (dataset, processed_at)`,
    `CREATE TABLE IF NOT EXISTS mds_dataset_state (
      dataset ${text} PRIMARY KEY, version ${int} NOT NULL,
      last_batch_id ${text}, last_batch_at ${text})`,
    `CREATE TABLE IF NOT EXISTS mds_keys (
      id ${text} PRIMARY KEY, name ${text} NOT NULL, scope ${text} NOT NULL, prefix ${text} NOT NULL,
      hash ${text} NOT NULL UNIQUE, rate_per_minute ${int}, daily_quota ${int},
      created_at ${text} NOT NULL, last_used_at ${text}, revoked_at ${text})`,
    `CREATE TABLE IF NOT EXISTS mds_key_usage (
      key_id ${text} NOT NULL, hour ${text} NOT NULL, count ${int} NOT NULL,
      PRIMARY KEY (key_id, hour))`,
  ];
}

/** Column order of mds_batches, shared by both stores' INSERT. */
export const BATCH_COLUMNS = [
  'batch_id',
  'dataset',
  'source',
  'operation',
  'snapshot_type',
  'business_date',
  'source_system',
  'source_run_id',
  'record_count',
  'checksum',
  'status',
  'accepted',
  'rejected',
  'duplicate',
  'pruned',
  'errors',
  'created_at',
  'processed_at',
] as const;

export const KEY_COLUMNS = [
  'id',
  'name',
  'scope',
  'prefix',
  'hash',
  'rate_per_minute',
  'daily_quota',
  'created_at',
  'last_used_at',
  'revoked_at',
] as const;
