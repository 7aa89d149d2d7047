import type { Dataset } from '../catalog/catalog.js';
import { REV_BATCH, REV_FROM, REV_OP, REV_TO } from '../model/revisions.js';
import { datasetTable, type TableSpec } from './schema.js';

/**
 * Revision history (docs/point-in-time.md). A current row is its own open revision: the dataset
 * table carries REV_OP, REV_BATCH and REV_FROM of the change that made it. The revision table,
 * `mds_rev_<dataset>`, keeps the rest: every version a change replaced (closed: REV_TO set) and
 * every deletion (the values the row had; open until the key comes back). The union of both is
 * the whole history (historySource in sql.ts): an `as_of` read is the current statement over it
 * with the validity predicate. The `mds_` prefix is one no dataset or field may take.
 */
export function revisionTableName(d: Dataset): string {
  return `mds_rev_${d.name}`;
}

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
  const stamps = new Set([REV_OP, REV_BATCH, REV_FROM]);
  return {
    name,
    columns: [
      ...base.columns.filter((c) => !stamps.has(c.name)),
      { name: REV_OP, type: 'string', notNull: true },
      { name: REV_BATCH, type: 'string', notNull: true },
      { name: REV_FROM, type: 'timestamp', notNull: true },
      { name: REV_TO, type: 'timestamp', notNull: false },
    ],
    unique: [...key, REV_FROM],
    uniqueDesc: base.uniqueDesc,
    indexes: [
      ...base.indexes
        .filter((i) => !i.columns.includes(REV_FROM))
        .map((i) => ({
          name: shortName(`ix_${name}__${i.columns.join('__')}`),
          columns: i.columns,
          ...(i.desc ? { desc: i.desc } : {}),
        })),
      { name: shortName(`ix_${name}__${REV_FROM}`), columns: [REV_FROM, ...key] },
      { name: shortName(`ix_${name}__${REV_BATCH}`), columns: [REV_BATCH] },
      // The open deletion of each key, one at most: what a batch writing the key again closes.
      // A unique equality match, so the planner probes it per key even before the table has
      // statistics (a non-unique one made PostgreSQL take 20 s to close 10,000 keys).
      {
        name: shortName(`ux_${name}__open`),
        columns: key,
        unique: true,
        where: `"${REV_TO}" IS NULL`,
      },
    ],
  };
}
