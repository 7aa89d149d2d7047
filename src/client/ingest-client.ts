import type { BatchStatusAnswer, IngestBatch, RecordError } from '../contract/batch.js';
import type { ErrorBody } from '../contract/envelope.js';

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

export interface IngestClientOptions {
  baseUrl: string;
  key: string;
  /** Attempts per batch, first included. */
  maxAttempts?: number;
  /** First backoff, ms; doubles per attempt (capped at 30 s) unless Retry-After says otherwise. */
  backoffMs?: number;
  /** Called before each retry (progress display). */
  onRetry?: (info: { batchId: string; attempt: number; waitMs: number; reason: string }) => void;
  fetch?: typeof fetch;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Seconds or an HTTP date, as Retry-After allows; null when absent or unreadable. */
function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const t = Date.parse(header);
  return Number.isFinite(t) ? Math.max(0, t - Date.now()) : null;
}

export class IngestClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: IngestClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = opts.fetch ?? fetch;
  }

  async push(batch: IngestBatch): Promise<PushResult> {
    const maxAttempts = this.opts.maxAttempts ?? 6;
    const body = JSON.stringify(batch);
    let delay = this.opts.backoffMs ?? 500;
    for (let attempt = 1; ; attempt++) {
      let reason: string;
      let wait: number | null = null;
      try {
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
        // 5xx and "in progress" (409 / 4091) are transient; every other answer is final.
        const transient = res.status >= 500 || (res.status === 409 && answer.code === 4091);
        if (!transient || attempt >= maxAttempts)
          return { httpStatus: res.status, body: answer, attempts: attempt };
        reason = `HTTP ${res.status}${answer.code ? ` code ${answer.code}` : ''}`;
        wait = retryAfterMs(res.headers.get('retry-after'));
      } catch (err) {
        if (attempt >= maxAttempts) throw err;
        const cause = (err as { cause?: { code?: string } }).cause?.code;
        reason = `network error${cause ? ` (${cause})` : ''}: ${err instanceof Error ? err.message : String(err)}`;
      }
      const waitMs = wait ?? delay;
      this.opts.onRetry?.({ batchId: batch.meta.batch_id, attempt, waitMs, reason });
      await sleep(waitMs);
      delay = Math.min(delay * 2, 30_000);
    }
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
