import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { KeyService } from '../../src/access/key-service.js';
import { windowsAt } from '../../src/access/limiter.js';
import { backends, freshDatabaseUrl, get, json, startApp, type Harness } from '../helpers/harness.js';
import { privateRedis, privateRedisAvailable, type PrivateServer } from '../helpers/private-servers.js';
import { sleep } from '../helpers/server-process.js';

/**
 * Daily quotas across Redis outages, with a real Redis of the test's own (no persistence, so a
 * restart loses every counter). The day count is durable in the database's usage table and
 * known to each instance; Redis is only the shared fast path. Before the fix a quota of 5 served
 * 5 more after each Redis restart and 5 more while Redis was down.
 */

const URL = '/api/v1/etf/basic';

/** Status codes of `n` requests with `secret`, one after the other. */
async function statuses(h: Harness, secret: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await get(h.app, URL, secret)).statusCode);
  return out;
}

/** Requests until one is refused (at most 20); how many were served. */
async function servedUntilRefused(h: Harness, secret: string): Promise<number> {
  for (let served = 0; served < 20; served++) {
    const r = await get(h.app, URL, secret);
    if (r.statusCode !== 200) {
      assert.equal(json(r).code, 4031, r.body);
      return served;
    }
  }
  throw new Error('never refused');
}

const runnable = privateRedisAvailable();

for (const backend of await backends()) {
  describe(
    `daily quotas through Redis outages (${backend})`,
    { skip: !runnable && 'no redis-server' },
    () => {
      let redis: PrivateServer;
      let db: { url: string; drop(): Promise<void> };
      let h: Harness;
      let keys: KeyService;
      let probe: Redis;
      const start = async (): Promise<Harness> =>
        startApp(backend, { REDIS_URL: redis.url }, { databaseUrl: db.url });

      before(async () => {
        redis = await privateRedis();
        db = await freshDatabaseUrl(backend, { migrated: true });
        h = await start();
        keys = new KeyService(h.store);
        probe = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => 200 });
        probe.on('error', () => {});
      });
      after(async () => {
        probe.disconnect();
        await h.close();
        await redis.remove();
        await db.drop();
      });

      /** Today's shared day count of a key, as Redis holds it (null: no counter). */
      const sharedDayCount = async (id: string): Promise<string | null> =>
        probe.get(`mds:rl:{${id}}:d:${windowsAt(Date.now()).day}`);

      test('a Redis restart does not renew the quota: Redis is seeded from what the day already used', async () => {
        const key = await keys.create({ scope: 'query', rate_per_minute: null, daily_quota: 5 });
        assert.deepEqual(await statuses(h, key.secret, 6), [200, 200, 200, 200, 200, 403]);
        await redis.kill();
        // Down: this instance still knows the day's count.
        assert.deepEqual(await statuses(h, key.secret, 3), [403, 403, 403]);
        await redis.start();
        // Refused requests are not counted, so asking again until Redis holds the count is harmless.
        for (let i = 0; (await sharedDayCount(key.key.id)) !== '5'; i++) {
          assert.ok(i < 100, 'the shared counter is seeded again');
          assert.equal((await get(h.app, URL, key.secret)).statusCode, 403);
          await sleep(100);
        }
        assert.deepEqual(await statuses(h, key.secret, 2), [403, 403]);
      });

      test('a restart of both Redis and the service does not renew the quota (the usage table is durable)', async () => {
        const key = await keys.create({ scope: 'query', rate_per_minute: null, daily_quota: 5 });
        assert.deepEqual(await statuses(h, key.secret, 3), [200, 200, 200]);
        await h.app.close(); // flushes the usage counts
        await h.store.close();
        await redis.kill();
        await redis.start();
        h = await start();
        keys = new KeyService(h.store);
        assert.equal(await servedUntilRefused(h, key.secret), 2);
      });

      test('requests answered while Redis was frozen count once: the day serves exactly its quota', async () => {
        const key = await keys.create({ scope: 'query', rate_per_minute: null, daily_quota: 5 });
        assert.deepEqual(await statuses(h, key.secret, 2), [200, 200]);
        redis.freeze();
        try {
          // Each times out in Redis and is counted by this instance; Redis runs them on waking.
          assert.deepEqual(await statuses(h, key.secret, 2), [200, 200]);
        } finally {
          redis.thaw();
        }
        for (let i = 0; (await probe.ping().catch(() => null)) !== 'PONG'; i++) {
          assert.ok(i < 100, 'Redis answers again');
          await sleep(100);
        }
        assert.equal(await servedUntilRefused(h, key.secret), 1);
      });

      test('a quota used up before Redis froze stays used up while it is frozen', async () => {
        const key = await keys.create({ scope: 'query', rate_per_minute: null, daily_quota: 5 });
        assert.equal(await servedUntilRefused(h, key.secret), 5);
        redis.freeze();
        try {
          assert.deepEqual(await statuses(h, key.secret, 3), [403, 403, 403]);
        } finally {
          redis.thaw();
        }
      });
    },
  );
}
