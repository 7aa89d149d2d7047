import { registerQualityRoute } from './quality-routes.js';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { AppError, invalid } from '../errors.js';
import type { BatchRecord, BatchStatus } from '../model/batch.js';
import { success } from './envelope.js';

const STATUSES: readonly BatchStatus[] = ['accepted', 'partial', 'rejected'];
export const DEFAULT_BATCH_LIST = 100;
export const MAX_BATCH_LIST = 1000;
/** A list item carries at most this many errors (a rejected batch can hold 100,000). */
export const LIST_ERRORS = 10;
/** Revisions shown with their earlier values in the dashboard's batch detail. */
export const CHANGE_SAMPLE = 20;

/** A batch as listed: the status record with its errors cut short and their full count. */
export type BatchListItem = BatchRecord & { error_count: number };

function listLimit(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_BATCH_LIST;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) < 1) throw invalid('limit must be an integer ≥ 1');
  return Math.min(Number(raw), MAX_BATCH_LIST);
}

/** Admin API for the dashboard's Ingest and Coverage views: recent batches, datasets, coverage. */
export function registerAdminDataRoutes(app: FastifyInstance, services: Services): void {
  const { store, catalog, coverage } = services;

  app.get<{ Querystring: Record<string, string | undefined> }>('/admin/api/batches', async (req) => {
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
    const batches = await store.batches.listBatches({
      ...(dataset ? { dataset } : {}),
      ...(status ? { status } : {}),
      limit: listLimit(q.limit),
    });
    const data: BatchListItem[] = batches.map((b) => ({
      ...b,
      errors: b.errors.slice(0, LIST_ERRORS),
      error_count: b.errors.length,
    }));
    return success({ data });
  });

  app.get<{ Params: { batch_id: string } }>('/admin/api/batches/:batch_id', async (req) => {
    const rec = await store.batches.getBatch(req.params.batch_id);
    if (!rec) throw new AppError(4040);
    return success({ data: rec });
  });

  app.post<{ Params: { batch_id: string } }>('/admin/api/batches/:batch_id/revert', async (req) => {
    const { record, counts } = await services.ingest.revert(req.params.batch_id);
    return success(
      {
        data: {
          batch_id: record.batch_id,
          dataset: record.dataset,
          reverted_at: record.reverted_at,
          ...counts,
        },
      },
      counts.restored + counts.updated + counts.deleted > 0 ? 'reverted' : 'nothing to revert',
    );
  });

  // The dashboard's batch detail: what the batch changed, per op, with a sample before/after.
  app.get<{ Params: { batch_id: string } }>('/admin/api/batches/:batch_id/changes', async (req) => {
    const rec = await store.batches.getBatch(req.params.batch_id);
    if (!rec) throw new AppError(4040);
    const changes = await store.revisions.batchChanges(rec, CHANGE_SAMPLE);
    const keyNames = catalog.byName.get(rec.dataset)?.key.map((k) => k.apiName) ?? [];
    return success({
      data: {
        counts: changes.counts,
        sample: changes.sample.map((s) => {
          const after = JSON.parse(s.after) as Record<string, unknown>;
          return {
            op: s.op,
            key: Object.fromEntries(keyNames.map((k) => [k, after[k] ?? null])),
            before: s.before === null ? null : (JSON.parse(s.before) as Record<string, unknown>),
            after,
          };
        }),
      },
    });
  });

  // The catalog's datasets, for pickers: no database work.
  const datasets = catalog.datasets.map((d) => ({
    name: d.name,
    endpoint: d.endpoint,
    layer: d.layer,
    description: d.description,
  }));
  app.get('/admin/api/datasets', async () => success({ data: datasets }));

  app.get('/admin/api/coverage', async () => success({ data: await coverage.get() }));

  // The dashboard's coverage drill-down: the same report as /api/v1/quality/{dataset}.
  registerQualityRoute(app, '/admin/api/quality/:dataset', services.quality);
}
