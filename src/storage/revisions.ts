import type { Catalog, Dataset } from '../catalog/catalog.js';
import type { Tx } from './db.js';
import { ROW_JSON_COLUMN } from '../model/row-json.js';
import { batchFromRow } from './row-mapping.js';
import {
  ident,
  keyMatch,
  knownStamp,
  pruneSql,
  pruneWhere,
  q,
  raw,
  replacedBy,
  sql,
  upsertColumns,
  type Dialect,
  type Sql,
} from './sql.js';
import type { Step } from './step.js';
import { refreshPeriods } from './period-store.js';
import { refreshQuality } from './quality-summary.js';
import type { BatchChanges, KnownHooks, RevertResult, WriteBatch } from './store.js';
import type { BatchRecord } from '../model/batch.js';
import type { Value } from '../model/values.js';
import { revisionTable, revisionTableName } from './revision-schema.js';
import { appendChange, summarizeChange } from './change-events.js';
import { BASELINE_BATCH, REV_BATCH, REV_FROM, REV_OP, REV_TO, revertBatchId } from '../model/revisions.js';

/**
 * Revision history, written once for both backends over the per-dialect `Tx` (db.ts). A current
 * row is its own open revision (its stamp: op, batch, valid_from, written by the upsert), so a
 * new row costs no second copy; what a change replaces goes to the revision table, closed at
 * the change's instant: a replaced version (copied before the upsert overwrites it: the
 * dialect's writeRows), a pruned row's version and its deletion (pruneSteps). Revert and the
 * dashboard's change summary are steps too.
 */

/** Columns a revision copies from its row: every field, the row's JSON, created_at. */
export const revisionColumns = upsertColumns;

/** The later of `clock` and 1 ms after the dataset's last change (ISO UTC, ms). */
export function changeTime(clock: string, last: string | null): string {
  if (last === null || clock > last) return clock;
  return new Date(Date.parse(last) + 1).toISOString();
}

const cols = (d: Dataset, alias: string | null): Sql =>
  raw(
    revisionColumns(d)
      .map((c) => (alias ? `${alias}.${q(c)}` : q(c)))
      .join(', '),
  );

/** The revision table's columns a revision is written with: the row's, op, batch, valid_from, valid_to. */
const revInsert = (d: Dataset): Sql =>
  sql`INSERT INTO ${ident(revisionTableName(d))} (${cols(d, null)}, ${ident(REV_OP)}, ${ident(REV_BATCH)}, ${ident(REV_FROM)}, ${ident(REV_TO)})`;

/**
 * Locks the dataset's state row (creating it) and returns the time of its last change: every
 * change to a dataset's rows takes this lock before it writes and holds it to commit, so
 * revisions of a key are stamped in the order their transactions commit.
 */
function* lockState(tx: Tx, dataset: string): Step<string | null> {
  const [row] = yield* tx.rows(
    sql`INSERT INTO mds_dataset_state (dataset, version) VALUES (${dataset}, 0)
       ON CONFLICT (dataset) DO UPDATE SET version = mds_dataset_state.version RETURNING last_batch_at`,
  );
  return (row?.last_batch_at as string | null | undefined) ?? null;
}

/**
 * The instant a batch's changes are stamped with, under the dataset's lock (held to commit):
 * the later of the batch's clock and 1 ms after the dataset's last change.
 */
export function* changeInstant(tx: Tx, batch: WriteBatch): Step<string> {
  const last = yield* lockState(tx, batch.dataset.name);
  return changeTime(batch.clock?.() ?? batch.now, last);
}

/** The dataset changed (ETag, caches, coverage): a new version and its last batch (its time: `publish`). */
export function* bumpState(tx: Tx, dataset: string, batchId: string): Step<void> {
  yield* tx.run(
    sql`UPDATE mds_dataset_state SET version = version + 1, last_batch_id = ${batchId} WHERE dataset = ${dataset}`,
  );
}

