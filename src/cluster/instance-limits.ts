import { Redis } from 'ioredis';
import { refusal, windowsAt, type Windows } from '../access/limiter.js';
import { defineLimitCommands, limitKey, LIMIT_PREFIX, type LimitCommands } from '../access/redis-limiter.js';
import type { LimitItem, LimitsMode, LimitTally } from './messages.js';

/**
 * How long the supervisor waits for Redis when it decides for a worker that could not reach it,
 * ms: short enough that its answer still reaches the worker within PRIMARY_TIMEOUT_MS.
 */
const PROXY_TIMEOUT_MS = 250;
/** While the supervisor decides for the instance, how often it tries to hand its count over. */
const HANDOVER_EVERY_MS = 250;

/**
 * One key's counts in the current day and minute. `shared` is the highest count Redis is known
 * to have had (a worker's floors, Redis's own answers): raised to, never added. `pending` is
 * what this supervisor allowed and Redis has not been told yet, `pushing` what it is telling
 * Redis now: added, never raised to. Kept apart, a count learned twice (two workers' floors)
 * is counted once and a request decided here is counted once (a maximum of the two would lose
 * the requests made on the other side, which was the defect).
 */
interface Entry {
  day: string;
  dayShared: number;
  dayPending: number;
  dayPushing: number;
  minute: number;
  minuteShared: number;
  minutePending: number;
  minutePushing: number;
}

/**
 * The cluster supervisor's part in rate limits under Redis: it is the one place that decides
 * for the whole instance while Redis is unreachable, and the one that hands that count over to
 * Redis when it is back, so one instance serves a quota exactly through an outage.
 *
 * - `shared` mode (Redis reachable): workers ask Redis themselves; one that cannot (its own
 *   connection down or timed out) asks here, and the supervisor asks Redis for it (one check on
 *   its own connection). Should that fail too, `instance` mode.
 * - `instance` mode: every worker is told (a message to each), and asks here for every
 *   request; the supervisor decides on its counts in memory. Every HANDOVER_EVERY_MS it tries to
 *   add what it decided (`pending`) to Redis's counters, raised first to what Redis is known to
 *   have had (a Redis restarted empty); once nothing is pending after a successful hand-over,
 *   it goes back to `shared` in the same turn of the event loop and tells every worker. Until
 *   then, a worker whose own connection is back still asks here, so no request is ever decided
 *   on Redis's count while requests decided here are missing from it.
 */
export class InstanceLimits {
  private mode: LimitsMode = 'shared';
  private readonly keys = new Map<string, Entry>();
  private readonly redis: Redis;
  private readonly commands: LimitCommands;
  private readonly prefix: string;
  private readonly now: () => number;
  private readonly onMode: (mode: LimitsMode) => void;
  private timer: NodeJS.Timeout | null = null;
  private handing = false;

  constructor(opts: {
    url: string;
    prefix?: string;
    now?: () => number;
    onMode: (mode: LimitsMode) => void;
  }) {
    this.prefix = opts.prefix ?? LIMIT_PREFIX;
    this.now = opts.now ?? Date.now;
    this.onMode = opts.onMode;
    this.redis = new Redis(opts.url, {
      connectTimeout: 1000,
      commandTimeout: PROXY_TIMEOUT_MS,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => Math.min(times * 200, 1000),
    });
    this.commands = defineLimitCommands(this.redis);
    // The workers log the outage; here it shows as the mode.
    this.redis.on('error', () => {});
  }

  get current(): LimitsMode {
    return this.mode;
  }

  /** Decides one worker's question (its items, in order): on Redis for it, or here. */
  async limit(items: readonly LimitItem[]): Promise<LimitTally[]> {
    const w = windowsAt(this.now());
    for (const item of items) this.merge(item, w);
    if (this.mode === 'instance') return items.map((item) => this.tally(item, w));
    const settled = await Promise.allSettled(items.map((item) => this.push(item[0], w, item)));
    const now = windowsAt(this.now());
    return items.map((item, i) => {
      const s = settled[i] as PromiseSettledResult<LimitTally>;
      if (s.status === 'fulfilled') return s.value;
      this.enter();
      return this.tally(item, now);
    });
  }

  /** Requests counted in the current minute per key, as far as the supervisor knows. */
  peek(ids: readonly string[]): Map<string, number> {
    const w = windowsAt(this.now());
    const out = new Map<string, number>();
    for (const id of ids) {
      const e = this.keys.get(id);
      if (e?.minute === w.minute) out.set(id, e.minuteShared + e.minutePushing + e.minutePending);
    }
    return out;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.redis.disconnect();
  }

