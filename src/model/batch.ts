/** A batch's record (spec 2.4) and what the store answers for one: shared by ingest, storage and HTTP. */

export interface RecordError {
  /** Position in `records`; null for a batch-level entry (a skipped prune). */
  index: number | null;
  idempotency_key: string | null;
  field: string | null;
  reason: string;
}

export type BatchStatus = 'accepted' | 'partial' | 'rejected';

/** Spec 2.4, minus `code`/`message` which the HTTP layer adds. */
export interface BatchRecord {
  batch_id: string;
  dataset: string;
  source: string;
  operation: string;
  snapshot_type: string;
  business_date: string;
  source_system: string;
  source_run_id: string;
  record_count: number;
  checksum: string;
  status: BatchStatus;
  accepted: number;
  rejected: number;
  duplicate: number;
  /** Rows deleted by a full snapshot's prune (0 for incremental batches). */
  pruned: number;
  errors: RecordError[];
  created_at: string;
  /** The instant its changes became known: the `valid_from` of every revision the batch wrote, as answered. */
  processed_at: string;
  /** When the batch was reverted (POST /admin/api/batches/{id}/revert); null until then. */
  reverted_at: string | null;
}

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
