import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { MemoryLimiter } from '../../src/access/memory-limiter.js';
import { windowsAt } from '../../src/access/limiter.js';
import { KeyService } from '../../src/access/key-service.js';
import { QUERY_KEY, get, json, startApp, type Harness } from '../helpers/harness.js';

/**
 * Per-key limits on the query interface, counters in memory (the default). The limiter gets a
 * fixed clock, so a minute boundary passing during a test cannot change its outcome.
 */

const URL = '/api/v1/etf/basic';
/** 12:00:30 UTC: 30 s left in the minute, 11 h 59 min 30 s left in the day. */
const T0 = Date.UTC(2030, 0, 15, 12, 0, 30);

/**
 * The tests on the default configuration share one app (an app costs about 0.5 s of CPU, most
 * of the file's: docs/testing.md): each creates keys of its own, and the limiter counts per key,
 * so none sees another's counts; the clock is set back to T0 for each. A test with other
 * settings gets an app of its own.
 */
const shared: { clock: { now: number }; app: Promise<Harness> | null } = { clock: { now: T0 }, app: null };
after(async () => {
  await (await shared.app)?.close();
});

async function withApp(
  fn: (h: Harness, keys: KeyService, clock: { now: number }) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  if (Object.keys(env).length === 0) {
    const clock = shared.clock;
    shared.app ??= startApp('sqlite', {}, { limiter: new MemoryLimiter({ now: () => clock.now }) });
    const h = await shared.app;
    clock.now = T0;
    return fn(h, new KeyService(h.store), clock);
  }
  const clock = { now: T0 };
  const h = await startApp('sqlite', env, { limiter: new MemoryLimiter({ now: () => clock.now }) });
  try {
    await fn(h, new KeyService(h.store), clock);
  } finally {
    await h.close();
  }
}

const code = (r: LightMyRequestResponse): number => json(r).code as number;

test('a key with 5 requests per minute gets 5 answers, then 403 / 4030 with Retry-After', async () => {
  await withApp(async (h, keys) => {
    const { secret } = await keys.create({ scope: 'query', rate_per_minute: 5 });
    for (let i = 1; i <= 5; i++) {
      const r = await get(h.app, URL, secret);
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(r.headers['ratelimit-policy'], '"minute";q=5;w=60');
      assert.equal(r.headers.ratelimit, `"minute";r=${5 - i};t=30`);
    }
    const r = await get(h.app, URL, secret);
    assert.equal(r.statusCode, 403);
    assert.equal(code(r), 4030);
    assert.match(
      json(r).message as string,
      /^rate limit exceeded: this key may make 5 requests per minute; retry in 30 s$/,
    );
    assert.deepEqual(json(r).data, []);
    assert.equal(r.headers['retry-after'], '30');
    assert.equal(r.headers['ratelimit-policy'], '"minute";q=5;w=60');
    assert.equal(r.headers.ratelimit, '"minute";r=0;t=30');
  });
});

test('the next minute opens a new window; refused requests do not count', async () => {
  await withApp(async (h, keys, clock) => {
    const { secret } = await keys.create({ scope: 'query', rate_per_minute: 2 });
    for (let i = 0; i < 2; i++) assert.equal((await get(h.app, URL, secret)).statusCode, 200);
    for (let i = 0; i < 3; i++) assert.equal(code(await get(h.app, URL, secret)), 4030);
    clock.now += 30_000;
    const r = await get(h.app, URL, secret);
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers.ratelimit, '"minute";r=1;t=60');
  });
});

test('a key with a daily quota of 3 gets 403 / 4031 on the fourth request, until the UTC day ends', async () => {
  await withApp(async (h, keys, clock) => {
    const { secret } = await keys.create({ scope: 'query', rate_per_minute: null, daily_quota: 3 });
    for (let i = 1; i <= 3; i++) {
      const r = await get(h.app, URL, secret);
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['ratelimit-policy'], '"day";q=3;w=86400');
      assert.equal(r.headers.ratelimit, `"day";r=${3 - i};t=43170`);
    }
    const r = await get(h.app, URL, secret);
    assert.equal(r.statusCode, 403);
    assert.equal(code(r), 4031);
    assert.match(
      json(r).message as string,
      /^daily quota exhausted: this key may make 3 requests per UTC day/,
    );
    assert.equal(r.headers['retry-after'], '43170');
    // A new minute does not help; a new UTC day does.
    clock.now += 60_000;
    assert.equal(code(await get(h.app, URL, secret)), 4031);
    clock.now = Date.UTC(2030, 0, 16, 0, 0, 1);
    assert.equal((await get(h.app, URL, secret)).statusCode, 200);
  });
});

test('both limits: both policies advertised; an exhausted quota wins over the rate', async () => {
  await withApp(async (h, keys) => {
    const { secret } = await keys.create({ scope: 'query', rate_per_minute: 5, daily_quota: 2 });
    const r1 = await get(h.app, URL, secret);
    assert.equal(r1.headers['ratelimit-policy'], '"minute";q=5;w=60, "day";q=2;w=86400');
    assert.equal(r1.headers.ratelimit, '"minute";r=4;t=30, "day";r=1;t=43170');
    await get(h.app, URL, secret);
    const r3 = await get(h.app, URL, secret);
    assert.equal(code(r3), 4031);
    assert.equal(r3.headers['retry-after'], '43170');
  });
});