  /** A worker's floors are raised to; what it served alone (supervisor not answering) is added. */
  private merge([id, , , dayFloor, minuteFloor, dayAlone, minuteAlone]: LimitItem, w: Windows): void {
    const e = this.entry(id, w);
    e.dayShared = Math.max(e.dayShared, dayFloor);
    e.minuteShared = Math.max(e.minuteShared, minuteFloor);
    e.dayPending += dayAlone;
    e.minutePending += minuteAlone;
  }

  /** Checks and counts one request here (Redis unreachable or not yet handed the count). */
  private tally([id, ratePerMinute, dailyQuota]: LimitItem, w: Windows): LimitTally {
    const e = this.entry(id, w);
    const day = e.dayShared + e.dayPushing + e.dayPending;
    const minute = e.minuteShared + e.minutePushing + e.minutePending;
    const code = refusal({ ratePerMinute, dailyQuota }, minute, day);
    if (code !== null) return [code, minute, day];
    e.dayPending++;
    e.minutePending++;
    return [null, minute + 1, day + 1];
  }

  /**
   * Tells Redis what is pending for a key (taken, so two calls in flight never send it twice)
   * and, given an item, checks and counts its request there. On failure the pending counts are
   * put back, for the next hand-over.
   */
  private async push(id: string, w: Windows, item?: LimitItem): Promise<LimitTally> {
    const e = this.entry(id, w);
    const day = e.dayPending;
    const minute = e.minutePending;
    e.dayPending = 0;
    e.minutePending = 0;
    e.dayPushing += day;
    e.minutePushing += minute;
    const sameDay = (): boolean => e.day === w.day;
    const sameMinute = (): boolean => e.minute === w.minute;
    try {
      const [status, m, d] = await this.commands.mdsConsume(
        limitKey(this.prefix, id, `m:${w.minute}`),
        limitKey(this.prefix, id, `d:${w.day}`),
        item?.[1] ?? -1,
        item?.[2] ?? -1,
        120,
        w.dayReset + 3600,
        e.dayShared,
        e.minuteShared,
        day,
        minute,
        item ? 1 : 0,
      );
      if (sameDay()) {
        e.dayPushing -= day;
        e.dayShared = Math.max(e.dayShared, d);
      }
      if (sameMinute()) {
        e.minutePushing -= minute;
        e.minuteShared = Math.max(e.minuteShared, m);
      }
      return [status === 2 ? 4031 : status === 1 ? 4030 : null, m, d];
    } catch (err) {
      // Not known to be counted: kept, to be sent again (a timed-out script that ran anyway
      // counts these twice, the safe way: a quota used up a little early, never overspent).
      if (sameDay()) {
        e.dayPushing -= day;
        e.dayPending += day;
      }
      if (sameMinute()) {
        e.minutePushing -= minute;
        e.minutePending += minute;
      }
      throw err;
    }
  }

  private enter(): void {
    if (this.mode === 'instance') return;
    this.mode = 'instance';
    this.onMode('instance');
    this.timer = setInterval(() => void this.handover(), HANDOVER_EVERY_MS);
    this.timer.unref();
  }

  /**
   * Adds what was decided here to Redis, again while more was decided meanwhile; back to
   * `shared` only when a round succeeded and nothing is pending, with no await in between.
   */
  private async handover(): Promise<void> {
    if (this.handing || this.mode !== 'instance' || this.redis.status !== 'ready') return;
    this.handing = true;
    try {
      let answered = false;
      while (this.mode === 'instance') {
        const w = windowsAt(this.now());
        const due = [...this.keys.keys()].filter((id) => {
          const e = this.entry(id, w);
          return e.dayPending > 0 || e.minutePending > 0;
        });
        if (due.length === 0) {
          if (answered) {
            this.leave();
            return;
          }
          await this.redis.ping();
        } else await Promise.all(due.map((id) => this.push(id, w)));
        answered = true;
      }
    } catch {
      // Redis not back yet: the next tick tries again.
    } finally {
      this.handing = false;
    }
  }

  private leave(): void {
    this.mode = 'shared';
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.onMode('shared');
  }

  private entry(id: string, w: Windows): Entry {
    let e = this.keys.get(id);
    if (!e) {
      // A new day: forget keys not seen since yesterday.
      const first = this.keys.values().next().value;
      if (first && first.day !== w.day)
        for (const [k, v] of this.keys) if (v.day !== w.day) this.keys.delete(k);
      e = {
        day: w.day,
        dayShared: 0,
        dayPending: 0,
        dayPushing: 0,
        minute: w.minute,
        minuteShared: 0,
        minutePending: 0,
        minutePushing: 0,
      };
      this.keys.set(id, e);
    }
    if (e.day !== w.day) Object.assign(e, { day: w.day, dayShared: 0, dayPending: 0, dayPushing: 0 });
    if (e.minute !== w.minute)
      Object.assign(e, { minute: w.minute, minuteShared: 0, minutePending: 0, minutePushing: 0 });
    return e;
  }
}
