import { holdsId } from '../ingest/batch-registry.js';
import type { Tx } from './db.js';
import { batchFromRow, batchToParams } from './row-mapping.js';
import { BATCH_COLUMNS } from './internal-tables.js';
import { join, pruneSql, raw, sql } from './sql.js';
import type { Step } from './step.js';
import type { ApplyResult, BatchRecord, WriteBatch, WriteOutcome } from './store.js';

/**
 * The batch transaction, written once for both backends over the small per-dialect `Tx`
 * (db.ts): claim the batch_id → write the rows → prune a full snapshot → finish the record →
 * bump the dataset's version → save the record. All or nothing: `Db.transaction` commits only
 * when the step returns.
 */
export function* batchTransaction(
  tx: Tx,
  batch: WriteBatch,
  finish: (outcome: WriteOutcome) => BatchRecord,
): Step<ApplyResult> {
  const claimed = yield* claim(tx, batch.batchId);
  if (claimed) return claimed;
  const written = yield* tx.writeRows(batch);
  // Whatever must follow each row change inside the batch's transaction (a revision history)
  // belongs here, after the write and before the prune; both backends run it.
  const pruned = batch.prune
    ? yield* tx.run(pruneSql(batch.dataset, batch.prune, yield* tx.batchKeys(batch)))
    : 0;
  const record = finish({ written, unchanged: batch.rows.length - written, pruned });
  if (written + pruned > 0) yield* bumpVersion(tx, batch.dataset.name, batch.batchId, record.processed_at);
  yield* insertRecord(tx, record);
  return { kind: 'applied', record };
}

/** Saves the record of a batch whose every record was rejected (nothing else written). */
export function* rejectedBatchTransaction(tx: Tx, record: BatchRecord): Step<ApplyResult> {
  const claimed = yield* claim(tx, record.batch_id);
  if (claimed) return claimed;
  yield* insertRecord(tx, record);
  return { kind: 'applied', record };
}

/**
 * Under the batch's lock, the registry's rule (ingest/batch-registry.ts): a batch that holds
 * the id answers for it; a rejected one's record is replaced. null: go on.
 */
function* claim(tx: Tx, batchId: string): Step<ApplyResult | null> {
  if (!(yield* tx.lockBatch(batchId))) return { kind: 'in_progress' };
  const [row] = yield* tx.rows(sql`SELECT * FROM mds_batches WHERE batch_id = ${batchId}`);
  const prior = row ? batchFromRow(row) : null;
  if (holdsId(prior)) return { kind: 'exists', record: prior };
  if (prior) yield* tx.run(sql`DELETE FROM mds_batches WHERE batch_id = ${batchId}`);
  return null;
}

function* bumpVersion(tx: Tx, dataset: string, batchId: string, at: string): Step<void> {
  yield* tx.run(
    sql`INSERT INTO mds_dataset_state (dataset, version, last_batch_id, last_batch_at) VALUES (${dataset}, 1, ${batchId}, ${at})
       ON CONFLICT (dataset) DO UPDATE SET version = mds_dataset_state.version + 1,
       last_batch_id = excluded.last_batch_id, last_batch_at = excluded.last_batch_at`,
  );
}

function* insertRecord(tx: Tx, record: BatchRecord): Step<void> {
  const values = batchToParams(record).map((v) => sql`${v}`);
  yield* tx.run(sql`INSERT INTO mds_batches (${raw(BATCH_COLUMNS.join(', '))}) VALUES (${join(values)})`);
}
