import { Redis } from 'ioredis';
import type { Principal } from './keyring.js';
import { MemoryLimiter, type DaySeed } from './memory-limiter.js';
import type { ClusterLimiter } from './cluster-limiter.js';

/**
 * After Redis is back, ms during which this worker raises the instance's count (the cluster
 * primary) to Redis's answers and Redis to the instance's count on every check: workers find
 * Redis back at different times (each reconnects on its own backoff, at most 2 s), and until
 * the last has, some still count on the primary.
 */
const RECONCILE_MS = 10_000;
import { noLimit, decision, needsCounting, windowsAt, type LimitDecision, type Limiter } from './limiter.js';

/**
 * Check-and-count in one step, so instances sharing Redis can never overspend a budget. The day
 * and minute counts are first raised to ARGV[5] and ARGV[6], the calling instance's own counts
 * (what it served, the stored usage it read, counts Redis told it before): a Redis restarted
 * empty is seeded again, and requests an instance served on its own while Redis was unreachable
 * are known. Raising to a floor (a maximum, never a sum) also keeps a request counted once when its
 * script, timed out by the client, still runs after Redis wakes up. Then: refuse (without
 * counting) when the quota or the rate is used up, else count the request in both windows.
 * Returns {0 allowed | 1 over rate | 2 over quota, minute count, day count}.
 */
const CONSUME_LUA = `
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local d = tonumber(redis.call('GET', KEYS[2]) or '0')
local rate = tonumber(ARGV[1])
local quota = tonumber(ARGV[2])
if d < tonumber(ARGV[5]) then
  d = tonumber(ARGV[5])
  redis.call('SET', KEYS[2], d, 'EX', ARGV[4])
end
if m < tonumber(ARGV[6]) then
  m = tonumber(ARGV[6])
  redis.call('SET', KEYS[1], m, 'EX', ARGV[3])
end
if quota >= 0 and d >= quota then return {2, m, d} end
if rate >= 0 and m >= rate then return {1, m, d} end
m = redis.call('INCR', KEYS[1])
if m == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
d = redis.call('INCR', KEYS[2])
if d == 1 then redis.call('EXPIRE', KEYS[2], ARGV[4]) end
return {0, m, d}
`;

interface LimitCommands {
  mdsConsume(
    minuteKey: string,
    dayKey: string,
    rate: number,
    quota: number,
    minuteTtl: number,
    dayTtl: number,
    dayFloor: number,
    minuteFloor: number,
  ): Promise<[number, number, number]>;
}

export interface LimiterLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface RedisLimiterOptions {
  url: string;
  /** Namespace of the counters, so deployments (and tests) sharing a Redis stay apart. */
  prefix?: string;
  log?: LimiterLog;
  now?: () => number;
  /** Connect and command timeouts, ms: a request waits at most this long for Redis. */
  timeoutMs?: number;
  /** A key's stored day count (the usage table): where this instance's count starts each day. */
  seed?: DaySeed;
  /**
   * In a cluster worker, the instance's shared count (the primary), built over `local`: while
   * Redis is unreachable the workers of the instance count there together, so one instance
   * stays exact, and Redis is raised to that count (the sum of what the workers served) when
   * it is back. Without it (one process) `local` is the instance's count.
   */
  instance?: { cluster: ClusterLimiter; local: MemoryLimiter };
}

/**
 * Counters in Redis, shared by every instance using the same URL and prefix. The durable day
 * count is the usage table (written every few seconds by UsageRecorder): each instance starts a
 * key's day from it and keeps its own count (`local`), raised by every answer Redis gives, and
 * sends it with every check (see CONSUME_LUA). So neither a Redis restart nor an outage renews a
 * quota. While Redis is unreachable (not connected, or a command fails or times out) the
 * instance decides on `local` alone and logs one warning; a timed-out check is not retried (it
 * may still run in Redis: the floor keeps it counted once). Requests are never refused or
 * delayed beyond the command timeout because of Redis; ioredis keeps reconnecting in the
 * background and the shared counters take over again.
 */
export class RedisLimiter implements Limiter {
  private readonly redis: Redis;
  private readonly local: MemoryLimiter;
  private readonly prefix: string;
  private readonly log: LimiterLog | undefined;
  private readonly now: () => number;
  private readonly cluster: ClusterLimiter | null;
  private degraded = false;
  /** Until when Redis and the instance's count are reconciled on every check (RECONCILE_MS). */
  private reconcileUntil = 0;

