import { Type } from '@sinclair/typebox';
import { registerMinuteQualityRoutes, registerQualityRoute } from './quality-routes.js';
import type { FastifyInstance } from 'fastify';
import type { Catalog } from '../catalog/catalog.js';
import type { Services } from '../services.js';
import type { BatchRecord } from '../model/batch.js';
import { BatchListItemSchema, BatchRecordSchema } from '../contract/batch.js';
import { CoverageRowSchema, DatasetInfoSchema } from '../contract/admin.js';
import { BatchChangesSchema, RevertAnswerSchema } from '../contract/revisions.js';
import { success } from './envelope.js';
import { BATCH_ID } from './api-operations.js';
import { adminRoute, type Route } from './route-declaration.js';

export const DEFAULT_BATCH_LIST = 100;
export const MAX_BATCH_LIST = 1000;
/** A list item carries at most this many errors (a rejected batch can hold 100,000). */
export const LIST_ERRORS = 10;
/** Revisions shown with their earlier values in the dashboard's batch detail. */
export const CHANGE_SAMPLE = 20;

/** A batch as listed: the status record with its errors cut short and their full count. */
export type BatchListItem = BatchRecord & { error_count: number };

/** Admin API for the dashboard's Ingest and Coverage views: recent batches, datasets, coverage. */
export function adminDataRoutes(catalog: Catalog): Route<Services>[] {
  // The catalog's datasets, for pickers: no database work.
  const datasets = catalog.datasets.map((d) => ({
    name: d.name,
    endpoint: d.endpoint,
    layer: d.layer,
    description: d.description,
  }));
  return [
    adminRoute({
      method: 'get',
      url: '/admin/api/batches',
      operationId: 'admin_batches',
      summary: 'Recent batches',
      description: `Newest first; each carries at most its first ${LIST_ERRORS} errors and error_count.`,
      querystring: Type.Object(
        {
          dataset: Type.Optional(
            Type.String({ enum: catalog.datasets.map((d) => d.name), description: 'only this dataset' }),
          ),
          status: Type.Optional(
            Type.String({ enum: ['accepted', 'partial', 'rejected'], description: 'only this status' }),
          ),
          limit: Type.Integer({
            minimum: 1,
            default: DEFAULT_BATCH_LIST,
            description: `at most this many (larger values are clamped to ${MAX_BATCH_LIST})`,
          }),
        },
        { additionalProperties: false },
      ),
      answer: { description: 'batches', data: Type.Array(BatchListItemSchema) },
      errors: [4001],
      handle: (services) => async (req) => {
        const { dataset, status, limit } = req.query;
        const batches = await services.store.batches.listBatches({
          ...(dataset ? { dataset } : {}),
          ...(status ? { status: status as BatchRecord['status'] } : {}),
          limit: Math.min(limit, MAX_BATCH_LIST),
        });
        const data: BatchListItem[] = batches.map((b) => ({
          ...b,
          errors: b.errors.slice(0, LIST_ERRORS),
          error_count: b.errors.length,
        }));
        return success({ data });
      },
    }),
    adminRoute({
      method: 'get',
      url: '/admin/api/batches/:batch_id',
      operationId: 'admin_batch',
      summary: 'One batch with every error',
      description: 'The stored status record of a batch, every error included.',
      params: { batch_id: BATCH_ID },
      answer: { description: 'the batch', data: BatchRecordSchema },
      errors: [4040],
      handle: (services) => async (req) =>
        // The ingest interface's status lookup: one definition of an unknown batch for both APIs
        // (an id PostgreSQL cannot compare, a NUL say, is 404 without asking the database).
        success({ data: await services.ingest.status(req.params.batch_id) }),
    }),
    adminRoute({
      method: 'post',
      url: '/admin/api/batches/:batch_id/revert',
      operationId: 'admin_revert_batch',
      summary: 'Revert a batch',
      description:
        'Puts back, for every row the batch changed, the version before it, in one transaction, as new ' +
        'revisions of batch revert:<batch_id> (docs/point-in-time.md). 409 / 4092 when a later batch ' +
        'changed any of those rows (conflicts: up to 100 keys), 409 / 4093 when what it replaced is not ' +
        'kept; nothing changes then. A batch reverted before: zero counts.',
      params: { batch_id: BATCH_ID },
      answer: { description: 'what was put back', data: RevertAnswerSchema },
      errors: [4040, 4092, 4093],
      handle: (services) => async (req, reply) => {
        const { record, counts } = await services.ingest.revert(req.params.batch_id);
        // As a batch's answer: a read presenting it (through a replica) sees the revert.
        const token = await services.store.readToken().catch(() => null);
        if (token !== null) reply.header('MDS-Read-After', token);
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
      },
    }),
    // The dashboard's batch detail: what the batch changed, per op, with a sample before/after.
    adminRoute({
      method: 'get',
      url: '/admin/api/batches/:batch_id/changes',
      operationId: 'admin_batch_changes',
      summary: 'What a batch changed',
      description:
        'The revisions the batch wrote: counts per op and a sample with the values before and after.',
      params: { batch_id: BATCH_ID },
      answer: { description: 'the changes', data: BatchChangesSchema },
      errors: [4040],
      handle: (services) => async (req) => {
        const rec = await services.ingest.status(req.params.batch_id);
        const changes = await services.store.revisions.batchChanges(rec, CHANGE_SAMPLE);
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
      },
    }),
    adminRoute({
      method: 'get',
      url: '/admin/api/coverage',
      operationId: 'admin_coverage',
      summary: 'Rows per dataset',
      description: 'Per dataset in catalog order: rows, first and last date, last batch.',
      answer: { description: 'coverage', data: Type.Array(CoverageRowSchema) },
      handle: (services) => async () => success({ data: await services.coverage.get() }),
    }),
    adminRoute({
      method: 'get',
      url: '/admin/api/datasets',
      operationId: 'admin_datasets',
      summary: 'The catalog',
      description: 'Dataset names, endpoints, layers and descriptions.',
      answer: { description: 'datasets', data: Type.Array(DatasetInfoSchema) },
      handle: () => async () => success({ data: datasets }),
    }),
  ];
}

/** The dashboard's coverage drill-down: the same reports as /api/v1/quality/{dataset} (daily and minute). */
export function registerAdminQualityRoute(app: FastifyInstance, services: Services): void {
  registerQualityRoute(app, '/admin/api/quality/:dataset', services.quality);
  registerMinuteQualityRoutes(app, '/admin/api/quality', services.minuteQuality);
}
