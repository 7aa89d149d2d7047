import type { Catalog, Dataset } from '../catalog/catalog.js';
import type { Tx } from './db.js';
import { ROW_JSON_COLUMN } from './row-json.js';
import { batchFromRow } from './row-mapping.js';
import { ident, pruneWhere, q, raw, sql, upsertColumns, type Dialect, type Sql } from './sql.js';
import type { Step } from './step.js';
import type { BatchChanges, BatchRecord, RevertResult, Value, WriteBatch } from './store.js';
import {
  BASELINE_BATCH,
  REV_BATCH,
  REV_FROM,
  REV_OP,
  REV_TO,
  revertBatchId,
  revisionTableName,
} from './revision-schema.js';

/**
 * Revision history, written once for both backends over the per-dialect `Tx` (db.ts). A batch's
 * changed rows (its upserts, which the dialect's writeRows collects, and the rows its prune
 * deletes) are gathered in a "changes" table, then stamped, in the batch's transaction, as
 * revisions (recordChanges). Revert and the dashboard's change summary are steps too.
 */

/** Columns a revision copies from its row: every field, the row's JSON, created_at. */
export const revisionColumns = upsertColumns;

/** Column of the changes table: 1 for a row the prune deleted. */
export const CHANGE_DELETED = 'mds_deleted';
/** Column of the changes table: the op of the key's open revision before this batch (null: none). */
const CHANGE_PRIOR = 'mds_prior_op';

/**
 * The changes table's columns (the dialect creates it, temporary, per batch): the revision
 * columns and CHANGE_DELETED. Column types from the dialect.
 */
export function changesColumns(d: Dataset, dialect: Dialect): string {
  const cols = d.fields.map((f) => `${q(f.name)} ${dialect.columnType(f.type)}`);
  cols.push(
    `${q(ROW_JSON_COLUMN)} ${dialect.columnType('string')}`,
    `${q('created_at')} ${dialect.columnType('timestamp')}`,
    `${q(CHANGE_DELETED)} ${dialect.columnType('flag')} NOT NULL`,
    `${q(CHANGE_PRIOR)} ${dialect.columnType('string')}`,
  );
  return cols.join(', ');
}

/** The later of `clock` and 1 ms after the dataset's last change (ISO UTC, ms). */
export function changeTime(clock: string, last: string | null): string {
  if (last === null || clock > last) return clock;
  return new Date(Date.parse(last) + 1).toISOString();
}

const keyMatch = (d: Dataset, a: string, b: string): string =>
  d.key.map((k) => `${a}.${q(k.name)} = ${b}.${q(k.name)}`).join(' AND ');

const cols = (d: Dataset, alias: string | null): Sql =>
  raw(
    revisionColumns(d)
      .map((c) => (alias ? `${alias}.${q(c)}` : q(c)))
      .join(', '),
  );

/**
 * Locks the dataset's state row (creating it) and returns the time of its last change: every
 * change to a dataset's rows takes this lock before it stamps revisions and holds it to commit,
 * so revisions of a key are stamped in the order their transactions commit.
 */
function* lockState(tx: Tx, dataset: string): Step<string | null> {
  const [row] = yield* tx.rows(
    sql`INSERT INTO mds_dataset_state (dataset, version) VALUES (${dataset}, 0)
       ON CONFLICT (dataset) DO UPDATE SET version = mds_dataset_state.version RETURNING last_batch_at`,
  );
  return (row?.last_batch_at as string | null | undefined) ?? null;
}

/** The dataset changed (ETag, caches, coverage): a new version, its last batch and time. */
function* bumpState(tx: Tx, dataset: string, batchId: string, at: string): Step<void> {
  yield* tx.run(
    sql`UPDATE mds_dataset_state SET version = version + 1, last_batch_id = ${batchId}, last_batch_at = ${at} WHERE dataset = ${dataset}`,
  );
}

