import type { Dataset, Field } from '../catalog/catalog.js';
import { datasetTable, type TableSpec } from './schema.js';

/**
 * Revision history (docs/point-in-time.md): every change a batch makes to a dataset's row is
 * kept in the dataset's revision table, `mds_rev_<dataset>`: the row's columns as they were
 * after the change (for a delete: as they were before it), plus the four columns below. The
 * current table is left as it was, so current queries run the same plans as without history;
 * an `as_of` read is the same statement over the revision table with the validity predicate.
 * The `mds_` prefix is one no dataset or field may take.
 */
export const REV_OP = 'mds_op';
export const REV_BATCH = 'mds_batch_id';
export const REV_FROM = 'mds_valid_from';
export const REV_TO = 'mds_valid_to';

export type RevisionOp = 'insert' | 'update' | 'delete';

/** batch_id of the revisions the upgrade writes for rows stored before history existed. */
export const BASELINE_BATCH = 'baseline';
/** batch_id of the revisions a revert writes. */
export const revertBatchId = (batchId: string): string => `revert:${batchId}`;
/** Ids the service writes revisions under itself: a pushed batch may not take one. */
export const isReservedBatchId = (batchId: string): boolean =>
  batchId === BASELINE_BATCH || batchId.startsWith('revert:');

export function revisionTableName(d: Dataset): string {
  return `mds_rev_${d.name}`;
}

function revisionField(name: string, type: Field['type'], required: boolean): Field {
  return {
    name,
    apiName: name,
    type,
    required,
    enum: null,
    pattern: null,
    description: null,
    serverSet: false,
    exclusiveMinimum: null,
  };
}

/** The revision columns as plan fields: the trail's filters and sort (`QueryPlan.trail`). */
export const REVISION_FIELDS = {
  op: revisionField(REV_OP, 'string', true),
  batchId: revisionField(REV_BATCH, 'string', true),
  validFrom: revisionField(REV_FROM, 'timestamp', true),
  validTo: revisionField(REV_TO, 'timestamp', false),
} as const;

/** PostgreSQL keeps 63 bytes of a name: longer ones are shortened with a hash, stable per name. */
function shortName(name: string): string {
  if (name.length <= 63) return name;
  let h = 0;
  for (const ch of name) h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  return `${name.slice(0, 54)}_${h.toString(16).padStart(8, '0')}`;
}

/**
 * The revision table of a dataset: its columns, unique on (key, valid_from); the dataset's own
 * indexes (so a filtered `as_of` page is served like the current one), one on valid_from then
 * the key (the trail's order, retention) and one on batch_id (the trail's filter, revert).
 */
export function revisionTable(d: Dataset): TableSpec {
  const base = datasetTable(d);
  const name = revisionTableName(d);
  const key = base.unique;
  return {
    name,
    columns: [
      ...base.columns,
      { name: REV_OP, type: 'string', notNull: true },
      { name: REV_BATCH, type: 'string', notNull: true },
      { name: REV_FROM, type: 'timestamp', notNull: true },
      { name: REV_TO, type: 'timestamp', notNull: false },
    ],
    unique: [...key, REV_FROM],
    uniqueDesc: base.uniqueDesc,
    indexes: [
      ...base.indexes.map((i) => ({
        name: shortName(`ix_${name}__${i.columns.join('__')}`),
        columns: i.columns,
        ...(i.desc ? { desc: i.desc } : {}),
      })),
      { name: shortName(`ix_${name}__${REV_FROM}`), columns: [REV_FROM, ...key] },
      { name: shortName(`ix_${name}__${REV_BATCH}`), columns: [REV_BATCH] },
      // The open revision of each key, one at most: what a batch closes and asks the op of. A
      // unique equality match, so the planner probes it per changed key even before the table
      // has statistics (without it PostgreSQL took 20 s to close 10,000 keys by another index).
      {
        name: shortName(`ux_${name}__open`),
        columns: key,
        unique: true,
        where: `"${REV_TO}" IS NULL`,
      },
    ],
  };
}
