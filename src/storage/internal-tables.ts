import type { TableSpec } from './schema.js';
import type { ApiKeyRecord } from '../model/keys.js';
import type { BatchRecord } from '../model/batch.js';

/**
 * The service's own tables (batch registry, dataset state, keys, usage, migrations, row shapes),
 * prefixed `mds_` so no dataset can take their names (the catalog refuses that prefix). Declared
 * like the dataset tables and migrated by the same steps (migrations.ts).
 */

type Col = TableSpec['columns'][number];
const text = (name: string, notNull = true): Col => ({ name, type: 'string', notNull });
const int = (name: string, notNull = true): Col => ({ name, type: 'integer', notNull });

/** A table of the service, typed as the first release created it (not SQLite STRICT). */
function table(
  name: string,
  columns: Col[],
  primaryKey: string[],
  extra: Partial<TableSpec> = {},
): TableSpec {
  return { name, columns, primaryKey, unique: [], uniqueDesc: [], indexes: [], strict: false, ...extra };
}

/** Applied schema versions (migrations.ts). */
export const MIGRATIONS_TABLE: TableSpec = table(
  'mds_migrations',
  [int('version'), text('name'), text('applied_at')],
  ['version'],
);

export const INTERNAL_TABLES: readonly TableSpec[] = [
  MIGRATIONS_TABLE,
  table(
    'mds_batches',
    [
      text('batch_id'),
      text('dataset'),
      text('source'),
      text('operation'),
      text('snapshot_type'),
      text('business_date'),
      text('source_system'),
      text('source_run_id'),
      int('record_count'),
      text('checksum'),
      text('status'),
      int('accepted'),
      int('rejected'),
      int('duplicate'),
      int('pruned'),
      text('errors'),
      text('created_at'),
      text('processed_at'),
      // When the batch was reverted (docs/point-in-time.md); null until then.
      text('reverted_at', false),
    ],
    ['batch_id'],
    {
      indexes: [
        { name: 'ix_mds_batches__processed_at', columns: ['processed_at'] },
        { name: 'ix_mds_batches__dataset', columns: ['dataset', 'processed_at'] },
      ],
    },
  ),
  table(
    'mds_dataset_state',
    [text('dataset'), int('version'), text('last_batch_id', false), text('last_batch_at', false)],
    ['dataset'],
  ),
  // The shape of the row JSON each dataset's rows were last written with (row-json.ts).
  table('mds_dataset_shapes', [text('dataset'), text('row_shape')], ['dataset']),
  table(
    'mds_keys',
    [
      text('id'),
      text('name'),
      text('scope'),
      text('prefix'),
      { ...text('hash'), unique: true },
      int('rate_per_minute', false),
      int('daily_quota', false),
      text('created_at'),
      text('last_used_at', false),
      text('revoked_at', false),
    ],
    ['id'],
  ),
  table('mds_key_usage', [text('key_id'), text('hour'), int('count')], ['key_id', 'hour']),
  // The quality report's rows per daily dataset and code, judged by the dataset's calendar and
  // kept current by the batch transaction (quality-summary.ts); the date lists as JSON arrays.
  table(
    'mds_quality_codes',
    [
      text('dataset'),
      text('exchange'),
      text('code'),
      text('first_date'),
      text('last_date'),
      int('bars'),
      int('expected'),
      int('missing'),
      text('missing_dates'),
      int('ohlc_violations'),
      text('ohlc_violation_dates'),
      int('zero_volume_days', false),
      // What the last date's bars added (1: zero volume; a bad bar): a batch changing only bars
      // from that day on takes them out and extends the rest (quality-summary.ts).
      int('last_zero', false),
      int('last_bad', false),
    ],
    ['dataset', 'exchange', 'code'],
    // Each daily batch rewrites every code's summary: half of each page kept for the new versions
    // (PostgreSQL), or 20 days of 10,000 codes left 12 dead versions a live one (issue 31).
    { fillfactor: 50 },
  ),
  // Per daily dataset: the exchange its summaries judge by and the rules' version they follow.
  table('mds_quality_state', [text('dataset'), text('exchange'), int('rule')], ['dataset']),
  // Per daily dataset with stored period bars (periods.ts): what they were computed under.
  table('mds_period_state', [text('dataset'), text('shape')], ['dataset']),
  // Knowledge time (sql.ts knownStamp, docs/point-in-time.md): per change of a dataset's rows,
  // its stamp (the valid_from of its revisions) and the instant it became known, recorded as
  // the last statement before its COMMIT; both strictly increasing per dataset.
  table(
    'mds_changes',
    [text('dataset'), text('valid_from'), text('known_at'), text('batch_id')],
    ['dataset', 'valid_from'],
    {
      indexes: [
        { name: 'ux_mds_changes__known_at', columns: ['dataset', 'known_at'], unique: true },
        { name: 'ix_mds_changes__batch_id', columns: ['dataset', 'batch_id'] },
      ],
    },
  ),
  // The change feed (change-events.ts, docs/changes.md): one event per change of a dataset's
  // rows; ids from mds_feed's sequence, taken in the change's transaction, never reused.
  table(
    'mds_events',
    [
      int('id'),
      text('dataset'),
      text('kind'),
      text('batch_id'),
      text('known_at'),
      int('version'),
      int('inserted'),
      int('updated'),
      int('deleted'),
      int('code_count'),
      // The codes touched as a JSON array; null when more than the feed lists (model/changes.ts).
      text('codes', false),
      text('code_from', false),
      text('code_to', false),
      text('date_from', false),
      text('date_to', false),
    ],
    ['id'],
    { indexes: [{ name: 'ix_mds_events__dataset', columns: ['dataset', 'id'] }] },
  ),
  // The feed's sequence: the last id given, and the last one retention removed.
  table('mds_feed', [text('name'), int('last_id'), int('purged_through')], ['name']),
];

const columnsOf = (name: string): string[] =>
  INTERNAL_TABLES.find((t) => t.name === name)?.columns.map((c) => c.name) ?? [];

/** Column order of mds_batches, shared by the INSERT and the row mapping. */
export const BATCH_COLUMNS = columnsOf('mds_batches') as readonly (keyof BatchRecord)[];
export const KEY_COLUMNS = columnsOf('mds_keys') as readonly (keyof ApiKeyRecord)[];
