import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ADMIN_TOKEN, QUERY_KEY, freshDatabaseUrl } from '../helpers/harness.js';
import { probe } from '../helpers/probe.js';
import { request, startServer, workersServing } from '../helpers/server-process.js';

/**
 * Issue 24 item 4: a cluster primary stopped with SIGSTOP (frozen, not dead) must not hang the
 * instance. Workers accept connections themselves (not through the primary's round-robin), and
 * every question to the primary (rate-limit counts, /metrics) is bounded: a worker decides alone
 * when it does not answer. Before: every new connection hung for as long as the primary was
 * stopped, and managed-key requests on open connections too. The probe runs in its own process
 * and opens a fresh connection per request, so it measures whichever worker the kernel picks.
 * After SIGCONT the instance's count is the sum of what each worker served alone.
 */

const KLINE = '/api/v1/etf/kline?code=510300&limit=1';

test('a frozen cluster primary hangs no connection and no request; counts add up after it wakes', async () => {
  const db = await freshDatabaseUrl('sqlite');
  const server = await startServer({
    databaseUrl: db.url,
    env: { MDS_WORKERS: '2', MDS_STATIC_RATE_PER_MINUTE: '' },
  });
  const primary = server.child.pid as number;
  let frozen = false;
  try {
    await workersServing(server, 2);
    const created = await request(server.port, {
      method: 'POST',
      path: '/admin/api/keys',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scope: 'query', rate_per_minute: null, daily_quota: 30 }),
    });
    assert.equal(created.status, 201, created.body);
    const key = (JSON.parse(created.body) as { data: { secret: string } }).data.secret;
    const managed = { path: KLINE, headers: { 'q-api-key': key } };
    const before = await probe(
      server.port,
      Array.from({ length: 5 }, () => managed),
      10_000,
    );
    assert.deepEqual(
      before.map((r) => r.status),
      [200, 200, 200, 200, 200],
    );

    process.kill(primary, 'SIGSTOP');
    frozen = true;
    // 10 managed-key requests, /health, a static-key query and /metrics, each on a new
    // connection, while the primary is stopped: every one answered (a hang is a 10 s give-up).
    const during = await probe(
      server.port,
      [
        { path: '/health' },
        { path: KLINE, headers: { 'q-api-key': QUERY_KEY } },
        { path: '/metrics' },
        ...Array.from({ length: 10 }, () => managed),
      ],
      10_000,
    );
    process.kill(primary, 'SIGCONT');
    frozen = false;
    for (const r of during) assert.equal(r.status, 200, JSON.stringify(during));

    // Awake: the primary adds what each worker served alone, so the day's quota of 30 leaves 15.
    let served = 0;
    for (let i = 0; i < 30; i++) {
      const r = await request(server.port, { method: 'GET', path: KLINE, headers: { 'q-api-key': key } });
      if (r.status !== 200) {
        assert.equal(r.status, 403, r.body);
        assert.equal((JSON.parse(r.body) as { code: number }).code, 4031);
        break;
      }
      served++;
    }
    assert.equal(served, 15, 'the quota of 30 serves exactly 30 over the freeze');
    assert.equal(await server.kill('SIGTERM').then((r) => r.code), 0);
  } finally {
    if (frozen) process.kill(primary, 'SIGCONT');
    await server.kill('SIGKILL');
    await db.drop();
  }
});
