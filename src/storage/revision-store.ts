import type { Catalog } from '../catalog/catalog.js';
import type { Db } from './db.js';
import { batchChangesSteps, purgeRevisionsSql, revertSteps, touchStateSql } from './revisions.js';
import type { BatchChanges, ChangeStore, KnownHooks, RevertResult, RevisionStore } from './store.js';
import type { BatchRecord } from '../model/batch.js';

/** Revisions deleted per statement by retention: other writers wait at most one step. */
const PURGE_STEP = 5000;

/** Revert, change summaries and retention of the revision history (revisions.ts). */
export class SqlRevisionStore implements RevisionStore {
  constructor(
    private readonly db: Db,
    private readonly catalog: Catalog,
    private readonly changes: Pick<ChangeStore, 'purge'>,
  ) {}

  revertBatch(batchId: string, clock: () => string, hooks?: KnownHooks): Promise<RevertResult> {
    return this.db.transaction((tx) => revertSteps(tx, this.catalog, batchId, clock, hooks));
  }

  batchChanges(record: BatchRecord, sample: number): Promise<BatchChanges> {
    return this.db.transaction((tx) => batchChangesSteps(tx, this.catalog, record, sample));
  }

  async purgeRevisions(before: string): Promise<number> {
    let removed = 0;
    for (const d of this.catalog.datasets) {
      let fromThis = 0;
      for (;;) {
        // One bounded statement (its own transaction) at a time, the event loop in between.
        const n = await this.db.run(purgeRevisionsSql(d, this.db.dialect, before, PURGE_STEP));
        fromThis += n;
        if (n < PURGE_STEP) break;
        await new Promise((r) => setImmediate(r));
      }
      if (fromThis > 0) await this.db.run(touchStateSql(d.name));
      removed += fromThis;
    }
    // The feed's events go with the revisions of their time (docs/changes.md, "Retention").
    await this.changes.purge(before);
    return removed;
  }
}
