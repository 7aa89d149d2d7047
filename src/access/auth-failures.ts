import { AppError } from '../errors.js';

/**
 * Failed authentications per client address in a one-minute window, so keys cannot be
 * guessed at speed. Per process: a guard against brute force, not an accounting.
 */
export class AuthFailureGuard {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly perMinute: number) {}

  /** Throws 429 / 4290 while the address is over its allowance. */
  check(ip: string, now?: number): void {
    // Runs on every authenticated request: no clock read unless the address has failed.
    const w = this.windows.size === 0 ? undefined : this.windows.get(ip);
    if (w === undefined || w.count < this.perMinute) return;
    const t = now ?? Date.now();
    if (t - w.start < 60_000) {
      throw new AppError(4290, undefined, { retryAfter: Math.ceil((w.start + 60_000 - t) / 1000) });
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
