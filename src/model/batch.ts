/** A batch's record (spec 2.4) and what the store answers for one: shared by ingest, storage and HTTP. */
import { Type, type Static, type TObject } from '@sinclair/typebox';

export const RecordErrorSchema = Type.Object(
  {
    index: Type.Union([Type.Integer(), Type.Null()], {
      description: 'position in records; null for the batch',
    }),
    idempotency_key: Type.Union([Type.String(), Type.Null()]),
    field: Type.Union([Type.String(), Type.Null()]),
    reason: Type.String(),
  },
  { title: 'RecordError' },
);

export type RecordError = Static<typeof RecordErrorSchema>;

/** Spec 2.4's record, minus `code`/`message` which the HTTP layer adds (contract/batch.ts). */
export const batchRecordProperties = {
  batch_id: Type.String(),
  dataset: Type.String(),
  source: Type.String(),
  operation: Type.String(),
  snapshot_type: Type.String(),
  business_date: Type.String({ format: 'date' }),
  source_system: Type.String(),
  source_run_id: Type.String(),
  record_count: Type.Integer(),
  checksum: Type.String({ description: 'the sha256 value of the request' }),
  status: Type.Union([Type.Literal('accepted'), Type.Literal('partial'), Type.Literal('rejected')]),
  accepted: Type.Integer({ description: 'records written (inserted or changed)' }),
  rejected: Type.Integer({ description: 'records refused (see errors)' }),
  duplicate: Type.Integer({ description: 'records identical to what is stored, or repeated in the batch' }),
  pruned: Type.Integer({ description: 'rows deleted by a full snapshot' }),
  errors: Type.Array(RecordErrorSchema),
  created_at: Type.String({ format: 'date-time' }),
  processed_at: Type.String({
    format: 'date-time',
    description: 'also the valid_from of every revision the batch wrote (docs/point-in-time.md)',
  }),
  reverted_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'when the batch was reverted; null until then',
  }),
};

/** The batch record as stored, declared once: the answers' schemas (contract/batch.ts) spread its properties. */
export type BatchRecord = Static<TObject<typeof batchRecordProperties>>;
export type BatchStatus = BatchRecord['status'];

export interface RevertCounts {
  /** Rows the batch deleted (full-snapshot prune) that came back. */
  restored: number;
  /** Rows the batch updated that got their earlier values back. */
  updated: number;
  /** Rows the batch inserted that were deleted. */
  deleted: number;
}

export type ApplyResult =
  | { kind: 'applied'; record: BatchRecord }
  /** A batch with this id was processed before (status accepted or partial). */
  | { kind: 'exists'; record: BatchRecord }
  /** Another request (or instance) is processing this batch_id right now. */
  | { kind: 'in_progress' };
