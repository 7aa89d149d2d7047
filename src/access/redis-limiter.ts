import { Redis } from 'ioredis';
import type { Principal } from './keyring.js';
import { MemoryLimiter, type DaySeed } from './memory-limiter.js';
import type { ClusterLimiter } from './cluster-limiter.js';

import { noLimit, decision, needsCounting, windowsAt, type LimitDecision, type Limiter } from './limiter.js';

/**
 * Check-and-count in one step, so instances sharing Redis can never overspend a budget. The day
 * and minute counts are first raised to ARGV[5] and ARGV[6], counts the caller knows Redis had
 * (what it served, the stored usage it read, counts Redis told it before): a Redis restarted
 * empty is seeded again. Raising to a floor (a maximum, never a sum) also keeps a request counted
 * once when its script, timed out by the client, still runs after Redis wakes up. Then ARGV[7]
 * and ARGV[8] are added: requests a cluster's supervisor decided while Redis was unreachable
 * (cluster/instance-limits.ts), which Redis has never seen, so a sum. With ARGV[9] = 0 that is
 * all ({0, minute, day}); else: refuse (without counting) when the quota or the rate is used up,
 * else count the request in both windows.
 * Returns {0 allowed | 1 over rate | 2 over quota, minute count, day count}.
 */
const CONSUME_LUA = `
local m0 = tonumber(redis.call('GET', KEYS[1]) or '0')
local d0 = tonumber(redis.call('GET', KEYS[2]) or '0')
local rate = tonumber(ARGV[1])
local quota = tonumber(ARGV[2])
local d = math.max(d0, tonumber(ARGV[5])) + tonumber(ARGV[7])
if d ~= d0 then redis.call('SET', KEYS[2], d, 'EX', ARGV[4]) end
local m = math.max(m0, tonumber(ARGV[6])) + tonumber(ARGV[8])
if m ~= m0 then redis.call('SET', KEYS[1], m, 'EX', ARGV[3]) end
if ARGV[9] == '0' then return {0, m, d} end
if quota >= 0 and d >= quota then return {2, m, d} end
if rate >= 0 and m >= rate then return {1, m, d} end
m = redis.call('INCR', KEYS[1])
if m == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
d = redis.call('INCR', KEYS[2])
if d == 1 then redis.call('EXPIRE', KEYS[2], ARGV[4]) end
return {0, m, d}
`;

/** The script as a command of a connection (defineLimitCommands). */
export interface LimitCommands {
  mdsConsume(
    minuteKey: string,
    dayKey: string,
    rate: number,
    quota: number,
    minuteTtl: number,
    dayTtl: number,
    dayFloor: number,
    minuteFloor: number,
    dayAdded: number,
    minuteAdded: number,
    consume: 0 | 1,
  ): Promise<[number, number, number]>;
}

/** Adds CONSUME_LUA to a connection as `mdsConsume` (workers and the cluster supervisor). */
export function defineLimitCommands(redis: Redis): LimitCommands {
  redis.defineCommand('mdsConsume', { numberOfKeys: 2, lua: CONSUME_LUA });
  return redis as unknown as LimitCommands;
}

/** A key's counter in one window; `{id}` is a hash tag: both windows live on one Redis Cluster slot. */
export const limitKey = (prefix: string, id: string, window: string): string => `${prefix}{${id}}:${window}`;

/** The counters' namespace unless a test gives its own. */
export const LIMIT_PREFIX = 'mds:rl:';

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
   * In a cluster worker: the supervisor's count (`cluster`), which decides for every worker of
   * the instance while Redis is unreachable and hands its count over to Redis when it is back
   * (cluster/instance-limits.ts); `local`, this worker's copy of the instance's count; `seen`,
   * what Redis is known to have counted (its answers, the stored count), the floors sent to the
   * supervisor. Without it (one process) `local` is the instance's count.
   */
  instance?: { cluster: ClusterLimiter; local: MemoryLimiter; seen: MemoryLimiter };
}