/**
 * The last statements before a change's COMMIT: the instant it becomes known, the later of
 * `clock` and its stamp (so strictly after the dataset's previous change: the stamp is), is
 * recorded with its stamp (mds_changes; sql.ts knownStamp) and as the dataset's last change.
 * Returns that instant: the batch's processed_at, a revert's reverted_at. The dataset's first
 * recorded change is preceded by an empty baseline row: an instant before it knows nothing.
 */
export function* publish(
  tx: Tx,
  dataset: string,
  batchId: string,
  stamp: string,
  clock: () => string,
): Step<string> {
  // Reads are held back from here to the end of the COMMIT (SQLite's read gate), so the
  // clock is read after: no read can pass between the instant and the change's visibility.
  yield* tx.holdReads();
  const now = clock();
  const known = now > stamp ? now : stamp;
  yield* tx.run(
    sql`INSERT INTO mds_changes (dataset, valid_from, known_at, batch_id) SELECT ${dataset}, '', '', ${BASELINE_BATCH}
      WHERE NOT EXISTS (SELECT 1 FROM mds_changes WHERE dataset = ${dataset})`,
  );
  yield* tx.run(
    sql`INSERT INTO mds_changes (dataset, valid_from, known_at, batch_id) VALUES (${dataset}, ${stamp}, ${known}, ${batchId})`,
  );
  yield* tx.run(sql`UPDATE mds_dataset_state SET last_batch_at = ${known} WHERE dataset = ${dataset}`);
  return known;
}

/**
 * Upgrade to recorded knowledge instants: the dataset's latest stamp so far (its state's last
 * change, or a later baseline stamp of an earlier upgrade) is recorded as known at itself, so
 * every earlier stamp stays its own knowledge instant.
 */
export function* baselineChange(tx: Tx, d: Dataset): Step<void> {
  const [row] = yield* tx.rows(
    sql`SELECT max(v) AS v FROM (SELECT last_batch_at AS v FROM mds_dataset_state WHERE dataset = ${d.name}
      UNION ALL SELECT max(${ident(REV_FROM)}) FROM ${ident(d.name)}
      UNION ALL SELECT max(${ident(REV_FROM)}) FROM ${ident(revisionTableName(d))}) AS s`,
  );
  const at = typeof row?.v === 'string' ? row.v : null;
  if (at === null) return;
  // Only for stamps later than every recorded change (rows stamped by an upgrade's baseline):
  // a recorded change's stamps are answered through its own record.
  yield* tx.run(
    sql`INSERT INTO mds_changes (dataset, valid_from, known_at, batch_id) SELECT ${d.name}, ${at}, ${at}, ${BASELINE_BATCH}
      WHERE NOT EXISTS (SELECT 1 FROM mds_changes WHERE dataset = ${d.name} AND (known_at >= ${at} OR valid_from >= ${at}))`,
  );
}

/**
 * The stamp of a batch's revisions: recorded with its knowledge instant (its processed_at), or,
 * for a batch processed before knowledge instants were recorded, its processed_at itself.
 */
function* stampOf(tx: Tx, record: Pick<BatchRecord, 'batch_id' | 'dataset' | 'processed_at'>): Step<Stamped> {
  const [row] = yield* tx.rows(
    sql`SELECT valid_from FROM mds_changes WHERE dataset = ${record.dataset} AND batch_id = ${record.batch_id}`,
  );
  return {
    batch_id: record.batch_id,
    stamp: typeof row?.valid_from === 'string' ? row.valid_from : record.processed_at,
  };
}

/** A batch and the stamp of its revisions. */
interface Stamped {
  batch_id: string;
  stamp: string;
}

/**
 * The current versions of the rows `where` selects (over alias `t`: the dataset's table unless
 * `from` says otherwise) into the revision table, closed at `at`: what a change is about to
 * replace or delete.
 */
export function replacedSql(d: Dataset, at: string, where: Sql, from?: Sql): Sql {
  return sql`${revInsert(d)} SELECT ${cols(d, 't')}, t.${ident(REV_OP)}, t.${ident(REV_BATCH)}, t.${ident(REV_FROM)}, ${at}
    FROM ${from ?? sql`${ident(d.name)} AS t`} WHERE ${where}`;
}