test('limits apply to every query endpoint and to error answers too (one budget per key)', async () => {
  await withApp(async (h, keys) => {
    const { secret } = await keys.create({ scope: 'query', rate_per_minute: 3 });
    assert.equal((await get(h.app, '/api/v1/etf/basic', secret)).statusCode, 200);
    assert.equal((await get(h.app, '/api/v1/etf/price', secret)).statusCode, 200);
    const bad = await get(h.app, '/api/v1/etf/basic?limit=0', secret);
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.headers.ratelimit, '"minute";r=0;t=30');
    assert.equal(code(await get(h.app, '/api/v1/etf/price', secret)), 4030);
  });
});

test('static keys: no limits by default (unbounded headers); MDS_STATIC_* set limits', async () => {
  await withApp(async (h) => {
    for (let i = 0; i < 20; i++) {
      const r = await get(h.app, URL, QUERY_KEY);
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['ratelimit-policy'], `"day";q=${Number.MAX_SAFE_INTEGER};w=86400`);
      assert.match(String(r.headers.ratelimit), /^"day";r=9007199254740991;t=\d+$/);
    }
  });
  await withApp(
    async (h) => {
      for (let i = 0; i < 2; i++) assert.equal((await get(h.app, URL, QUERY_KEY)).statusCode, 200);
      const r = await get(h.app, URL, QUERY_KEY);
      assert.equal(code(r), 4030);
      assert.equal(r.headers['ratelimit-policy'], '"minute";q=2;w=60, "day";q=100;w=86400');
    },
    { MDS_STATIC_RATE_PER_MINUTE: '2', MDS_STATIC_DAILY_QUOTA: '100' },
  );
});

test('new query keys get MDS_DEFAULT_RATE_PER_MINUTE (600) unless they name their own limits', async () => {
  await withApp(async (h) => {
    const svc = h.app.services.keys;
    const { key, secret } = await svc.create({ scope: 'query' });
    assert.equal(key.rate_per_minute, 600);
    assert.equal(key.daily_quota, null);
    const r = await get(h.app, URL, secret);
    assert.equal(r.headers['ratelimit-policy'], '"minute";q=600;w=60');
    const none = await svc.create({ scope: 'query', rate_per_minute: null });
    assert.equal(none.key.rate_per_minute, null);
    // A managed key without limits is counted (usage) and advertises the unbounded policy.
    assert.equal(
      (await get(h.app, URL, none.secret)).headers['ratelimit-policy'],
      `"day";q=${Number.MAX_SAFE_INTEGER};w=86400`,
    );
  });
});

test('the ingest interface is not metered; limits on ingest keys are refused', async () => {
  await withApp(async (h, keys) => {
    await assert.rejects(keys.create({ scope: 'ingest', rate_per_minute: 5 }), /query keys only/);
    const { key } = await keys.create({ scope: 'ingest' });
    assert.equal(key.rate_per_minute, null);
  });
});

test('windows: the minute and the UTC day, reset times never 0', () => {
  const w = windowsAt(Date.UTC(2030, 0, 15, 23, 59, 59, 999));
  assert.equal(w.day, '2030-01-15');
  assert.equal(w.minuteReset, 1);
  assert.equal(w.dayReset, 1);
  const w2 = windowsAt(Date.UTC(2030, 0, 16, 0, 0, 0));
  assert.equal(w2.day, '2030-01-16');
  assert.equal(w2.minuteReset, 60);
  assert.equal(w2.dayReset, 86400);
});

test('a restart does not renew a daily quota: the day count starts from the stored usage', async () => {
  const first = await startApp('sqlite');
  const { secret } = await new KeyService(first.store).create({ scope: 'query', daily_quota: 3 });
  assert.equal((await get(first.app, URL, secret)).statusCode, 200);
  assert.equal((await get(first.app, URL, secret)).statusCode, 200);
  await first.app.close(); // flushes the usage statistics
  await first.store.close();
  const second = await startApp('sqlite', {}, { databaseUrl: first.databaseUrl });
  try {
    const r = await get(second.app, URL, secret);
    assert.equal(r.statusCode, 200);
    assert.match(r.headers.ratelimit as string, /"day";r=0;/);
    assert.equal(json(await get(second.app, URL, secret)).code, 4031);
  } finally {
    await second.close();
    await first.close().catch(() => {});
  }
});

test('failed authentication is limited per client address: 429 / 4290 with Retry-After for invalid keys only', async () => {
  await withApp(
    async (h) => {
      for (let i = 0; i < 3; i++) assert.equal((await get(h.app, URL, `wrong-key-${i}`)).statusCode, 401);
      const r = await get(h.app, URL, 'wrong-key-again');
      assert.equal(r.statusCode, 429);
      assert.equal(code(r), 4290);
      assert.ok(Number(r.headers['retry-after']) >= 1);
      // Only invalid keys are refused: a valid key from the same address passes (issue 14).
      assert.equal((await get(h.app, URL, QUERY_KEY)).statusCode, 200);
    },
    { MDS_AUTH_FAILURES_PER_MINUTE: '3' },
  );
});
