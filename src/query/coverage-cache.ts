import type { Catalog } from '../catalog/catalog.js';
import type { DatasetCoverage, Store } from '../storage/store.js';

export interface CoverageRow extends DatasetCoverage {
  endpoint: string;
}

/**
 * Coverage counts every row of every dataset, which is slow on big tables. The answer only
 * changes when a batch changes a dataset (its version), so it is cached against the vector
 * of dataset versions, read from the database: exact across instances, and cheap to check.
 */
export class CoverageCache {
  private cached: { versions: string; rows: CoverageRow[] } | null = null;
  private inflight: { versions: string; promise: Promise<CoverageRow[]> } | null = null;

  constructor(
    private readonly store: Pick<Store, 'datasets'>,
    private readonly catalog: Catalog,
    /** The recount, off the request thread when given (ingest-pool.ts); else the store's. */
    private readonly recount: () => Promise<DatasetCoverage[]> = () => store.datasets.coverage(),
  ) {}

  async get(): Promise<CoverageRow[]> {
    const versions = (
      await Promise.all(this.catalog.datasets.map((d) => this.store.datasets.datasetVersion(d.name)))
    ).join(',');
    if (this.cached?.versions === versions) return this.cached.rows;
    // Concurrent first loads share one computation.
    if (this.inflight?.versions === versions) return this.inflight.promise;
    const promise = this.compute();
    this.inflight = { versions, promise };
    try {
      const rows = await promise;
      this.cached = { versions, rows };
      return rows;
    } finally {
      if (this.inflight?.promise === promise) this.inflight = null;
    }
  }

  private async compute(): Promise<CoverageRow[]> {
    const byName = new Map((await this.recount()).map((c) => [c.dataset, c]));
    // Catalog order, every dataset present even if a store skipped one.
    return this.catalog.datasets.map((d) => ({
      dataset: d.name,
      endpoint: d.endpoint,
      rows: byName.get(d.name)?.rows ?? 0,
      first_date: byName.get(d.name)?.first_date ?? null,
      last_date: byName.get(d.name)?.last_date ?? null,
      last_batch_id: byName.get(d.name)?.last_batch_id ?? null,
      last_batch_at: byName.get(d.name)?.last_batch_at ?? null,
    }));
  }
}
