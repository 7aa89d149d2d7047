import { AppError } from '../errors.js';

/** The interfaces whose failures are counted apart: a wrong admin token never blocks a query. */
export type AuthInterface = 'query' | 'ingest' | 'admin';

/**
 * Failed authentications per interface and client address in a one-minute window. Over the
 * allowance, that address's invalid credentials are answered 429 / 4290 instead of 401 until
 * the window ends; valid credentials are never refused (so nobody sharing a NAT or a proxy can
 * lock out a key holder), and a missing credential is not a failure. It slows nobody down: it
 * tells a misconfigured or guessing client to stop. Guessing itself is defeated by the keys'
 * entropy (SECURITY.md). Per process, in memory.
 */
export class AuthFailureGuard {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly perMinute: number) {}

  /** Counts a refused credential; returns what to answer: `err` itself, or 4290 when over. */
  refuse(where: AuthInterface, ip: string, err: AppError, now = Date.now()): AppError {
    const id = `${where} ${ip}`;
    let w = this.windows.get(id);
    if (!w || now - w.start >= 60_000) {
      if (this.windows.size > 100_000) this.windows.clear();
      w = { start: now, count: 0 };
      this.windows.set(id, w);
    }
    w.count++;
    if (w.count <= this.perMinute) return err;
    return new AppError(4290, undefined, { retryAfter: Math.ceil((w.start + 60_000 - now) / 1000) });
  }
}
