import type { Store } from '../storage/store.js';
import { isStaticKey, type Principal } from './keyring.js';
import type { LimitDecision, Limiter } from './limiter.js';
import type { LimiterLog } from './redis-limiter.js';

/** The usage bucket of a time: its UTC hour, `YYYY-MM-DDTHH`. */
/** UTC hour bucket `YYYY-MM-DDTHH`; the last one is remembered (this runs on every request). */
let lastHour = { start: -1, text: '' };
export function hourOf(t: number): string {
  const start = Math.floor(t / 3_600_000);
  if (start !== lastHour.start)
    lastHour = { start, text: new Date(start * 3_600_000).toISOString().slice(0, 13) };
  return lastHour.text;
}

interface PendingUsage {
  keyId: string;
  hour: string;
  count: number;
  lastUsedMs: number;
}

/**
 * Counts served requests of managed keys per UTC hour and writes them to the store in one
 * transaction every few seconds (and on close), instead of one write per request. Also keeps
 * `last_used_at`. A crash loses at most one interval of usage statistics, never a limit.
 */
export class UsageRecorder {
  private pending = new Map<string, PendingUsage>();
  private current = { hour: '', entries: new Map<string, PendingUsage>() };
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private readonly log: LimiterLog | undefined;

  constructor(
    private readonly store: Store,
    opts: { intervalMs?: number; log?: LimiterLog } = {},
  ) {
    this.log = opts.log;
    this.timer = setInterval(() => void this.flush(), opts.intervalMs ?? 2000);
    this.timer.unref();
  }

  count(keyId: string, now = Date.now()): void {
    const hour = hourOf(now);
    // The current hour's pending entries by key id: no `${keyId}\n${hour}` string per request.
    let e = this.current.hour === hour ? this.current.entries.get(keyId) : undefined;
    if (e === undefined) {
      const id = `${keyId}\n${hour}`;
      e = this.pending.get(id);
      if (e === undefined) {
        e = { keyId, hour, count: 0, lastUsedMs: now };
        this.pending.set(id, e);
      }
      if (this.current.hour !== hour) this.current = { hour, entries: new Map() };
      this.current.entries.set(keyId, e);
    }
    e.count++;
    e.lastUsedMs = now;
  }

  /** Writes what was counted so far; resolves when it is stored (flushes never overlap). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = [...this.pending.values()];
      this.pending = new Map();
      this.current = { hour: '', entries: new Map() };
      try {
        await this.store.recordUsage(
          batch.map((e) => ({
            keyId: e.keyId,
            hour: e.hour,
            count: e.count,
            lastUsed: new Date(e.lastUsedMs).toISOString(),
          })),
        );
      } catch (err) {
        // Put the counts back: the next flush tries again.
        for (const e of batch) {
          const id = `${e.keyId}\n${e.hour}`;
          const cur = this.pending.get(id);
          if (cur) {
            cur.count += e.count;
            cur.lastUsedMs = Math.max(cur.lastUsedMs, e.lastUsedMs);
          } else this.pending.set(id, e);
        }
        this.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'usage flush failed');
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/** A limiter that also records every request it lets through for a managed (stored) key. */
export function metered(inner: Limiter, recorder: UsageRecorder): Limiter {
  const counted = (p: Principal, d: LimitDecision): LimitDecision => {
    if (d.allowed && !isStaticKey(p)) recorder.count(p.id);
    return d;
  };
  const out: Limiter = {
    async consume(p: Principal): Promise<LimitDecision> {
      return counted(p, await inner.consume(p));
    },
    close: () => inner.close(),
  };
  if (inner.consumeNow) {
    const now = inner.consumeNow.bind(inner);
    out.consumeNow = (p) => {
      const d = now(p);
      return d === undefined ? undefined : counted(p, d);
    };
  }
  if (inner.peek) out.peek = inner.peek.bind(inner);
  return out;
}