/** The rows a full snapshot's prune is about to delete, into the changes table (deleted = 1). */
export function collectPrunedSql(
  d: Dataset,
  prune: NonNullable<WriteBatch['prune']>,
  keys: string,
  changes: string,
): Sql {
  return sql`INSERT INTO ${raw(changes)} (${cols(d, null)}, ${ident(CHANGE_DELETED)}) SELECT ${cols(d, 't')}, 1 FROM ${ident(d.name)} AS t WHERE ${pruneWhere(d, prune, keys)}`;
}

/**
 * Stamps the batch's changes (table `changes`) as revisions and returns its processed_at: the
 * later of the batch's clock and 1 ms after the dataset's last change, under the dataset's lock.
 * A new revision is an update when the key's open revision is a row, an insert when there is
 * none or it is a deletion. The open revisions are closed before the new ones are written: a
 * key has at most one open revision at any moment (a unique index says so).
 */
export function* recordChanges(tx: Tx, batch: WriteBatch, changes: string): Step<string> {
  const d = batch.dataset;
  const last = yield* lockState(tx, d.name);
  const at = changeTime(batch.clock?.() ?? batch.now, last);
  const rev = ident(revisionTableName(d));
  yield* tx.analyze(changes);
  yield* tx.run(
    sql`UPDATE ${raw(changes)} AS c SET ${ident(CHANGE_PRIOR)} = (SELECT r.${ident(REV_OP)} FROM ${rev} AS r
      WHERE ${raw(keyMatch(d, 'r', 'c'))} AND r.${ident(REV_TO)} IS NULL)`,
  );
  yield* tx.run(
    sql`UPDATE ${rev} AS r SET ${ident(REV_TO)} = ${at} FROM ${raw(changes)} AS c
      WHERE ${raw(keyMatch(d, 'r', 'c'))} AND r.${ident(REV_TO)} IS NULL`,
  );
  yield* tx.run(
    sql`INSERT INTO ${rev} (${cols(d, null)}, ${ident(REV_OP)}, ${ident(REV_BATCH)}, ${ident(REV_FROM)})
      SELECT ${cols(d, 'c')}, CASE WHEN c.${ident(CHANGE_DELETED)} = 1 THEN 'delete'
        WHEN coalesce(c.${ident(CHANGE_PRIOR)}, 'delete') = 'delete' THEN 'insert' ELSE 'update' END, ${batch.batchId}, ${at}
      FROM ${raw(changes)} AS c`,
  );
  yield* bumpState(tx, d.name, batch.batchId, at);
  return at;
}

/** Upgrade: rows stored before history existed get one revision each (batch "baseline"). */
export function baselineSql(d: Dataset, at: string): Sql {
  return sql`INSERT INTO ${ident(revisionTableName(d))} (${cols(d, null)}, ${ident(REV_OP)}, ${ident(REV_BATCH)}, ${ident(REV_FROM)})
    SELECT ${cols(d, null)}, 'insert', ${BASELINE_BATCH}, ${at} FROM ${ident(d.name)}`;
}

/** Retention: one bounded step of deleting revisions that ended before `before`. */
export function purgeRevisionsSql(d: Dataset, dialect: Dialect, before: string, step: number): Sql {
  const rev = ident(revisionTableName(d));
  const id = raw(dialect.rowId);
  // valid_from < valid_to: the bound on valid_from lets the (valid_from, key) index find them.
  return sql`DELETE FROM ${rev} WHERE ${id} IN (SELECT ${id} FROM ${rev}
    WHERE ${ident(REV_FROM)} < ${before} AND ${ident(REV_TO)} < ${before} LIMIT ${raw(String(step))})`;
}

/** After retention removed revisions of a dataset: its trail changed (ETag, caches). */
export function touchStateSql(dataset: string): Sql {
  return sql`UPDATE mds_dataset_state SET version = version + 1 WHERE dataset = ${dataset}`;
}