  constructor(opts: RedisLimiterOptions) {
    const timeout = opts.timeoutMs ?? 500;
    this.prefix = opts.prefix ?? 'mds:rl:';
    this.log = opts.log;
    this.now = opts.now ?? Date.now;
    this.local =
      opts.instance?.local ?? new MemoryLimiter({ now: this.now, ...(opts.seed ? { seed: opts.seed } : {}) });
    this.cluster = opts.instance?.cluster ?? null;
    this.redis = new Redis(opts.url, {
      connectTimeout: timeout * 2,
      commandTimeout: timeout,
      // Fail fast instead of queueing while disconnected: the memory fallback answers at once.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.redis.defineCommand('mdsConsume', { numberOfKeys: 2, lua: CONSUME_LUA });
    this.redis.on('error', (err: Error) => this.down(err));
    this.redis.on('ready', () => this.up());
  }

  /** Resolves once connected (or rejects after the connect timeout): for tests and startup logs. */
  async ready(timeoutMs = 5000): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => {
        this.down(new Error(`not connected after ${timeoutMs} ms`));
        reject(new Error('redis not reachable'));
      }, timeoutMs);
      this.redis.once('ready', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  get usingRedis(): boolean {
    return this.redis.status === 'ready' && !this.degraded;
  }

  /** Keys without limits are answered at once; the others ask Redis. */
  consume(p: Principal): LimitDecision | Promise<LimitDecision> {
    return needsCounting(p) ? this.shared(p) : noLimit(this.now());
  }

  /** Counts on the instance's own count: the primary's in a cluster, else this process's. */
  private alone(p: Principal): LimitDecision | Promise<LimitDecision> {
    return this.cluster ? this.cluster.count(p) : this.local.count(p);
  }

  private async shared(p: Principal): Promise<LimitDecision> {
    await this.local.ready(p);
    if (this.redis.status !== 'ready') {
      this.down(new Error(`redis ${this.redis.status}`));
      return this.alone(p);
    }
    const now = this.now();
    const w = windowsAt(now);
    // Back from an outage: first learn what the instance's workers served meanwhile (the
    // primary's count), so Redis is raised to their sum rather than to this worker's part.
    const reconciling = this.cluster !== null && (this.degraded || now < this.reconcileUntil);
    if (reconciling) await this.cluster?.sync(p);
    try {
      const [status, m, d] = await (this.redis as unknown as LimitCommands).mdsConsume(
        this.key(p.id, `m:${w.minute}`),
        this.key(p.id, `d:${w.day}`),
        p.ratePerMinute ?? -1,
        p.dailyQuota ?? -1,
        120,
        w.dayReset + 3600,
        ...this.local.known(p.id),
      );
      this.up();
      this.local.observe(p.id, m, d);
      // Workers still without Redis count on the primary: on top of this answer.
      if (reconciling) void this.cluster?.sync(p);
      return decision(p, status === 2 ? 4031 : status === 1 ? 4030 : null, m, d, w);
    } catch (err) {
      this.down(err instanceof Error ? err : new Error(String(err)));
      return this.alone(p);
    }
  }

  async peek(keyIds: readonly string[]): Promise<Map<string, number>> {
    if (keyIds.length === 0) return new Map();
    if (this.redis.status !== 'ready') return (this.cluster ?? this.local).peek(keyIds);
    const w = windowsAt(this.now());
    try {
      const values = await this.redis.mget(...keyIds.map((id) => this.key(id, `m:${w.minute}`)));
      const out = new Map<string, number>();
      keyIds.forEach((id, i) => {
        const v = values[i];
        if (v !== null && v !== undefined) out.set(id, Number(v));
      });
      return out;
    } catch {
      return (this.cluster ?? this.local).peek(keyIds);
    }
  }

  async close(): Promise<void> {
    this.redis.removeAllListeners('error');
    this.redis.on('error', () => {});
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
    await this.local.close();
  }

  /** `{id}` is a hash tag: both windows of a key live on one Redis Cluster slot (one script). */
  private key(id: string, window: string): string {
    return `${this.prefix}{${id}}:${window}`;
  }

  private down(err: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    this.log?.warn(
      { err: err.message },
      'rate-limit counters: Redis unreachable; counting per instance in memory until it is back',
    );
  }

  private up(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.reconcileUntil = this.now() + RECONCILE_MS;
    this.log?.info({}, 'rate-limit counters: Redis reachable again; shared counters in use');
  }
}
