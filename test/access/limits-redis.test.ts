import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { RedisLimiter } from '../../src/access/redis-limiter.js';
import { KeyService } from '../../src/access/key-service.js';
import type { Principal } from '../../src/access/keyring.js';
import { Redis } from 'ioredis';
import { ADMIN_TOKEN, freshDatabaseUrl, get, json, startApp, type Harness } from '../helpers/harness.js';
import { request, startServer } from '../helpers/server-process.js';
import { REDIS_URL, redisAvailable, redisPrefix } from '../helpers/redis.js';

/**
 * Counters in Redis: several instances share one budget per key (atomic check-and-count), and
 * an unreachable Redis degrades to per-instance memory counters without failing or hanging.
 */

const URL = '/api/v1/etf/basic';
const T0 = Date.UTC(2030, 0, 15, 12, 0, 30);
let available = false;
const cleanups: (() => Promise<void>)[] = [];

before(async () => {
  available = await redisAvailable();
});
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

class LogCapture {
  readonly lines: string[] = [];
  warn(obj: object, msg: string): void {
    this.lines.push(`warn ${msg} ${JSON.stringify(obj)}`);
  }
  info(obj: object, msg: string): void {
    this.lines.push(`info ${msg} ${JSON.stringify(obj)}`);
  }
}

/** Two app instances on one database, each with its own Redis connection, same counter prefix. */
async function twoInstances(): Promise<{ a: Harness; b: Harness; keys: KeyService }> {
  const db = await freshDatabaseUrl('sqlite');
  const { prefix, cleanup } = redisPrefix();
  const limiters = [0, 1].map(() => new RedisLimiter({ url: REDIS_URL, prefix, now: () => T0 }));
  await Promise.all(limiters.map((l) => l.ready()));
  const a = await startApp('sqlite', {}, { databaseUrl: db.url, limiter: limiters[0] as RedisLimiter });
  const b = await startApp('sqlite', {}, { databaseUrl: db.url, limiter: limiters[1] as RedisLimiter });
  cleanups.push(async () => {
    await a.close();
    await b.close();
    for (const l of limiters) await l.close();
    await cleanup();
    await db.drop();
  });
  return { a, b, keys: new KeyService(a.store) };
}

test('two instances sharing Redis enforce one rate budget per key', async (t) => {
  if (!available) return t.skip('no Redis');
  const { a, b, keys } = await twoInstances();
  const { secret } = await keys.create({ scope: 'query', rate_per_minute: 5 });
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await get(i % 2 ? b.app : a.app, URL, secret)).statusCode);
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 403, 403, 403]);
  const r = await get(b.app, URL, secret);
  assert.equal(json(r).code, 4030);
  assert.equal(r.headers['retry-after'], '30');
  assert.equal(r.headers.ratelimit, '"minute";r=0;t=30');
});

test('two instances sharing Redis enforce one daily quota; concurrent requests never overspend', async (t) => {
  if (!available) return t.skip('no Redis');
  const { a, b, keys } = await twoInstances();
  const { secret } = await keys.create({ scope: 'query', rate_per_minute: null, daily_quota: 7 });
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => get(i % 2 ? b.app : a.app, URL, secret)),
  );
  const ok = answers.filter((r) => r.statusCode === 200).length;
  const refused = answers.filter((r) => r.statusCode === 403 && json(r).code === 4031).length;
  assert.equal(ok, 7);
  assert.equal(refused, 23);
});

test('a limit change made through one instance applies on the other within 2 seconds', async (t) => {
  if (!available) return t.skip('no Redis');
  const { a, b, keys } = await twoInstances();
  const { key, secret } = await keys.create({ scope: 'query', rate_per_minute: 100 });
  assert.equal((await get(b.app, URL, secret)).statusCode, 200);
  const patch = await a.app.inject({
    method: 'PATCH',
    url: `/admin/api/keys/${key.id}`,
    headers: { authorization: 'Bearer test-admin-token-0123456789' },
    payload: { rate_per_minute: 1 },
  });
  assert.equal(patch.statusCode, 200, patch.body);
  await new Promise((r) => setTimeout(r, 1100)); // the keyring's cache lives one second
  const r = await get(b.app, URL, secret);
  assert.equal(r.statusCode, 403);
  assert.equal(r.headers['ratelimit-policy'], '"minute";q=1;w=60');
});

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

const principal = (id: string, rate: number): Principal => ({
  id,
  name: 't',
  scope: 'query',
  ratePerMinute: rate,
  dailyQuota: null,
});

