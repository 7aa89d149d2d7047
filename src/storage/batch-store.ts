import type { Catalog } from '../catalog/catalog.js';
import { holdsId } from '../model/batch-registry.js';
import type { Db, Tx } from './db.js';
import { batchTransaction, rejectedBatchTransaction } from './batch-transaction.js';
import { batchFromRow } from './row-mapping.js';
import { join, raw, sql, type Sql } from './sql.js';
import type { Step } from './step.js';
import type { BatchListFilter, BatchStore, WriteBatch, WriteOutcome } from './store.js';
import type { ApplyResult, BatchRecord } from '../model/batch.js';

/** The batch registry (mds_batches): the record of every processed batch, and the batch writes. */
export class SqlBatchStore implements BatchStore {
  constructor(
    private readonly db: Db,
    private readonly catalog: Catalog,
  ) {}

  async getBatch(batchId: string): Promise<BatchRecord | null> {
    const [r] = await this.db.rows(sql`SELECT * FROM mds_batches WHERE batch_id = ${batchId}`);
    return r ? batchFromRow(r) : null;
  }

  /**
   * One transaction (batch-transaction.ts): check the registry (a batch holding the id →
   * exists), upsert the rows, prune a full snapshot's partition, bump the dataset's version,
   * and save the record that `finish` builds from the outcome. All or nothing.
   */
  applyBatch(batch: WriteBatch, finish: (outcome: WriteOutcome) => BatchRecord): Promise<ApplyResult> {
    return this.registered(batch.batchId, (tx) => batchTransaction(tx, this.catalog, batch, finish));
  }

  /** Saves the record of a batch whose every record was rejected (nothing else written). */
  saveRejectedBatch(record: BatchRecord): Promise<ApplyResult> {
    return this.registered(record.batch_id, (tx) => rejectedBatchTransaction(tx, record));
  }

  /**
   * Should the batch id's row appear anyway (an engine without advisory locks), the primary key
   * refuses the second writer and its whole transaction rolls back: exactly once either way.
   */
  private async registered(batchId: string, body: (tx: Tx) => Step<ApplyResult>): Promise<ApplyResult> {
    try {
      return await this.db.transaction(body);
    } catch (err) {
      if (!this.db.isBatchIdTaken(err)) throw err;
      const prior = await this.getBatch(batchId);
      return holdsId(prior) ? { kind: 'exists', record: prior } : { kind: 'in_progress' };
    }
  }

  /** Deletes status records processed before `before` (ISO). Returns how many. */
  purgeBatches(before: string): Promise<number> {
    return this.db.run(sql`DELETE FROM mds_batches WHERE processed_at < ${before}`);
  }

  async listBatches(filter: BatchListFilter): Promise<BatchRecord[]> {
    const where: Sql[] = [];
    if (filter.dataset) where.push(sql`dataset = ${filter.dataset}`);
    if (filter.status) where.push(sql`status = ${filter.status}`);
    const rows = await this.db.rows(
      sql`SELECT * FROM mds_batches${where.length ? sql` WHERE ${join(where, ' AND ')}` : raw('')} ORDER BY processed_at DESC, batch_id ASC LIMIT ${filter.limit}`,
    );
    return rows.map(batchFromRow);
  }
}