/** "Revision p is the one r replaced": same key, closed when r began. */
const previous = (d: Dataset): Sql => raw(`${keyMatch(d, 'p', 'r')} AND p.${q(REV_TO)} = r.${q(REV_FROM)}`);

/** A row's response JSON as stored with its revision (row-json.ts), completed with created_at. */
const rowJsonOf = (alias: string): Sql =>
  raw(`${alias}.${q(ROW_JSON_COLUMN)} || ',"created_at":"' || ${alias}.${q('created_at')} || '"}'`);

function* opCounts(tx: Tx, d: Dataset, batchId: string): Step<BatchChanges['counts']> {
  const rows = yield* tx.rows(
    sql`SELECT ${ident(REV_OP)} AS op, count(*) AS n FROM ${ident(revisionTableName(d))} WHERE ${ident(REV_BATCH)} = ${batchId} GROUP BY ${ident(REV_OP)}`,
  );
  const counts = { insert: 0, update: 0, delete: 0 };
  for (const r of rows) counts[String(r.op) as keyof typeof counts] = Number(r.n);
  return counts;
}

const CONFLICT_LIST = 100;

/**
 * Revert (docs/point-in-time.md): for every revision the batch wrote, put back the one it
 * replaced, as new revisions of batch `revert:<id>`. Refused, changing nothing, when a later
 * revision of any of those keys exists.
 */