test('Redis unreachable: counting falls back to this instance memory, logged once, requests never fail', async () => {
  const log = new LogCapture();
  const limiter = new RedisLimiter({ url: `redis://127.0.0.1:${await closedPort()}`, log, now: () => T0 });
  try {
    const p = principal('k1', 3);
    const d = [];
    for (let i = 0; i < 4; i++) d.push(await limiter.consume(p));
    assert.deepEqual(
      d.map((x) => x.code),
      [null, null, null, 4030],
    );
    assert.equal(d[0]?.headers.RateLimit, '"minute";r=2;t=30');
    assert.equal(limiter.usingRedis, false);
    assert.equal(log.lines.filter((l) => l.startsWith('warn')).length, 1, log.lines.join('\n'));
    assert.match(log.lines[0] ?? '', /Redis unreachable; counting per instance in memory/);
  } finally {
    await limiter.close();
  }
});

test('Redis unreachable at start: REDIS_URL on a closed port, the app starts and limits in memory', async () => {
  const h = await startApp('sqlite', { REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
  try {
    const { secret } = await new KeyService(h.store).create({ scope: 'query', rate_per_minute: 2 });
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await get(h.app, URL, secret)).statusCode);
    assert.deepEqual(codes, [200, 200, 403]);
  } finally {
    await h.close();
  }
});

/** A private redis-server on a free port, to stop and restart (skipped when the binary is absent). */
async function privateRedis(port: number): Promise<ChildProcess | null> {
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const ok = await new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(false));
    const deadline = Date.now() + 5000;
    const probe = (): void => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => (Date.now() > deadline ? resolve(false) : setTimeout(probe, 50)));
    };
    probe();
  });
  return ok ? child : null;
}

test('Redis goes away and comes back: memory meanwhile, shared counters again after', async (t) => {
  const port = await closedPort();
  let server = await privateRedis(port);
  if (!server) return t.skip('redis-server binary not available');
  const log = new LogCapture();
  const limiter = new RedisLimiter({ url: `redis://127.0.0.1:${port}`, log, now: () => T0 });
  try {
    await limiter.ready();
    const p = principal('k2', 100);
    assert.equal((await limiter.consume(p)).headers.RateLimit, '"minute";r=99;t=30');
    assert.equal(limiter.usingRedis, true);
    server.kill('SIGKILL');
    await new Promise((r) => server?.once('exit', r));
    // Fallback: this instance's own counters, which know the request counted in Redis.
    assert.equal((await limiter.consume(p)).headers.RateLimit, '"minute";r=98;t=30');
    assert.equal(limiter.usingRedis, false);
    server = await privateRedis(port);
    assert.ok(server);
    await limiter.ready(10_000);
    // The restarted Redis is empty (no persistence): seeded again from this instance's counts.
    assert.equal((await limiter.consume(p)).headers.RateLimit, '"minute";r=97;t=30');
    assert.equal(limiter.usingRedis, true);
    assert.ok(
      log.lines.some((l) => l.startsWith('info') && /reachable again/.test(l)),
      log.lines.join('\n'),
    );
  } finally {
    await limiter.close();
    server?.kill('SIGKILL');
  }
});

test('two server processes (main.ts) with one REDIS_URL share one budget', async (t) => {
  if (!available) return t.skip('no Redis');
  const db = await freshDatabaseUrl('sqlite');
  const env = { REDIS_URL, MDS_ADMIN_TOKEN: ADMIN_TOKEN };
  const a = await startServer({ databaseUrl: db.url, env });
  const b = await startServer({ databaseUrl: db.url, env });
  let keyId = '';
  try {
    await a.waitForOutput('rate-limit counters in Redis');
    await b.waitForOutput('rate-limit counters in Redis');
    const created = await request(a.port, {
      method: 'POST',
      path: '/admin/api/keys',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scope: 'query', rate_per_minute: 3, daily_quota: 1000 }),
    });
    const k = (JSON.parse(created.body) as { data: { id: string; secret: string } }).data;
    keyId = k.id;
    // These servers use the real clock: start well inside a minute so all six share one window.
    const sec = new Date().getUTCSeconds();
    if (sec >= 50) await new Promise((r) => setTimeout(r, (61 - sec) * 1000));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await request(i % 2 ? b.port : a.port, {
        method: 'GET',
        path: URL,
        headers: { 'q-api-key': k.secret },
      });
      statuses.push(r.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 403, 403, 403]);
  } finally {
    await a.kill('SIGTERM');
    await b.kill('SIGTERM');
    const r = new Redis(REDIS_URL);
    const keys = keyId ? await r.keys(`mds:rl:{${keyId}}:*`) : [];
    if (keys.length > 0) await r.del(...keys);
    r.disconnect();
    await db.drop();
  }
});
