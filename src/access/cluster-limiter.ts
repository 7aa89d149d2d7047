import type { PrimaryLink } from '../cluster/primary-link.js';
import type { LimitItem, LimitTally } from '../cluster/messages.js';
import type { Principal } from './keyring.js';
import {
  decision,
  needsCounting,
  noLimit,
  windowsAt,
  type LimitDecision,
  type Limiter,
  type Windows,
} from './limiter.js';
import { MemoryLimiter, type DaySeed } from './memory-limiter.js';

interface Waiting {
  p: Principal;
  w: Windows;
  resolve(d: LimitDecision): void;
}

/** Requests this worker decided alone, not yet added to the primary's counters. */
interface Unreported {
  day: string;
  dayCount: number;
  minute: number;
  minuteCount: number;
}

/**
 * A cluster worker's limiter: the counting is done by the primary (cluster/worker-hub.ts), one
 * set of counters for every worker of the instance, so limits are exact as in one process. The
 * requests of one event-loop turn travel in one message. Used alone without Redis, and by
 * RedisLimiter while Redis is unreachable (the supervisor then decides for the whole instance
 * until it has handed its count over to Redis: cluster/instance-limits.ts).
 *
 * The primary is asked with a bound (PRIMARY_TIMEOUT_MS, as for Redis): should it not answer
 * (stopped, busy, gone) the worker decides alone on `local`, which holds the instance's count
 * as of the primary's last answer (and the key's stored day count, sent along as a floor, so a
 * restart does not renew a quota). What it served alone is sent with its next question and
 * added there, so once the primary answers again its counts are the sum of what every worker
 * served.
 */
export class ClusterLimiter implements Limiter {
  private readonly local: MemoryLimiter;
  private readonly now: () => number;
  private queue: Waiting[] = [];
  private readonly unreported = new Map<string, Unreported>();
  private readonly floors: (id: string) => [day: number, minute: number];

  /**
   * `floors`: the counts sent for the primary to raise its own to, this worker's copy of the
   * instance's count unless given (under Redis: what Redis is known to have counted, which the
   * supervisor keeps apart from what it counted itself, see cluster/instance-limits.ts).
   */
  constructor(
    private readonly link: PrimaryLink,
    opts: {
      seed?: DaySeed;
      now?: () => number;
      local?: MemoryLimiter;
      floors?: (id: string) => [day: number, minute: number];
    } = {},
  ) {
    this.now = opts.now ?? Date.now;
    const local = opts.local ?? new MemoryLimiter(opts);
    this.local = local;
    this.floors = opts.floors ?? ((id) => local.known(id));
  }

  consume(p: Principal): LimitDecision | Promise<LimitDecision> {
    if (!needsCounting(p)) return noLimit(this.now());
    const w = windowsAt(this.now());
    const seeding = this.local.ready(p, w.day);
    return seeding ? seeding.then(() => this.count(p)) : this.count(p);
  }

  /** Counts one request on the instance's counters (its day count already read). */
  count(p: Principal): Promise<LimitDecision> {
    const w = windowsAt(this.now());
    return new Promise<LimitDecision>((resolve) => {
      this.queue.push({ p, w, resolve });
      if (this.queue.length === 1) setImmediate(this.flush);
    });
  }

  /**
   * Whether the supervisor decides for the whole instance (Redis unreachable, or its outage count
   * not yet handed over to Redis): then RedisLimiter asks it rather than Redis.
   */
  get instanceCounting(): boolean {
    return this.link.limitsMode === 'instance';
  }

  private readonly flush = (): void => {
    const batch = this.queue;
    this.queue = [];
    const w = windowsAt(this.now());
    const items = batch.map(({ p }) => this.item(p, w));
    this.link.ask<LimitTally[]>({ mds: 'limit', items }).then(
      (tallies) =>
        batch.forEach(({ p, w, resolve }, i) => {
          const [code, minuteCount, dayCount] = tallies[i] as LimitTally;
          this.local.observe(p.id, minuteCount, dayCount);
          resolve(decision(p, code, minuteCount, dayCount, w));
        }),
      // No answer in time (or no primary): decide here rather than refuse, fail or wait.
      () => {
        this.restore(items, w);
        batch.forEach(({ p, w, resolve }) => {
          const d = this.local.count(p, w);
          if (d.allowed) this.add(p.id, w, 1, 1);
          resolve(d);
        });
      },
    );
  };

  /** One key's item: its limits, this worker's counts as floors, and what it served alone (taken). */
  private item(p: Principal, w: Windows): LimitItem {
    const [day, minute] = this.floors(p.id);
    const u = this.unreported.get(p.id);
    this.unreported.delete(p.id);
    const dayUnreported = u?.day === w.day ? u.dayCount : 0;
    const minuteUnreported = u?.minute === w.minute ? u.minuteCount : 0;
    return [p.id, p.ratePerMinute, p.dailyQuota, day, minute, dayUnreported, minuteUnreported];
  }

  /** Items the primary did not take: what they carried unreported stays to be sent. */
  private restore(items: LimitItem[], w: Windows): void {
    for (const [id, , , , , day, minute] of items) this.add(id, w, day, minute);
  }

  private add(id: string, w: Windows, day: number, minute: number): void {
    if (day === 0 && minute === 0) return;
    let u = this.unreported.get(id);
    if (!u || u.day !== w.day) u = { day: w.day, dayCount: 0, minute: w.minute, minuteCount: 0 };
    if (u.minute !== w.minute) u = { ...u, minute: w.minute, minuteCount: 0 };
    u.dayCount += day;
    u.minuteCount += minute;
    this.unreported.set(id, u);
  }

  async peek(keyIds: readonly string[]): Promise<Map<string, number>> {
    try {
      return new Map(await this.link.ask<[string, number][]>({ mds: 'peek', ids: [...keyIds] }));
    } catch {
      return this.local.peek(keyIds);
    }
  }

  async close(): Promise<void> {
    await this.local.close();
  }
}
