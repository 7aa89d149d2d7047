import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { Services } from '../app.js';
import type { Catalog } from '../catalog/catalog.js';
import { AppError, invalid } from '../errors.js';
import type { BatchRecord, BatchStatus, DatasetCoverage, Store } from '../storage/store.js';

const STATUSES: readonly BatchStatus[] = ['accepted', 'partial', 'rejected'];
export const DEFAULT_BATCH_LIST = 100;
export const MAX_BATCH_LIST = 1000;
/** A list item carries at most this many errors (a rejected batch can hold 100,000). */
export const LIST_ERRORS = 10;

export interface CoverageRow extends DatasetCoverage {
  endpoint: string;
}

/** A batch as listed: the status record with its errors cut short and their full count. */
export type BatchListItem = BatchRecord & { error_count: number };

/**
 * Coverage counts every row of every dataset, which is slow on big tables. The answer only
 * changes when a batch changes a dataset (its version), so it is cached against the vector
 * of dataset versions, read from the database: exact across instances, and cheap to check.
 */
export class CoverageCache {
  private cached: { versions: string; rows: CoverageRow[] } | null = null;
  private inflight: { versions: string; promise: Promise<CoverageRow[]> } | null = null;

  constructor(
    private readonly store: Store,
    private readonly catalog: Catalog,
  ) {}

  async get(): Promise<CoverageRow[]> {
    const versions = (
      await Promise.all(this.catalog.datasets.map((d) => this.store.datasetVersion(d.name)))
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
    const byName = new Map((await this.store.coverage()).map((c) => [c.dataset, c]));
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

function listLimit(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_BATCH_LIST;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) < 1) throw invalid('limit must be an integer ≥ 1');
  return Math.min(Number(raw), MAX_BATCH_LIST);
}

/** Admin API for the dashboard's Ingest and Coverage views: recent batches, datasets, coverage. */
export function registerAdminDataRoutes(
  app: FastifyInstance,
  services: Services,
  auth: onRequestAsyncHookHandler,
): void {
  const { store, catalog } = services;
  const coverage = new CoverageCache(store, catalog);

  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/admin/api/batches',
    { onRequest: auth },
    async (req) => {
      const q = req.query;
      const allowed = ['dataset', 'status', 'limit'];
      const unknown = Object.keys(q).filter((k) => !allowed.includes(k));
      if (unknown.length)
        throw invalid(`unknown parameter ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`);
      const dataset = q.dataset || undefined;
      if (dataset !== undefined && !catalog.byName.has(dataset)) throw invalid(`unknown dataset ${dataset}`);
      const status = q.status || undefined;
      if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) {
        throw invalid(`status must be one of ${STATUSES.join(', ')}`);
      }
      const batches = await store.listBatches({
        ...(dataset ? { dataset } : {}),
        ...(status ? { status } : {}),
        limit: listLimit(q.limit),
      });
      const data: BatchListItem[] = batches.map((b) => ({
        ...b,
        errors: b.errors.slice(0, LIST_ERRORS),
        error_count: b.errors.length,
      }));
      return { code: 0, message: 'ok', data };
    },
  );

  app.get<{ Params: { batch_id: string } }>(
    '/admin/api/batches/:batch_id',
    { onRequest: auth },
    async (req) => {
      const rec = await store.getBatch(req.params.batch_id);
      if (!rec) throw new AppError(4040);
      return { code: 0, message: 'ok', data: rec };
    },
  );

  // The catalog's datasets, for pickers: no database work.
  const datasets = catalog.datasets.map((d) => ({
    name: d.name,
    endpoint: d.endpoint,
    layer: d.layer,
    description: d.description,
  }));
  app.get('/admin/api/datasets', { onRequest: auth }, async () => ({
    code: 0,
    message: 'ok',
    data: datasets,
  }));

  app.get('/admin/api/coverage', { onRequest: auth }, async () => ({
    code: 0,
    message: 'ok',
    data: await coverage.get(),
  }));
}