/** Deletions of the rows `where` selects (alias `t`): their values, open from `at`. */
function deletionsSql(d: Dataset, batchId: string, at: string, where: Sql): Sql {
  return sql`${revInsert(d)} SELECT ${cols(d, 't')}, 'delete', ${batchId}, ${at}, NULL FROM ${ident(d.name)} AS t WHERE ${where}`;
}

/**
 * After a batch wrote rows at `at`: a key it inserted that had been deleted ends its deletion.
 * Skipped (one probe of the open-deletion index) while the dataset has no open deletion.
 */
export function* closeDeletions(tx: Tx, d: Dataset, at: string): Step<void> {
  const rev = ident(revisionTableName(d));
  const [open] = yield* tx.rows(sql`SELECT 1 AS x FROM ${rev} WHERE ${ident(REV_TO)} IS NULL LIMIT 1`);
  if (!open) return;
  yield* tx.run(
    sql`UPDATE ${rev} AS r SET ${ident(REV_TO)} = ${at} FROM ${ident(d.name)} AS t
      WHERE ${raw(keyMatch(d, 'r', 't'))} AND r.${ident(REV_TO)} IS NULL
        AND t.${ident(REV_FROM)} = ${at} AND t.${ident(REV_OP)} = 'insert'`,
  );
}

/**
 * A full snapshot's prune at `at`: the partition's rows the batch did not name (their keys in
 * table `keys`, batchKeys) are deleted; each leaves its version, closed, and its deletion.
 * Returns how many.
 */
export function* pruneSteps(
  tx: Tx,
  batch: WriteBatch,
  prune: NonNullable<WriteBatch['prune']>,
  keys: string,
  at: string,
): Step<number> {
  const d = batch.dataset;
  const where = pruneWhere(d, prune, keys);
  yield* tx.run(replacedSql(d, at, where));
  yield* tx.run(deletionsSql(d, batch.batchId, at, where));
  return yield* tx.run(pruneSql(d, prune, keys));
}

/** Upgrade: current rows without a stamp are stamped as inserted by batch "baseline" at `at`. */
export function baselineSql(d: Dataset, at: string): Sql {
  return sql`UPDATE ${ident(d.name)} SET ${ident(REV_OP)} = 'insert', ${ident(REV_BATCH)} = ${BASELINE_BATCH}, ${ident(REV_FROM)} = ${at}
    WHERE ${ident(REV_FROM)} IS NULL`;
}

/**
 * Upgrade from revision tables that held every open revision: each current row takes its open
 * revision's stamp, and those revisions leave the table (open deletions stay).
 */
export function* moveOpenRevisions(tx: Tx, d: Dataset): Step<void> {
  const rev = ident(revisionTableName(d));
  yield* tx.run(
    sql`UPDATE ${ident(d.name)} AS t SET ${ident(REV_OP)} = r.${ident(REV_OP)}, ${ident(REV_BATCH)} = r.${ident(REV_BATCH)}, ${ident(REV_FROM)} = r.${ident(REV_FROM)}
      FROM ${rev} AS r WHERE ${raw(keyMatch(d, 'r', 't'))} AND r.${ident(REV_TO)} IS NULL AND r.${ident(REV_OP)} <> 'delete'`,
  );
  yield* tx.run(sql`DELETE FROM ${rev} WHERE ${ident(REV_TO)} IS NULL AND ${ident(REV_OP)} <> 'delete'`);
}

/** Retention: one bounded step of deleting revisions that ended before `before`. */
export function purgeRevisionsSql(d: Dataset, dialect: Dialect, before: string, step: number): Sql {
  const rev = ident(revisionTableName(d));
  const id = raw(dialect.rowId);
  // Ended by the change known at `before` or earlier: an as_of at or after it reads the rows
  // valid at that change's stamp or a later one, never these.
  const bound = knownStamp(d.name, before);
  // valid_from < valid_to: the bound on valid_from lets the (valid_from, key) index find them.
  return sql`DELETE FROM ${rev} WHERE ${id} IN (SELECT ${id} FROM ${rev}
    WHERE ${ident(REV_FROM)} < ${bound} AND ${ident(REV_TO)} <= ${bound} LIMIT ${raw(String(step))})`;
}

