import type { Principal } from './keyring.js';

/** The outcome of counting one request against a key's rate and daily quota. */
export interface LimitDecision {
  allowed: boolean;
  /** 4030 over the rate, 4031 over the daily quota. */
  code: 4030 | 4031 | null;
  /** Seconds until the refused request could succeed. */
  retryAfter: number | null;
  /** `RateLimit` / `RateLimit-Policy` (IETF draft) for every response. */
  headers: Record<string, string>;
}

export interface Limiter {
  /** Counts one request of this principal and says whether it may proceed. */
  consume(p: Principal): Promise<LimitDecision>;
  close(): Promise<void>;
}

/** For principals without limits and for tests that do not exercise limits. */
export const UNLIMITED: Limiter = {
  consume: async () => ({ allowed: true, code: null, retryAfter: null, headers: {} }),
  close: async () => {},
};
