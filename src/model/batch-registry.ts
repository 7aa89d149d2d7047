import type { BatchStepSeconds } from './batch-steps.js';
import { AppError, PARTIAL_CODE } from '../errors.js';
import type { ApplyResult, BatchRecord } from './batch.js';

/**
 * The batch_id registry's rules (decisions.md), in one place. The ingest service asks them
 * before validating records (a cheap early answer) and the storage's batch transaction asks
 * them again under the batch's lock (storage/batch-transaction.ts), on both backends:
 * - a batch_id is held by its batch once processed, unless that batch was rejected: only a
 *   rejected batch's id may be used again;
 * - a held id sent again with the same content is a duplicate (200, the stored status), with
 *   other content a conflict (409 / 4090). The same content: the checksum on record is the
 *   one sent, or an accepted checksum of the records now sent in another form (checksum.ts);
 * - an id another request is processing right now is locked (409 / 4091, retry after 1 s).
 */

export type IngestOutcome =
  | {
      kind: 'processed';
      record: BatchRecord;
      /** Where the batch's time went (batch-steps.ts; the metrics' mds_batch_step_seconds). */
      steps?: BatchStepSeconds;
    }
  | { kind: 'duplicate'; record: BatchRecord };

/** The answer to each processed status (spec 4.4); a held id sent again answers as a duplicate. */
const ANSWER: Record<BatchRecord['status'], { http: number; code: number; message: string }> = {
  accepted: { http: 200, code: 0, message: 'accepted' },
  partial: { http: 207, code: PARTIAL_CODE, message: 'partial success, some records rejected' },
  rejected: { http: 422, code: 4221, message: 'every record was rejected' },
};

/** The HTTP status and body of an ingest's outcome. */
export function answerOf(outcome: IngestOutcome): { http: number; body: Record<string, unknown> } {
  if (outcome.kind === 'duplicate') {
    return {
      http: 200,
      body: { code: 0, message: 'batch already processed', ...outcome.record, status: 'duplicate' },
    };
  }
  const a = ANSWER[outcome.record.status];
  return { http: a.http, body: { code: a.code, message: a.message, ...outcome.record } };
}

/** Whether `prior` keeps its batch_id from being used again. */
export function holdsId(prior: BatchRecord | null): prior is BatchRecord {
  return prior !== null && prior.status !== 'rejected';
}

/** Whether a checksum on record names the content now sent. */
export type SameContent = (storedChecksum: string) => boolean;

/** A held batch_id sent again: the same content is a duplicate, other content a conflict. */
export function repeatOf(prior: BatchRecord, sameContent: SameContent): IngestOutcome {
  if (!sameContent(prior.checksum)) throw new AppError(4090);
  return { kind: 'duplicate', record: prior };
}

/** The answer to a batch the store's transaction settled. */
export function outcomeOf(result: ApplyResult, sameContent: SameContent): IngestOutcome {
  if (result.kind === 'in_progress') throw new AppError(4091, undefined, { retryAfter: 1 });
  if (result.kind === 'exists') return repeatOf(result.record, sameContent);
  return { kind: 'processed', record: result.record };
}