/** After retention removed revisions of a dataset: its trail changed (ETag, caches). */
export function touchStateSql(dataset: string): Sql {
  return sql`UPDATE mds_dataset_state SET version = version + 1 WHERE dataset = ${dataset}`;
}

const previous = (d: Dataset): Sql => raw(replacedBy(d, 'p', 'r'));

/** A row's response JSON as stored with its revision (row-json.ts), completed with created_at. */
const rowJsonOf = (alias: string): Sql =>
  raw(`${alias}.${q(ROW_JSON_COLUMN)} || ',"created_at":"' || ${alias}.${q('created_at')} || '"}'`);

/** "Current row `t` is the revision batch `record` wrote" (all of a batch's share its stamp). */
const currentOf = (d: Dataset, record: Stamped, alias = 't'): Sql =>
  sql`${raw(alias)}.${ident(REV_FROM)} = ${record.stamp} AND ${raw(alias)}.${ident(REV_BATCH)} = ${record.batch_id}`;

/** Every revision a batch wrote, as a table (revision columns): the replaced and deleted, then the current. */
function revisionsOf(d: Dataset, record: Stamped): Sql {
  const names = revisionTable(d).columns.map((c) => q(c.name));
  const current = names.map((c) => (c === q(REV_TO) ? `NULL AS ${c}` : `t.${c}`));
  return sql`(SELECT ${raw(names.join(', '))} FROM ${ident(revisionTableName(d))} WHERE ${ident(REV_BATCH)} = ${record.batch_id}
    UNION ALL SELECT ${raw(current.join(', '))} FROM ${ident(d.name)} AS t WHERE ${currentOf(d, record)})`;
}

/** The revisions batch `batchId` wrote at `at`, as a relation `c`: the rows it changed (quality-summary.ts). */
export function batchRevisionsSql(d: Dataset, batchId: string, at: string): Sql {
  return sql`${revisionsOf(d, { batch_id: batchId, stamp: at })} AS c`;
}

