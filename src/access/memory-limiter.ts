import { isStaticKey, type Principal } from './keyring.js';
import type { LimitTally } from '../cluster/messages.js';
import {
  noLimit,
  decision,
  needsCounting,
  refusal,
  windowsAt,
  type LimitDecision,
  type Limiter,
} from './limiter.js';

interface Counts {
  minute: number;
  minuteCount: number;
  day: string;
  dayCount: number;
}

/**
 * Requests a key has already made today, from the stored usage statistics: so a restart does
 * not hand out a fresh daily quota.
 */
export type DaySeed = (keyId: string, day: string) => Promise<number>;

/**
 * Per-process counters (the default; under Redis, each instance's own knowledge of a key's day
 * and the fallback while Redis is unreachable). One entry per key seen today; JavaScript runs
 * one callback at a time, so check-and-count is atomic.
 */
export class MemoryLimiter implements Limiter {
  private readonly counts = new Map<string, Counts>();
  private readonly now: () => number;
  private readonly seed: DaySeed | undefined;
  /** Keys whose day count was read from the store, per day; and reads in flight. */
  private seeded = { day: '', ids: new Set<string>() };
  private readonly seeding = new Map<string, Promise<number>>();

  constructor(opts: { now?: () => number; seed?: DaySeed } = {}) {
    this.now = opts.now ?? Date.now;
    this.seed = opts.seed;
  }

  /** A decision at once, except for a key's first request of the day (its stored count is read). */
  consume(p: Principal): LimitDecision | Promise<LimitDecision> {
    if (!needsCounting(p)) return noLimit(this.now());
    const w = windowsAt(this.now());
    const pending = this.ready(p, w.day);
    return pending === undefined ? this.count(p, w) : pending.then(() => this.count(p));
  }

  /**
   * Undefined when this key's day count is known; else the read of its stored count (once per
   * key and UTC day: a restart does not renew a quota).
   */
  ready(p: Principal, day = windowsAt(this.now()).day): Promise<void> | undefined {
    if (!this.seed || p.dailyQuota === null || isStaticKey(p)) return undefined;
    if (this.seeded.day === day && this.seeded.ids.has(p.id)) return undefined;
    return this.seedDay(p.id);
  }

  private async seedDay(id: string): Promise<void> {
    const { day, minute } = windowsAt(this.now());
    if (this.seeded.day !== day) this.seeded = { day, ids: new Set() };
    if (this.seeded.ids.has(id)) return;
    const key = `${day}\n${id}`;
    let pending = this.seeding.get(key);
    if (!pending) {
      // Concurrent first requests share one read.
      pending = (this.seed as DaySeed)(id, day).catch(() => 0);
      this.seeding.set(key, pending);
    }
    try {
      const stored = await pending;
      if (!this.seeded.ids.has(id) && this.seeded.day === day) {
        this.seeded.ids.add(id);
        const c = this.current(id, minute, day);
        c.dayCount = Math.max(c.dayCount, stored);
      }
    } finally {
      this.seeding.delete(key);
    }
  }

  /** Checks and counts one request on this instance's counters. */
  count(p: Principal, w = windowsAt(this.now())): LimitDecision {
    const [code, minuteCount, dayCount] = this.tally(p.id, p, w);
    return decision(p, code, minuteCount, dayCount, w);
  }

  /** The check and count of `count`, without the headers: `[refusal, minute count, day count]`. */
  tally(
    id: string,
    limits: Pick<Principal, 'ratePerMinute' | 'dailyQuota'>,
    w = windowsAt(this.now()),
  ): LimitTally {
    const c = this.current(id, w.minute, w.day);
    const code = refusal(limits, c.minuteCount, c.dayCount);
    if (code === null) {
      c.minuteCount++;
      c.dayCount++;
    }
    return [code, c.minuteCount, c.dayCount];
  }

  /** A key's requests today and this minute, as far as this instance knows. */
  known(id: string): [day: number, minute: number] {
    const w = windowsAt(this.now());
    const c = this.current(id, w.minute, w.day);
    return [c.dayCount, c.minuteCount];
  }

  /** Raises this instance's counts to shared ones (never lowers them). */
  observe(id: string, minuteCount: number, dayCount: number): void {
    const w = windowsAt(this.now());
    const c = this.current(id, w.minute, w.day);
    c.minuteCount = Math.max(c.minuteCount, minuteCount);
    c.dayCount = Math.max(c.dayCount, dayCount);
  }

  /** Adds requests counted elsewhere (a cluster worker that decided alone). */
  add(id: string, minuteCount: number, dayCount: number): void {
    const w = windowsAt(this.now());
    const c = this.current(id, w.minute, w.day);
    c.minuteCount += minuteCount;
    c.dayCount += dayCount;
  }

  async peek(keyIds: readonly string[]): Promise<Map<string, number>> {
    const w = windowsAt(this.now());
    const out = new Map<string, number>();
    for (const id of keyIds) {
      const c = this.counts.get(id);
      if (c && c.minute === w.minute) out.set(id, c.minuteCount);
    }
    return out;
  }

  async close(): Promise<void> {
    this.counts.clear();
  }

  private current(id: string, minute: number, day: string): Counts {
    let c = this.counts.get(id);
    if (!c) {
      // A new day: forget keys not seen since yesterday, so the map stays as small as the active keys.
      if (this.counts.size > 0 && [...this.counts.values()][0]?.day !== day) {
        for (const [k, v] of this.counts) if (v.day !== day) this.counts.delete(k);
      }
      c = { minute, minuteCount: 0, day, dayCount: 0 };
      this.counts.set(id, c);
    }
    if (c.day !== day) {
      c.day = day;
      c.dayCount = 0;
    }
    if (c.minute !== minute) {
      c.minute = minute;
      c.minuteCount = 0;
    }
    return c;
  }
}
