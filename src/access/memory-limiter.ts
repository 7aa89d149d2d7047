import type { Principal } from './keyring.js';
import {
  NO_LIMIT,
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
 * Per-process counters (the default, and the fallback while Redis is unreachable). One entry
 * per key seen today; JavaScript runs one callback at a time, so check-and-count is atomic.
 */
export class MemoryLimiter implements Limiter {
  private readonly counts = new Map<string, Counts>();
  private readonly now: () => number;

  constructor(opts: { now?: () => number } = {}) {
    this.now = opts.now ?? Date.now;
  }

  async consume(p: Principal): Promise<LimitDecision> {
    if (!needsCounting(p)) return NO_LIMIT;
    return this.consumeSync(p);
  }

  consumeSync(p: Principal): LimitDecision {
    const w = windowsAt(this.now());
    const c = this.current(p.id, w.minute, w.day);
    const code = refusal(p, c.minuteCount, c.dayCount);
    if (code === null) {
      c.minuteCount++;
      c.dayCount++;
    }
    return decision(p, code, c.minuteCount, c.dayCount, w);
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