function* opCounts(tx: Tx, d: Dataset, record: Stamped): Step<BatchChanges['counts']> {
  const rows = yield* tx.rows(
    sql`SELECT ${ident(REV_OP)} AS op, count(*) AS n FROM ${revisionsOf(d, record)} AS r GROUP BY ${ident(REV_OP)}`,
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
  hooks?: KnownHooks,
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
  // Read again under the lock: a revert of the same batch that held it has committed by now.
  // PostgreSQL read the record above before waiting (each statement sees what has committed
  // when it starts), so the loser of two concurrent reverts would see the winner's revisions as
  // later changes of every row (4092 listing them all); SQLite's writer lock is taken before the
  // first read. Both now answer the loser as an already reverted batch: 200, nothing to revert.
  const [again] = yield* tx.rows(sql`SELECT reverted_at FROM mds_batches WHERE batch_id = ${batchId}`);
  if (typeof again?.reverted_at === 'string') {
    return {
      kind: 'reverted',
      record: { ...record, reverted_at: again.reverted_at },
      counts: zero,
      already: true,
    };
  }
  const stamped = yield* stampOf(tx, record);
  // The batch's revisions in the revision table were replaced (closed) or are its deletions;
  // a closed one means a later change of that key.
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
  const counts = yield* opCounts(tx, d, stamped);
  if (counts.insert + counts.update + counts.delete === 0) {
    if (record.accepted + record.pruned > 0) {
      return { kind: 'no_history', reason: 'the batch was processed before revision history began' };
    }
    // A batch that changed nothing (rejected, every record a duplicate): nothing to put back, so
    // the dataset's version, ETag and latest change stay as they were; only the record says so.
    yield* tx.run(sql`UPDATE mds_batches SET reverted_at = ${at} WHERE batch_id = ${batchId}`);
    return { kind: 'reverted', record: { ...record, reverted_at: at }, counts: zero, already: false };
  }
  const [missing] = yield* tx.rows(
    sql`SELECT count(*) AS n FROM ${revisionsOf(d, stamped)} AS r WHERE r.${ident(REV_OP)} <> 'insert'
      AND NOT EXISTS (SELECT 1 FROM ${rev} AS p WHERE ${previous(d)})`,
  );
  if (Number(missing?.n ?? 0) > 0) {
    return { kind: 'no_history', reason: 'the values the batch replaced were removed by revision retention' };
  }

  const revert = revertBatchId(batchId);
  const ofOp = (op: string): Sql => sql`${currentOf(d, stamped)} AND t.${ident(REV_OP)} = ${op}`;
  // Rows the batch inserted: their version closes, a deletion opens, the row goes.
  yield* tx.run(replacedSql(d, at, ofOp('insert')));
  yield* tx.run(deletionsSql(d, revert, at, ofOp('insert')));
  yield* tx.run(
    sql`DELETE FROM ${main} WHERE ${currentOf(d, stamped, q(d.name))} AND ${main}.${ident(REV_OP)} = 'insert'`,
  );
  // Rows it updated: their version closes, the one it replaced comes back (created_at too).
  yield* tx.run(replacedSql(d, at, ofOp('update')));
  const names = revisionColumns(d);
  const keyNames = new Set(d.key.map((k) => k.name));
  const set = names
    .filter((c) => !keyNames.has(c))
    .map((c) => `${q(c)} = p.${q(c)}`)
    .concat(`${q(REV_OP)} = 'update'`);
  yield* tx.run(
    sql`UPDATE ${main} SET ${raw(set.join(', '))}, ${ident(REV_BATCH)} = ${revert}, ${ident(REV_FROM)} = ${at}
      FROM ${rev} AS p WHERE ${currentOf(d, stamped, q(d.name))} AND ${main}.${ident(REV_OP)} = 'update'
        AND ${raw(keyMatch(d, 'p', q(d.name)))} AND p.${ident(REV_TO)} = ${stamped.stamp}`,
  );
  // Rows it deleted: the version the deletion ended comes back, and the deletion ends.
  const deleted = sql`${mine} AND r.${ident(REV_OP)} = 'delete' AND r.${ident(REV_TO)} IS NULL`;
  yield* tx.run(
    sql`INSERT INTO ${main} (${cols(d, null)}, ${ident(REV_OP)}, ${ident(REV_BATCH)}, ${ident(REV_FROM)})
      SELECT ${cols(d, 'p')}, 'insert', ${revert}, ${at} FROM ${rev} AS r JOIN ${rev} AS p ON ${previous(d)} WHERE ${deleted}`,
  );
  yield* tx.run(sql`UPDATE ${rev} AS r SET ${ident(REV_TO)} = ${at} WHERE ${deleted}`);
  yield* bumpState(tx, d.name, revert);
  // The keys the revert changed are those of its own revisions: their codes' quality summaries
  // and their periods' stored bars follow.
  const changed = batchRevisionsSql(d, revert, at);
  yield* refreshQuality(tx, catalog, d, changed);
  yield* refreshPeriods(tx, d, changed);
  const event = yield* summarizeChange(tx, catalog, d, changed, revert, { revert: true, pruned: 0 });
  // Known when it commits: the record's reverted_at is that instant.
  hooks?.beforeKnown?.();
  const known = yield* publish(tx, d.name, revert, at, clock);
  yield* appendChange(tx, event, known);
  yield* tx.run(sql`UPDATE mds_batches SET reverted_at = ${known} WHERE batch_id = ${batchId}`);
  hooks?.afterKnown?.();
  return {
    kind: 'reverted',
    record: { ...record, reverted_at: known },
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
  const stamped = yield* stampOf(tx, record);
  const counts = yield* opCounts(tx, d, stamped);
  const rev = ident(revisionTableName(d));
  const rows = yield* tx.rows(
    sql`SELECT r.${ident(REV_OP)} AS op, ${rowJsonOf('r')} AS after, ${rowJsonOf('p')} AS before
      FROM ${revisionsOf(d, stamped)} AS r LEFT JOIN ${rev} AS p ON ${previous(d)}
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
