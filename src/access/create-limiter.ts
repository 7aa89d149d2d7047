import type { Config } from '../config.js';
import type { Store } from '../storage/store.js';
import type { Limiter } from './limiter.js';
import { MemoryLimiter, type DaySeed } from './memory-limiter.js';
import type { LimiterLog } from './redis-limiter.js';
import { ClusterLimiter } from './cluster-limiter.js';
import { primaryLink } from '../cluster/primary-link.js';

/**
 * The limiter the configuration asks for: counters in this process (in the cluster primary for
 * the workers of one instance), or in Redis when REDIS_URL is set (shared by every instance). An unreachable Redis does not stop the start:
 * the limiter counts in memory until Redis answers (see RedisLimiter).
 */
export async function createLimiter(
  config: Pick<Config, 'REDIS_URL'>,
  log: LimiterLog,
  store?: Pick<Store, 'keys'>,
): Promise<Limiter> {
  // Today's stored usage starts each key's day count, so a restart (of the service or of Redis)
  // does not renew a quota.
  const seed: { seed?: DaySeed } = store
    ? {
        seed: async (keyId, day) =>
          (await store.keys.usage(`${day}T00`))
            .filter((u) => u.key_id === keyId && u.hour.startsWith(day))
            .reduce((n, u) => n + u.count, 0),
      }
    : {};
  const link = primaryLink();
  if (!config.REDIS_URL) return link ? new ClusterLimiter(link, seed) : new MemoryLimiter(seed);
  // In a cluster worker, the supervisor decides for the instance while Redis is unreachable;
  // the floors it is sent are what Redis is known to have counted (`seen`), never its own
  // answers, which it keeps apart (cluster/instance-limits.ts).
  const local = new MemoryLimiter(seed);
  const seen = new MemoryLimiter(seed);
  const instance = link
    ? {
        instance: {
          local,
          seen,
          cluster: new ClusterLimiter(link, { local, floors: (id: string) => seen.known(id) }),
        },
      }
    : {};
  // Imported only here: without REDIS_URL a process never loads ioredis (about 0.1 s of CPU).
  const { RedisLimiter } = await import('./redis-limiter.js');
  const limiter = new RedisLimiter({ url: config.REDIS_URL, log, ...seed, ...instance });
  try {
    await limiter.ready(2000);
    log.info({}, 'rate-limit counters in Redis');
  } catch {
    // RedisLimiter has logged the outage; it keeps reconnecting.
  }
  return limiter;
}
