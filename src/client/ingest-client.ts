import type { BatchStatusAnswer, IngestBatch, RecordError } from '../contract/batch.js';
import type { ErrorBody } from '../contract/envelope.js';
import { baseUrl, isTransient, retryAfterMs, withRetries, type RetryPolicy } from './http-retry.js';

/**
 * Sends batches to POST /api/v1/upstream/ingest/batches with retries. Retrying is safe because
 * a batch is idempotent: a batch that was committed before the connection dropped comes back
 * as "duplicate" on the next attempt.
 */

export type RecordErrorOut = RecordError;

/** The batch status record of spec 2.4 (plus `pruned`), or an error body (contract/batch.ts). */
export type PushAnswer = ErrorBody & Partial<Omit<BatchStatusAnswer, 'code' | 'message'>>;

export interface PushResult {
  httpStatus: number;
  body: PushAnswer;
  attempts: number;
}

export interface IngestClientOptions extends Omit<RetryPolicy, 'onRetry'> {
  baseUrl: string;
  key: string;
  /** Called before each retry (progress display). */
  onRetry?: (info: { batchId: string; attempt: number; waitMs: number; reason: string }) => void;
  fetch?: typeof fetch;
}

export class IngestClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: IngestClientOptions) {
    this.base = baseUrl(opts.baseUrl);
    this.fetchImpl = opts.fetch ?? fetch;
  }

  async push(batch: IngestBatch): Promise<PushResult> {
    const body = JSON.stringify(batch);
    const onRetry = this.opts.onRetry;
    const policy: RetryPolicy = {
      ...this.opts,
      onRetry: onRetry && (({ what, ...info }) => onRetry({ batchId: what, ...info })),
    };
    const { value, attempts } = await withRetries(policy, batch.meta.batch_id, async () => {
      const res = await this.fetchImpl(`${this.base}/api/v1/upstream/ingest/batches`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'up-api-key': this.opts.key },
        body,
      });
      const text = await res.text();
      let answer: PushAnswer;
      try {
        answer = JSON.parse(text) as PushAnswer;
      } catch {
        answer = { code: res.status, message: text.slice(0, 500) };
      }
      const result = { httpStatus: res.status, body: answer };
      if (!isTransient(res.status, answer.code)) return { done: true, value: result };
      return {
        done: false,
        value: result,
        reason: `HTTP ${res.status}${answer.code ? ` code ${answer.code}` : ''}`,
        waitMs: retryAfterMs(res.headers.get('retry-after')),
      };
    });
    return { ...value, attempts };
  }

  /** GET /api/v1/upstream/ingest/batches/:id; null on 404. */
  async status(batchId: string): Promise<PushAnswer | null> {
    const res = await this.fetchImpl(
      `${this.base}/api/v1/upstream/ingest/batches/${encodeURIComponent(batchId)}`,
      { headers: { 'up-api-key': this.opts.key } },
    );
    if (res.status === 404) return null;
    return (await res.json()) as PushAnswer;
  }
}
