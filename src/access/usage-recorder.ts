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
  /** Pending counts by UTC hour, then key id: no composite key string built per request. */
  private pending = new Map<string, Map<string, PendingUsage>>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private readonly log: LimiterLog | undefined;

  constructor(
    private readonly store: Pick<Store, 'keys'>,
    opts: { intervalMs?: number; log?: LimiterLog } = {},
  ) {
    this.log = opts.log;
    this.timer = setInterval(() => void this.flush(), opts.intervalMs ?? 2000);
    this.timer.unref();
  }

  count(keyId: string, now = Date.now()): void {
    this.add({ keyId, hour: hourOf(now), count: 1, lastUsedMs: now });
  }

  /** Adds `u` to the pending entry of its hour and key (taking `u` itself when there is none). */
  private add(u: PendingUsage): void {
    let byKey = this.pending.get(u.hour);
    if (byKey === undefined) this.pending.set(u.hour, (byKey = new Map()));
    const e = byKey.get(u.keyId);
    if (e === undefined) byKey.set(u.keyId, u);
    else {
      e.count += u.count;
      e.lastUsedMs = Math.max(e.lastUsedMs, u.lastUsedMs);
    }
  }

  /** Writes what was counted so far; resolves when it is stored (flushes never overlap). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = [...this.pending.values()].flatMap((byKey) => [...byKey.values()]);
      this.pending = new Map();
      try {
        await this.store.keys.recordUsage(
          batch.map((e) => ({
            keyId: e.keyId,
            hour: e.hour,
            count: e.count,
            lastUsed: new Date(e.lastUsedMs).toISOString(),
          })),
        );
      } catch (err) {
        // Put the counts back: the next flush tries again.
        for (const e of batch) this.add(e);
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
  return {
    consume(p: Principal): LimitDecision | Promise<LimitDecision> {
      const d = inner.consume(p);
      return d instanceof Promise ? d.then((x) => counted(p, x)) : counted(p, d);
    },
    peek: (keyIds) => inner.peek(keyIds),
    close: () => inner.close(),
  };
}
