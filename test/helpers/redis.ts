import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/** The test Redis (127.0.0.1:6379 unless TEST_REDIS_URL says otherwise). */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Whether Redis answers. When it does not, suites skip with a printed reason, unless
 * MDS_REQUIRE_REDIS=1 (CI), where an unreachable Redis is a failure.
 */
export async function redisAvailable(): Promise<boolean> {
  const r = new Redis(REDIS_URL, {
    lazyConnect: true,
    // Generous: an absent Redis is refused at once; a busy machine may take seconds to accept.
    connectTimeout: 10_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    await r.ping();
    return true;
  } catch (err) {
    if (process.env.MDS_REQUIRE_REDIS === '1')
      throw new Error(`Redis required but not reachable at ${REDIS_URL}: ${String(err)}`);
    console.log(`# skipping Redis tests: no Redis at ${REDIS_URL} (set MDS_REQUIRE_REDIS=1 to fail instead)`);
    return false;
  } finally {
    r.disconnect();
  }
}

/** A key prefix of its own for one test, and a cleanup that deletes everything under it. */
export function redisPrefix(): { prefix: string; cleanup(): Promise<void> } {
  const prefix = `mds-test:${randomUUID()}:`;
  return {
    prefix,
    async cleanup() {
      const r = new Redis(REDIS_URL, { maxRetriesPerRequest: 0 });
      try {
        const keys = await r.keys(`${prefix}*`);
        if (keys.length > 0) await r.del(...keys);
      } finally {
        r.disconnect();
      }
    },
  };
}
