import { Redis } from 'ioredis';
import type { Principal } from './keyring.js';
import { MemoryLimiter } from './memory-limiter.js';
import { noLimit, decision, needsCounting, windowsAt, type LimitDecision, type Limiter } from './limiter.js';

/**
 * Check-and-count in one step, so instances sharing Redis can never overspend a budget:
 * refuse (without counting) when the quota or the rate is used up, else count the request
 * in both windows. Returns {0 allowed | 1 over rate | 2 over quota, minute count, day count}.
 */
const CONSUME_LUA = `
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local d = tonumber(redis.call('GET', KEYS[2]) or '0')
local rate = tonumber(ARGV[1])
local quota = tonumber(ARGV[2])
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
}

/**
 * Counters in Redis, shared by every instance using the same URL and prefix. While Redis is
 * unreachable (not connected, or a command fails or times out) each instance counts in its own
 * memory instead and logs one warning; requests are never refused or delayed because of Redis.
 * ioredis keeps reconnecting in the background and the shared counters take over again.
 */
export class RedisLimiter implements Limiter {
  private readonly redis: Redis;
  private readonly fallback: MemoryLimiter;
  private readonly prefix: string;
  private readonly log: LimiterLog | undefined;
  private readonly now: () => number;
  private degraded = false;

  constructor(opts: RedisLimiterOptions) {
    const timeout = opts.timeoutMs ?? 500;
    this.prefix = opts.prefix ?? 'mds:rl:';
    this.log = opts.log;
    this.now = opts.now ?? Date.now;
    this.fallback = new MemoryLimiter({ now: this.now });
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

  /** Only keys without limits are answered without Redis. */
  consumeNow(p: Principal): LimitDecision | undefined {
    return needsCounting(p) ? undefined : noLimit(this.now());
  }

  async consume(p: Principal): Promise<LimitDecision> {
    if (!needsCounting(p)) return noLimit(this.now());
    if (this.redis.status !== 'ready') {
      this.down(new Error(`redis ${this.redis.status}`));
      return this.fallback.consumeSync(p);
    }
    const now = this.now();
    const w = windowsAt(now);
    try {
      const [status, m, d] = await (this.redis as unknown as LimitCommands).mdsConsume(
        this.key(p.id, `m:${w.minute}`),
        this.key(p.id, `d:${w.day}`),
        p.ratePerMinute ?? -1,
        p.dailyQuota ?? -1,
        120,
        w.dayReset + 3600,
      );
      this.up();
      return decision(p, status === 2 ? 4031 : status === 1 ? 4030 : null, m, d, w);
    } catch (err) {
      this.down(err instanceof Error ? err : new Error(String(err)));
      return this.fallback.consumeSync(p);
    }
  }

  async peek(keyIds: readonly string[]): Promise<Map<string, number>> {
    if (keyIds.length === 0) return new Map();
    if (this.redis.status !== 'ready') return this.fallback.peek(keyIds);
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
      return this.fallback.peek(keyIds);
    }
  }

  async close(): Promise<void> {
    this.redis.removeAllListeners('error');
    this.redis.on('error', () => {});
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
    await this.fallback.close();
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
    this.log?.info({}, 'rate-limit counters: Redis reachable again; shared counters in use');
  }
}