/**
 * Counters in Redis, shared by every instance using the same URL and prefix. The durable day
 * count is the usage table (written every few seconds by UsageRecorder): each instance starts a
 * key's day from it and keeps its own count (`local`), raised by every answer Redis gives, and
 * sends it with every check (see CONSUME_LUA). So neither a Redis restart nor an outage renews a
 * quota. While Redis is unreachable (not connected, or a command fails or times out) one
 * process decides on `local` alone and logs one warning; a cluster worker asks its supervisor,
 * which decides for the whole instance until it has handed its count over to Redis (and says
 * so to every worker). A timed-out check is not retried (it may still run in Redis: the floor
 * keeps it counted once). Requests are never refused or delayed beyond the command timeout
 * because of Redis; ioredis keeps reconnecting in the background and the shared counters take
 * over again.
 */
export class RedisLimiter implements Limiter {
  private readonly redis: Redis;
  private readonly commands: LimitCommands;
  private readonly local: MemoryLimiter;
  private readonly seen: MemoryLimiter | null;
  private readonly prefix: string;
  private readonly log: LimiterLog | undefined;
  private readonly now: () => number;
  private readonly cluster: ClusterLimiter | null;
  private degraded = false;

  constructor(opts: RedisLimiterOptions) {
    const timeout = opts.timeoutMs ?? 500;
    this.prefix = opts.prefix ?? LIMIT_PREFIX;
    this.log = opts.log;
    this.now = opts.now ?? Date.now;
    this.local =
      opts.instance?.local ?? new MemoryLimiter({ now: this.now, ...(opts.seed ? { seed: opts.seed } : {}) });
    this.seen = opts.instance?.seen ?? null;
    this.cluster = opts.instance?.cluster ?? null;
    this.redis = new Redis(opts.url, {
      connectTimeout: timeout * 2,
      commandTimeout: timeout,
      // Fail fast instead of queueing while disconnected: the memory fallback answers at once.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.commands = defineLimitCommands(this.redis);
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

  /** Counts on the instance's own count: the supervisor's in a cluster, else this process's. */
  private alone(p: Principal): LimitDecision | Promise<LimitDecision> {
    return this.cluster ? this.cluster.count(p) : this.local.count(p);
  }

  private async shared(p: Principal): Promise<LimitDecision> {
    await this.local.ready(p);
    await this.seen?.ready(p);
    // The supervisor decides until it has handed the instance's outage count over to Redis:
    // a worker that reached Redis before then would decide on a count without those requests.
    if (this.cluster?.instanceCounting) return this.alone(p);
    if (this.redis.status !== 'ready') {
      this.down(new Error(`redis ${this.redis.status}`));
      return this.alone(p);
    }
    const w = windowsAt(this.now());
    try {
      const [status, m, d] = await this.commands.mdsConsume(
        limitKey(this.prefix, p.id, `m:${w.minute}`),
        limitKey(this.prefix, p.id, `d:${w.day}`),
        p.ratePerMinute ?? -1,
        p.dailyQuota ?? -1,
        120,
        w.dayReset + 3600,
        ...this.local.known(p.id),
        0,
        0,
        1,
      );
      this.up();
      this.local.observe(p.id, m, d);
      this.seen?.observe(p.id, m, d);
      return decision(p, status === 2 ? 4031 : status === 1 ? 4030 : null, m, d, w);
    } catch (err) {
      this.down(err instanceof Error ? err : new Error(String(err)));
      return this.alone(p);
    }
  }

  async peek(keyIds: readonly string[]): Promise<Map<string, number>> {
    if (keyIds.length === 0) return new Map();
    if (this.redis.status !== 'ready' || this.cluster?.instanceCounting)
      return (this.cluster ?? this.local).peek(keyIds);
    const w = windowsAt(this.now());
    try {
      const values = await this.redis.mget(...keyIds.map((id) => limitKey(this.prefix, id, `m:${w.minute}`)));
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

  private down(err: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    this.log?.warn(
      { err: err.message },
      this.cluster
        ? 'rate-limit counters: Redis unreachable; the cluster supervisor counts for this instance until it is back'
        : 'rate-limit counters: Redis unreachable; counting per instance in memory until it is back',
    );
  }

  private up(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.log?.info({}, 'rate-limit counters: Redis reachable again; shared counters in use');
  }
}