export function* revertSteps(
  tx: Tx,
  catalog: Catalog,
  batchId: string,
  clock: () => string,
): Step<RevertResult> {
  const [row] = yield* tx.rows(sql`SELECT * FROM mds_batches WHERE batch_id = ${batchId}`);
  if (!row) return { kind: 'not_found' };
  const record = batchFromRow(row);
  const zero = { restored: 0, updated: 0, deleted: 0 };
  if (record.reverted_at !== null) return { kind: 'reverted', record, counts: zero, already: true };
  const d = catalog.byName.get(record.dataset);
  if (!d) return { kind: 'no_history', reason: `dataset ${record.dataset} is no longer served` };
  const rev = ident(revisionTableName(d));
  const main = ident(d.name);

  // The dataset's lock first: no batch can stamp revisions of these keys until this commits.
  const at = changeTime(clock(), yield* lockState(tx, d.name));
  const mine = sql`r.${ident(REV_BATCH)} = ${batchId}`;
  const later = sql`${mine} AND r.${ident(REV_TO)} IS NOT NULL`;
  const keyList = raw(d.key.map((k) => `r.${q(k.name)} AS ${q(k.apiName)}`).join(', '));
  const order = raw(d.key.map((k) => `r.${q(k.name)}`).join(', '));
  const conflicts = yield* tx.rows(
    sql`SELECT ${keyList} FROM ${rev} AS r WHERE ${later} ORDER BY ${order} LIMIT ${raw(String(CONFLICT_LIST))}`,
  );
  if (conflicts.length > 0) {
    const [n] = yield* tx.rows(sql`SELECT count(*) AS n FROM ${rev} AS r WHERE ${later}`);
    return { kind: 'conflict', keys: conflicts as Record<string, Value>[], total: Number(n?.n ?? 0) };
  }
  const counts = yield* opCounts(tx, d, batchId);
  if (counts.insert + counts.update + counts.delete === 0 && record.accepted + record.pruned > 0) {
    return { kind: 'no_history', reason: 'the batch was processed before revision history began' };
  }
  const [missing] = yield* tx.rows(
    sql`SELECT count(*) AS n FROM ${rev} AS r WHERE ${mine} AND r.${ident(REV_OP)} <> 'insert'
      AND NOT EXISTS (SELECT 1 FROM ${rev} AS p WHERE ${previous(d)})`,
  );
  if (Number(missing?.n ?? 0) > 0) {
    return { kind: 'no_history', reason: 'the values the batch replaced were removed by revision retention' };
  }

  const names = revisionColumns(d);
  // The batch's revisions end now (one open revision per key at any moment); then the new
  // ones: a row the batch inserted is deleted (its values as they were), the others get the
  // values of the revision the batch replaced.
  yield* tx.run(
    sql`UPDATE ${rev} SET ${ident(REV_TO)} = ${at} WHERE ${ident(REV_BATCH)} = ${batchId} AND ${ident(REV_TO)} IS NULL`,
  );
  yield* tx.run(
    sql`INSERT INTO ${rev} (${cols(d, null)}, ${ident(REV_OP)}, ${ident(REV_BATCH)}, ${ident(REV_FROM)})
      SELECT ${raw(names.map((c) => `CASE WHEN r.${q(REV_OP)} = 'insert' THEN r.${q(c)} ELSE p.${q(c)} END`).join(', '))},
        CASE r.${ident(REV_OP)} WHEN 'insert' THEN 'delete' WHEN 'update' THEN 'update' ELSE 'insert' END,
        ${revertBatchId(batchId)}, ${at}
      FROM ${rev} AS r LEFT JOIN ${rev} AS p ON ${previous(d)} WHERE ${mine}`,
  );
  const ofOp = (op: string): Sql =>
    sql`${mine} AND r.${ident(REV_OP)} = ${op} AND ${raw(d.key.map((k) => `r.${q(k.name)} = ${q(d.name)}.${q(k.name)}`).join(' AND '))}`;
  yield* tx.run(sql`DELETE FROM ${main} WHERE EXISTS (SELECT 1 FROM ${rev} AS r WHERE ${ofOp('insert')})`);
  const keyNames = new Set(d.key.map((k) => k.name));
  const set = names.filter((c) => !keyNames.has(c)).map((c) => `${q(c)} = p.${q(c)}`);
  yield* tx.run(
    sql`UPDATE ${main} SET ${raw(set.join(', '))} FROM ${rev} AS r, ${rev} AS p WHERE ${ofOp('update')} AND ${previous(d)}`,
  );
  yield* tx.run(
    sql`INSERT INTO ${main} (${cols(d, null)}) SELECT ${cols(d, 'p')}
      FROM ${rev} AS r JOIN ${rev} AS p ON ${previous(d)} WHERE ${mine} AND r.${ident(REV_OP)} = 'delete'`,
  );
  yield* tx.run(sql`UPDATE mds_batches SET reverted_at = ${at} WHERE batch_id = ${batchId}`);
  yield* bumpState(tx, d.name, revertBatchId(batchId), at);
  return {
    kind: 'reverted',
    record: { ...record, reverted_at: at },
    counts: { restored: counts.delete, updated: counts.update, deleted: counts.insert },
    already: false,
  };
}

/** The dashboard's view of a batch: revisions per op and a sample with the values they replaced. */
export function* batchChangesSteps(
  tx: Tx,
  catalog: Catalog,
  record: BatchRecord,
  sample: number,
): Step<BatchChanges> {
  const d = catalog.byName.get(record.dataset);
  if (!d) return { counts: { insert: 0, update: 0, delete: 0 }, sample: [] };
  const counts = yield* opCounts(tx, d, record.batch_id);
  const rev = ident(revisionTableName(d));
  const rows = yield* tx.rows(
    sql`SELECT r.${ident(REV_OP)} AS op, ${rowJsonOf('r')} AS after, ${rowJsonOf('p')} AS before
      FROM ${rev} AS r LEFT JOIN ${rev} AS p ON ${previous(d)} WHERE r.${ident(REV_BATCH)} = ${record.batch_id}
      ORDER BY ${raw(d.key.map((k) => `r.${q(k.name)}`).join(', '))} LIMIT ${raw(String(Math.max(0, Math.floor(sample))))}`,
  );
  return {
    counts,
    sample: rows.map((r) => ({
      op: String(r.op),
      before: typeof r.before === 'string' ? r.before : null,
      after: String(r.after),
    })),
  };
}
