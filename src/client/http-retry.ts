/**
 * The client side's shared HTTP plumbing (`mds push`, `mds export`, the library clients): the
 * service URL and key from flags or the environment, and one retry loop that honours
 * Retry-After and backs off exponentially otherwise.
 */

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** The key given by flag, else the first of `envNames` that is set. */
export function keyFrom(flag: string | undefined, envNames: readonly string[]): string | undefined {
  return flag ?? envNames.map((n) => process.env[n]).find((v) => v !== undefined && v !== '');
}

export function baseUrl(url: string | undefined): string {
  return (url ?? DEFAULT_URL).replace(/\/+$/, '');
}

/** Seconds or an HTTP date, as Retry-After allows; null when absent or unreadable. */
export function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const t = Date.parse(header);
  return Number.isFinite(t) ? Math.max(0, t - Date.now()) : null;
}

/**
 * Answers worth asking again: 5xx, a batch in progress (409 / 4091), a rate limit (403 / 4030,
 * 429 / 4290). A spent daily quota (4031) and every other answer are final.
 */
export function isTransient(status: number, code: number | undefined): boolean {
  return (
    status >= 500 || (status === 409 && code === 4091) || (status === 403 && code === 4030) || status === 429
  );
}

export interface RetryPolicy {
  /** Attempts, the first included. */
  maxAttempts?: number;
  /** First back-off, ms; doubles per attempt (capped at 30 s) unless Retry-After says otherwise. */
  backoffMs?: number;
  /** Called before each retry (progress display). */
  onRetry?: (info: { what: string; attempt: number; waitMs: number; reason: string }) => void;
}

/** One attempt's outcome: a final value, or a transient answer to wait for and retry. */
export type Attempt<T> =
  { done: true; value: T } | { done: false; value: T; reason: string; waitMs: number | null };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `attempt` until it is done or the attempts are used up (then the last transient value is
 * returned). Network errors (a thrown attempt) are retried too, and rethrown at the end.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  what: string,
  attempt: (n: number) => Promise<Attempt<T>>,
): Promise<{ value: T; attempts: number }> {
  const maxAttempts = policy.maxAttempts ?? 6;
  let delay = policy.backoffMs ?? 500;
  for (let n = 1; ; n++) {
    let reason: string;
    let wait: number | null = null;
    try {
      const a = await attempt(n);
      if (a.done || n >= maxAttempts) return { value: a.value, attempts: n };
      reason = a.reason;
      wait = a.waitMs;
    } catch (err) {
      if (n >= maxAttempts) throw err;
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      reason = `network error${cause ? ` (${cause})` : ''}: ${err instanceof Error ? err.message : String(err)}`;
    }
    const waitMs = wait ?? delay;
    policy.onRetry?.({ what, attempt: n, waitMs, reason });
    await sleep(waitMs);
    delay = Math.min(delay * 2, 30_000);
  }
}
