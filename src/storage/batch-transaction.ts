import type { Catalog } from '../catalog/catalog.js';
import { holdsId } from '../model/batch-registry.js';
import type { Tx } from './db.js';
import { batchFromRow, batchToParams } from './row-mapping.js';
import { BATCH_COLUMNS } from './internal-tables.js';
import { join, raw, sql } from './sql.js';
import {
  batchRevisionsSql,
  bumpState,
  changeInstant,
  closeDeletions,
  publish,
  pruneSteps,
} from './revisions.js';
import { refreshPeriods } from './period-store.js';
import { mergeBlocks } from './bar-blocks.js';
import { refreshQuality } from './quality-summary.js';
import type { Step } from './step.js';
import { appendChange, summarizeChange, type ChangeSummary } from './change-events.js';
import { lap } from '../model/batch-steps.js';
import type { WriteBatch, WriteOutcome } from './store.js';
import type { ApplyResult, BatchRecord } from '../model/batch.js';

/**
 * The batch transaction, written once for both backends over the small per-dialect `Tx`
 * (db.ts): claim the batch_id → take the dataset's lock and the changes' stamp → write the
 * rows, stamped as revisions, the versions they replace kept (revisions.ts) → prune a full
 * snapshot → bump the dataset's version → refresh the quality summaries of the codes changed
 * (quality-summary.ts) and the stored bars of the periods changed (period-store.ts) → sum up
 * the change for the feed → record the instant the changes become known (publish) and the
 * feed's event (change-events.ts) → finish the record → save it. All or nothing: `Db.transaction` commits only when the step returns.
 */
export function* batchTransaction(
  tx: Tx,
  catalog: Catalog,
  batch: WriteBatch,
  finish: (outcome: WriteOutcome) => BatchRecord,
): Step<ApplyResult> {
  const claimed = yield* claim(tx, batch.batchId);
  if (claimed) return claimed;
  // Every change is a revision stamped with the batch's stamp, taken under the dataset's lock
  // before anything is written; a batch that changed nothing writes none.
  const at = yield* changeInstant(tx, batch);
  lap(batch.steps, 'claim');
  const bars = batch.blocks ? yield* mergeBlocks(tx, batch, batch.blocks.merge) : undefined;
  const written = yield* tx.writeRows(batch, at);
  lap(batch.steps, 'rows');
  if (written > 0) yield* closeDeletions(tx, batch.dataset, at);
  lap(batch.steps, 'revisions');
  let pruned = 0;
  if (batch.prune) {
    const keys = yield* tx.batchKeys(batch);
    pruned = yield* pruneSteps(tx, batch, batch.prune, keys, at);
    lap(batch.steps, 'prune');
  }
  const clock = batch.clock?.() ?? batch.now;
  const changes = written + pruned > 0;
  let event: ChangeSummary | null = null;
  if (changes) {
    yield* bumpState(tx, batch.dataset.name, batch.batchId);
    const changed = batchRevisionsSql(batch.dataset, batch.batchId, at);
    lap(batch.steps, 'record');
    yield* refreshQuality(tx, catalog, batch.dataset, changed);
    lap(batch.steps, 'quality');
    yield* refreshPeriods(tx, batch.dataset, changed);
    lap(batch.steps, 'periods');
    event = yield* summarizeChange(tx, catalog, batch.dataset, changed, batch.batchId, {
      revert: false,
      pruned,
    });
  }
  batch.beforeKnown?.();
  // Known when it becomes visible: the instant is taken and recorded last, just before COMMIT.
  const processedAt = changes
    ? yield* publish(tx, batch.dataset.name, batch.batchId, at, () => batch.clock?.() ?? batch.now)
    : clock;
  if (event) yield* appendChange(tx, event, processedAt);
  const record = {
    ...finish({
      written,
      unchanged: batch.rows.length - written,
      pruned,
      processedAt,
      ...(bars ? { bars } : {}),
    }),
    processed_at: processedAt,
  };
  yield* insertRecord(tx, record);
  if (changes) batch.afterKnown?.();
  lap(batch.steps, 'record');
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
 * Under the batch's lock, the registry's rule (model/batch-registry.ts): a batch that holds
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

function* insertRecord(tx: Tx, record: BatchRecord): Step<void> {
  const values = batchToParams(record).map((v) => sql`${v}`);
  yield* tx.run(sql`INSERT INTO mds_batches (${raw(BATCH_COLUMNS.join(', '))}) VALUES (${join(values)})`);
}
