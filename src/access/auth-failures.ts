import { AppError } from '../errors.js';

/**
 * Failed authentications per client address in a one-minute window, so keys cannot be
 * guessed at speed. Per process: a guard against brute force, not an accounting.
 */
export class AuthFailureGuard {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly perMinute: number) {}

  /** Throws 429 / 4290 while the address is over its allowance. */
  check(ip: string, now = Date.now()): void {
    const w = this.windows.get(ip);
    if (w && now - w.start < 60_000 && w.count >= this.perMinute) {
      throw new AppError(4290, undefined, { retryAfter: Math.ceil((w.start + 60_000 - now) / 1000) });
    }
  }

  fail(ip: string, now = Date.now()): void {
    const w = this.windows.get(ip);
    if (!w || now - w.start >= 60_000) {
      if (this.windows.size > 100_000) this.windows.clear();
      this.windows.set(ip, { start: now, count: 1 });
    } else w.count++;
  }
}
