import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { CATALOG } from '../../src/catalog/catalog.js';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { RedisLimiter } from '../../src/access/redis-limiter.js';
import type { Limiter } from '../../src/access/limiter.js';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';
import { batchStatus, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { PG_ADMIN_URL, createTestDatabase, databaseName, postgresAvailable } from '../helpers/postgres.js';
import { REDIS_URL, redisAvailable, redisPrefix } from '../helpers/redis.js';

/**
 * Several instances on one PostgreSQL (and one Redis): the batch registry is exactly-once
 * across them, migrations can run at once, and a full snapshot is atomic for readers anywhere.
 */

const pgUp = await postgresAvailable();
const redisUp = pgUp && (await redisAvailable());

const symbols = (from: number, to: number): string[] =>
  Array.from({ length: to - from }, (_, i) => String(510000 + from + i));

describe('PostgreSQL: several instances on one database', { skip: !pgUp && 'PostgreSQL unreachable' }, () => {
  let a: Harness;
  let b: Harness;

  before(async () => {
    a = await startApp('postgres');
    b = await startApp('postgres', {}, { databaseUrl: a.databaseUrl });
  });

  after(async () => {
    await b?.close();
    await a?.close();
  });

  test('migrations run on several instances at once', async () => {
    const db = await createTestDatabase();
    const stores = [1, 2, 3, 4].map(() => new PostgresStore(CATALOG, { connectionString: db.url }));
    try {
      await Promise.all(stores.map((s) => s.migrate()));
      await Promise.all(stores.map((s) => s.migrate()));
      assert.equal(await stores[0]?.datasets.datasetVersion('etf_daily'), 0);
    } finally {
      for (const s of stores) await s.close();
      await db.drop();
    }
  });

  test('the same batch pushed to both instances at once is applied exactly once', async () => {
    let inProgress = 0;
    for (let round = 0; round < 4; round++) {
      const rows = symbols(round * 1000, round * 1000 + 1000).map((s) => etfBar(s, '2024-03-01'));
      const body = batch('etf_daily', rows, { batchId: uniqueId('twice') });
      const id = (body.meta as Json).batch_id as string;
      const answers = await Promise.all(
        [a, b, a, b, a, b].map((h) => push(h.app, body).then((r) => ({ r, body: json(r) }))),
      );
      const applied = answers.filter((x) => x.r.statusCode === 200 && x.body.status === 'accepted');
      assert.equal(applied.length, 1, 'exactly one push applies the batch');
      for (const x of answers) {
        if (x === applied[0]) continue;
        if (x.r.statusCode === 409) {
          inProgress++;
          assert.equal(x.body.code, 4091);
          assert.ok(Number(x.r.headers['retry-after']) > 0, 'a 4091 carries Retry-After');
        } else {
          assert.equal(x.r.statusCode, 200, JSON.stringify(x.body));
          assert.equal(x.body.status, 'duplicate');
          assert.equal(x.body.accepted, 1000, 'the duplicate answer repeats the original record');
        }
      }
      for (const h of [a, b]) {
        const st = json(await batchStatus(h.app, id));
        assert.equal(st.status, 'accepted');
        assert.equal(st.accepted, 1000);
      }
    }
    console.log(`# concurrent pushes answered 409/4091 (in progress): ${inProgress}`);
    const total = json(await get(b.app, '/api/v1/etf/kline?date=2024-03-01&limit=1')).meta as Json;
    assert.equal(total.total, 4000);
    assert.equal(await a.store.datasets.datasetVersion('etf_daily'), 4, 'one version bump per applied batch');
  });

  test('a batch another session is processing answers 409 / 4091 with Retry-After', async () => {
    const body = batch('etf_daily', [etfBar('511111', '2024-03-04')], { batchId: uniqueId('held') });
    const id = (body.meta as Json).batch_id as string;
    // Hold the batch's lock as a slow instance would, from another session.
    const other = new pg.Client({ connectionString: a.databaseUrl });
    await other.connect();
    try {
      await other.query('SELECT pg_advisory_lock(7169139, hashtext($1))', [id]);
      const held = await push(b.app, body);
      assert.equal(held.statusCode, 409);
      assert.equal(json(held).code, 4091);
      assert.equal(held.headers['retry-after'], '1');
      assert.equal((await batchStatus(a.app, id)).statusCode, 404, 'nothing recorded');
      await other.query('SELECT pg_advisory_unlock(7169139, hashtext($1))', [id]);
      const done = await push(a.app, body);
      assert.equal(done.statusCode, 200);
      assert.equal(json(done).status, 'accepted');
    } finally {
      await other.end();
    }
  });

  test('an all-rejected batch pushed to both at once is recorded once', async () => {
    const body = batch('etf_daily', [etfBar('512222', '2024-02-30')], { batchId: uniqueId('rej') });
    const answers = await Promise.all([a, b, a, b].map((h) => push(h.app, body)));
    const statuses = answers.map((r) => r.statusCode);
    assert.ok(statuses.includes(422), `one 422 expected: ${statuses.join(',')}`);
    for (const r of answers) {
      assert.ok(
        (r.statusCode === 422 && json(r).code === 4221) || (r.statusCode === 409 && json(r).code === 4091),
        `${r.statusCode} ${r.body}`,
      );
    }
  });

  test('a full snapshot is atomic for readers on the other instance', async () => {
    const day = '2024-04-01';
    const setOf = (k: number): string[] => (k % 2 === 0 ? symbols(0, 300) : symbols(100, 400));
    const snapshot = (k: number): Record<string, unknown> =>
      batch(
        'etf_daily',
        setOf(k).map((s) => etfBar(s, day, { close: k })),
        { snapshotType: 'full_snapshot', businessDate: day, batchId: uniqueId(`snap${k}`) },
      );
    const first = await push(a.app, snapshot(0));
    assert.equal(first.statusCode, 200);

    let writing = true;
    let reads = 0;
    const reader = (async () => {
      while (writing) {
        const r = await get(b.app, `/api/v1/etf/kline?date=${day}&source=eastmoney&limit=1000`);
        assert.equal(r.statusCode, 200);
        const body = json(r);
        const rows = body.data as Json[];
        const closes = new Set(rows.map((x) => x.close));
        assert.equal(closes.size, 1, 'every row from one snapshot');
        const k = rows[0]?.close as number;
        assert.deepEqual(rows.map((x) => x.code).sort(), setOf(k), `snapshot ${k}: exactly its rows`);
        assert.equal((body.meta as Json).total, rows.length, 'total agrees with the rows');
        reads++;
      }
    })();
    for (let k = 1; k <= 8; k++) {
      const r = await push(a.app, snapshot(k));
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(json(r).pruned, 100);
    }
    writing = false;
    await reader;
    assert.ok(reads > 0);
  });

  test(
    'instances share rate limits through one Redis',
    { skip: !redisUp && 'Redis unreachable: shared limits not tested' },
    async () => {
      // Two more instances on the same database whose static query key allows 6 requests a
      // minute, counted in one Redis namespace, as a deployment with REDIS_URL does.
      const r = redisPrefix();
      const limiters: Limiter[] = [
        new RedisLimiter({ url: REDIS_URL, prefix: r.prefix }),
        new RedisLimiter({ url: REDIS_URL, prefix: r.prefix }),
      ];
      const env = { MDS_STATIC_RATE_PER_MINUTE: '6' };
      const apps: Harness[] = [];
      try {
        for (const limiter of limiters) {
          apps.push(await startApp('postgres', env, { limiter, databaseUrl: a.databaseUrl }));
        }
        const codes: number[] = [];
        for (let i = 0; i < 8; i++) {
          const h = apps[i % 2] as Harness;
          codes.push((await get(h.app, '/api/v1/etf/kline?limit=1')).statusCode);
        }
        // At most 6 succeed across both instances; a minute turning over between requests
        // could only lower the count of refusals seen, so at least one of 8 is refused.
        assert.ok(codes.filter((c) => c === 200).length <= 6, codes.join(','));
        assert.ok(codes.includes(403), codes.join(','));
      } finally {
        for (const h of apps) await h.app.close();
        for (const h of apps) await h.store.close();
        for (const l of limiters) await l.close();
        await r.cleanup();
      }
    },
  );

  test('each instance holds its own small pool against the one server', async () => {
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    try {
      const r = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'market-data-service'",
        [databaseName(a.databaseUrl)],
      );
      assert.ok((r.rows[0] as { n: number }).n <= 20, 'at most 10 connections per instance');
    } finally {
      await admin.end();
    }
  });
});
