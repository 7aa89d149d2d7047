import { Type, type TObject } from '@sinclair/typebox';
import type { Dataset } from '../catalog/catalog.js';
import { rowSchema } from './rows.js';

/**
 * Point in time (docs/point-in-time.md): an item of the revision trail, the answer of a batch
 * revert and the dashboard's summary of what a batch changed. One literal each: the routes
 * answer with them, the OpenAPI document publishes them.
 */

const OP = Type.Union([Type.Literal('insert'), Type.Literal('update'), Type.Literal('delete')]);

/** An item of GET /api/v1/revisions/{dataset}. */
export function revisionItemSchema(d: Dataset, opts: { required?: boolean } = {}): TObject {
  return Type.Object(
    {
      op: OP,
      batch_id: Type.String({ description: 'the batch that made the change; revert:<id> for a revert' }),
      valid_from: Type.String({ format: 'date-time', description: "the batch's processed_at" }),
      valid_to: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: "valid_from of the key's next revision; null while current",
      }),
      row: rowSchema(d, opts),
    },
    { title: `${d.name}_revision` },
  );
}

/** POST /admin/api/batches/{batch_id}/revert: what was put back. */
export const RevertAnswerSchema = Type.Object(
  {
    batch_id: Type.String(),
    dataset: Type.String(),
    reverted_at: Type.String({ format: 'date-time', description: 'valid_from of the revert’s revisions' }),
    restored: Type.Integer({ description: 'rows the batch deleted (full-snapshot prune) that came back' }),
    updated: Type.Integer({ description: 'rows the batch updated that got their earlier values back' }),
    deleted: Type.Integer({ description: 'rows the batch inserted that were deleted' }),
  },
  { title: 'RevertAnswer' },
);

/** GET /admin/api/batches/{batch_id}/changes: counts per op and a sample, before and after. */
export const BatchChangesSchema = Type.Object(
  {
    counts: Type.Object({ insert: Type.Integer(), update: Type.Integer(), delete: Type.Integer() }),
    sample: Type.Array(
      Type.Object({
        op: OP,
        key: Type.Record(Type.String(), Type.Unknown(), { description: 'the row’s unique key' }),
        before: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
          description: 'the row before the change; null for an insert',
        }),
        after: Type.Record(Type.String(), Type.Unknown(), {
          description: 'the row after the change (for a delete: the values it had)',
        }),
      }),
    ),
  },
  { title: 'BatchChanges' },
);
