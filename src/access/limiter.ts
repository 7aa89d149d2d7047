import { isStaticKey, type Principal } from './keyring.js';

/** The outcome of counting one request against a key's rate and daily quota. */
export interface LimitDecision {
  allowed: boolean;
  /** 4030 over the rate, 4031 over the daily quota. */
  code: 4030 | 4031 | null;
  /** Seconds until the refused request could succeed. */
  retryAfter: number | null;
  /** For a refusal: which limit, and when to come back. */
  message?: string;
  /** `RateLimit` / `RateLimit-Policy` (IETF draft) for every response. */
  headers: Record<string, string>;
}

export interface Limiter {
  /**
   * Counts one request of this principal and says whether it may proceed: the decision itself
   * when it needs no I/O (keys without limits, counters in memory), else a promise of it. The
   * per-request hook then costs no promise on the common path (measured: auth + limits 0.9 µs).
   */
  consume(p: Principal): LimitDecision | Promise<LimitDecision>;
  /** Requests counted in the current minute per key id (keys never seen are absent). */
  peek(keyIds: readonly string[]): Promise<Map<string, number>>;
  close(): Promise<void>;
}

/**
 * A key without limits still carries the headers (decisions.md: every query response does): a
 * policy whose quota is the largest safe integer, i.e. effectively unlimited, never counted down.
 */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;
const unboundedHeaders = (dayReset: number): Record<string, string> => ({
  'RateLimit-Policy': `"day";q=${UNBOUNDED};w=86400`,
  RateLimit: `"day";r=${UNBOUNDED};t=${dayReset}`,
});
export function noLimit(now = Date.now()): LimitDecision {
  return { allowed: true, code: null, retryAfter: null, headers: unboundedHeaders(windowsAt(now).dayReset) };
}

/** Static keys without configured limits: nothing to count, nothing to advertise (the hot path). */
export const needsCounting = (p: Principal): boolean =>
  p.ratePerMinute !== null || p.dailyQuota !== null || !isStaticKey(p);

/**
 * Fixed windows on the UTC clock: the minute (epoch minute) and the day (YYYY-MM-DD). Every
 * instance derives the same window names from the time, so counters in Redis are shared.
 */
export interface Windows {
  minute: number;
  day: string;
  /** Seconds until the minute / the UTC day ends (1..60, 1..86400). */
  minuteReset: number;
  dayReset: number;
}

/** The last UTC day's name, remembered: windowsAt runs on every query request. */
let lastDay = { start: -1, name: '' };

export function windowsAt(now: number): Windows {
  const minute = Math.floor(now / 60_000);
  const dayStart = Math.floor(now / 86_400_000) * 86_400_000;
  if (dayStart !== lastDay.start)
    lastDay = { start: dayStart, name: new Date(dayStart).toISOString().slice(0, 10) };
  return {
    minute,
    day: lastDay.name,
    minuteReset: Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000)),
    dayReset: Math.max(1, Math.ceil((dayStart + 86_400_000 - now) / 1000)),
  };
}

/** Which limit refuses the next request, given the counts before it: the quota first (it lasts longer). */
export function refusal(
  p: Pick<Principal, 'ratePerMinute' | 'dailyQuota'>,
  minuteCount: number,
  dayCount: number,
): 4030 | 4031 | null {
  if (p.dailyQuota !== null && dayCount >= p.dailyQuota) return 4031;
  if (p.ratePerMinute !== null && minuteCount >= p.ratePerMinute) return 4030;
  return null;
}

/**
 * The decision and its headers, in the syntax of draft-ietf-httpapi-ratelimit-headers-10:
 *   RateLimit-Policy: "minute";q=5;w=60, "day";q=1000;w=86400
 *   RateLimit: "minute";r=4;t=37, "day";r=999;t=43237
 * `minuteCount` / `dayCount` are the counts after this request (before it, when refused).
 */
export function decision(
  p: Principal,
  code: 4030 | 4031 | null,
  minuteCount: number,
  dayCount: number,
  w: Windows,
): LimitDecision {
  const rate = p.ratePerMinute;
  const quota = p.dailyQuota;
  let headers: Record<string, string>;
  if (rate === null && quota === null) headers = unboundedHeaders(w.dayReset);
  else {
    const minute = rate === null ? '' : `"minute";r=${Math.max(0, rate - minuteCount)};t=${w.minuteReset}`;
    const day = quota === null ? '' : `"day";r=${Math.max(0, quota - dayCount)};t=${w.dayReset}`;
    headers = {
      'RateLimit-Policy': policyOf(p),
      RateLimit: minute === '' ? day : day === '' ? minute : `${minute}, ${day}`,
    };
  }
  if (code === null) return { allowed: true, code: null, retryAfter: null, headers };
  const retryAfter = code === 4030 ? w.minuteReset : w.dayReset;
  const message =
    code === 4030
      ? `rate limit exceeded: this key may make ${p.ratePerMinute} requests per minute; retry in ${retryAfter} s`
      : `daily quota exhausted: this key may make ${p.dailyQuota} requests per UTC day; retry in ${retryAfter} s (00:00 UTC)`;
  return { allowed: false, code, retryAfter, headers, message };
}

/** A principal's `RateLimit-Policy`, built once per principal and limits, not per request. */
const policies = new WeakMap<Principal, { rate: number | null; quota: number | null; text: string }>();
function policyOf(p: Principal): string {
  const hit = policies.get(p);
  if (hit !== undefined && hit.rate === p.ratePerMinute && hit.quota === p.dailyQuota) return hit.text;
  const parts: string[] = [];
  if (p.ratePerMinute !== null) parts.push(`"minute";q=${p.ratePerMinute};w=60`);
  if (p.dailyQuota !== null) parts.push(`"day";q=${p.dailyQuota};w=86400`);
  const text = parts.join(', ');
  policies.set(p, { rate: p.ratePerMinute, quota: p.dailyQuota, text });
  return text;
}
