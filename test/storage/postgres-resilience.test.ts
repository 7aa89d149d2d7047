import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { CATALOG } from '../../src/catalog/catalog.js';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { StoreUnavailableError } from '../../src/storage/store.js';
import type { QueryPlan } from '../../src/model/query-plan.js';
import { acceptedRecord, batch, etfBar, uniqueId } from '../helpers/batches.js';
import {
  INGEST_KEY,
  QUERY_KEY,
  batchStatus,
  get,
  json,
  push,
  startApp,
  type Json,
} from '../helpers/harness.js';
import {
  createTestDatabase,
  databaseName,
  pgProxy,
  postgresAvailable,
  terminateSessions,
  viaPort,
} from '../helpers/postgres.js';
import { request, sleep, spawnServer } from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';

/**
 * PostgreSQL going away and coming back: unreachable at start-up, every connection cut under
 * load (pg_terminate_backend, or a proxy that drops everything as a restart does), and bursts
 * of failing statements. Requests fail fast with 503 / 5030, nothing acknowledged is lost, and
 * the pool recovers on its own.
 */

const pgUp = await postgresAvailable();

const etf = CATALOG.byName.get('etf_daily');
if (!etf) throw new Error('etf_daily missing from the catalog');
const field = (name: string) => {
  const f = etf.fieldByName.get(name) ?? etf.rowFields.find((r) => r.name === name);
  if (!f) throw new Error(`no field ${name}`);
  return f;
};
const plan = (where: QueryPlan['where'] = []): QueryPlan => ({
  dataset: etf,
  select: etf.rowFields,
  where,
  orderBy: [{ field: field('date'), dir: 'desc' }],
  limit: 10,
  offset: 0,
});

/** Waits until `check` is true, polling; fails with `what` after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('PostgreSQL resilience', { skip: !pgUp && 'PostgreSQL unreachable' }, () => {
  test('unreachable at start-up: /health 503 while main.ts retries; down mid-run: 503, then recovery', async () => {
    const db = await createTestDatabase();
    const proxy = await pgProxy();
    const { child, output, exited } = spawnServer({
      LOG_LEVEL: 'info',
      DATABASE_URL: viaPort(db.url, proxy.port),
      MDS_INGEST_KEYS: INGEST_KEY,
      MDS_QUERY_KEYS: QUERY_KEY,
      MDS_WORKERS: '1',
    });
    try {
      await until(
        'the server to listen',
        async () => /listening at http:\/\/127\.0\.0\.1:\d+/.test(output()),
        60_000,
      );
      const port = Number(/listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output())?.[1]);
      const call = (p: string, key = QUERY_KEY) =>
        request(port, { method: 'GET', path: p, headers: { 'q-api-key': key } });

      // Nothing listens where DATABASE_URL points: the server is up but not ready.
      const health = await call('/health');
      assert.equal(health.status, 503);
      assert.equal((JSON.parse(health.body) as Json).status, 'error');
      const early = await call('/api/v1/etf/kline');
      assert.equal(early.status, 503);
      assert.equal((JSON.parse(early.body) as Json).code, 5030);
      assert.ok(early.headers['retry-after']);
      await until('a retry to be logged', async () => /database not reachable; retrying/.test(output()));

      // PostgreSQL appears: the retry loop migrates and the service becomes ready by itself.
      await proxy.start();
      // The retry back-off grows to 10 s and the migration of an empty database follows it: on
      // a loaded machine (three suites at once) that has taken more than the default 30 s.
      await until('/health 200', async () => (await call('/health')).status === 200, 90_000);
      const first = batch('etf_daily', [etfBar('510300', '2024-01-02')], { batchId: uniqueId('start') });
      assert.equal((await pushBatch(port, JSON.stringify(first))).status, 200);

      // PostgreSQL "restarts": every connection is cut and nothing answers for a while.
      await proxy.stop();
      const down = await call('/api/v1/etf/kline');
      assert.equal(down.status, 503, down.body);
      assert.equal((JSON.parse(down.body) as Json).code, 5030);
      const pushDown = await pushBatch(
        port,
        JSON.stringify(batch('etf_daily', [etfBar('510301', '2024-01-02')], { batchId: uniqueId('down') })),
      );
      assert.equal(pushDown.status, 503, pushDown.body);
      assert.equal((await call('/health')).status, 503);

      await proxy.start();
      await until('recovery', async () => (await call('/api/v1/etf/kline')).status === 200, 90_000);
      const after = JSON.parse((await call('/api/v1/etf/kline')).body) as { meta: { total: number } };
      assert.equal(after.meta.total, 1, 'the acknowledged batch survived; the refused one left nothing');
      assert.equal((await call('/health')).status, 200);
      assert.doesNotMatch(output(), /unhandled|uncaught/i);
    } finally {
      child.kill('SIGTERM');
      await exited;
      await proxy.stop();
      await db.drop();
    }
  });

  test('connections terminated under load: 503s, recovery, no acknowledged batch lost', async () => {
    const h = await startApp('postgres');
    try {
      const acknowledged = new Map<string, number>();
      const seen = { ok: 0, unavailable: 0 };
      let loading = true;
      const pusher = async (w: number): Promise<void> => {
        for (let n = 0; n < 8; n++) {
          const rows = Array.from({ length: 300 }, (_, i) =>
            etfBar(String(520000 + w * 10_000 + n * 300 + i), '2024-05-06'),
          );
          const body = batch('etf_daily', rows, { batchId: uniqueId(`load${w}`) });
          for (;;) {
            const r = await push(h.app, body);
            if (r.statusCode === 503) {
              seen.unavailable++;
              assert.equal(json(r).code, 5030);
              assert.ok(r.headers['retry-after'], 'a 503 carries Retry-After');
              await sleep(20);
              continue;
            }
            assert.equal(r.statusCode, 200, r.body);
            assert.ok(['accepted', 'duplicate'].includes(json(r).status as string));
            acknowledged.set((body.meta as Json).batch_id as string, rows.length);
            seen.ok++;
            break;
          }
        }
      };
      const reader = async (): Promise<void> => {
        while (loading) {
          const r = await get(h.app, '/api/v1/etf/kline?date=2024-05-06&limit=5');
          assert.ok([200, 503].includes(r.statusCode), `${r.statusCode} ${r.body}`);
          await sleep(5);
        }
      };
      const killer = async (): Promise<number> => {
        let killed = 0;
        for (let i = 0; i < 10; i++) {
          await sleep(40);
          killed += await terminateSessions(databaseName(h.databaseUrl));
        }
        return killed;
      };
      const reading = reader();
      const [killed] = await Promise.all([killer(), pusher(0), pusher(1), pusher(2)]);
      loading = false;
      await reading;
      console.log(
        `# terminated ${killed} sessions; ${seen.ok} pushes acknowledged, ${seen.unavailable} answered 503`,
      );
      assert.ok(killed > 0, 'sessions were terminated during the load');

      // Recovered, and every acknowledged batch is there with all its rows.
      assert.equal((await get(h.app, '/health', null)).statusCode, 200);
      for (const [id, count] of acknowledged) {
        const st = json(await batchStatus(h.app, id));
        assert.equal(st.status, 'accepted', id);
        assert.equal(st.accepted, count);
      }
      const total = (json(await get(h.app, '/api/v1/etf/kline?date=2024-05-06&limit=1')).meta as Json).total;
      assert.equal(total, 24 * 300);
    } finally {
      await h.close();
    }
  });

  test('bursts of failing statements never leave the pool stuck', async () => {
    const db = await createTestDatabase();
    const proxy = await pgProxy();
    await proxy.start();
    const store = new PostgresStore(CATALOG, {
      connectionString: viaPort(db.url, proxy.port),
      max: 3,
      connectionTimeoutMs: 3000,
      statementTimeoutMs: 300,
    });
    const admin = new pg.Client({ connectionString: db.url });
    admin.on('error', () => {}); // terminated on purpose in step 3
    let adminAlive = true;
    const settle = <T>(ps: Promise<T>[]) => Promise.allSettled(ps);
    const healthy = async (): Promise<void> => {
      const r = await store.datasets.query(plan(), true);
      assert.equal(r.total, 1);
      const stats = store.poolStats;
      assert.equal(stats.waiting, 0, 'nobody left waiting for a connection');
      assert.ok(stats.total <= 3);
    };
    // Schema and seed row through a store with the default statement timeout: on a busy machine
    // a first batch (with its revisions) can take longer than this test's 300 ms on purpose.
    const seeder = new PostgresStore(CATALOG, { connectionString: db.url });
    try {
      await seeder.migrate();
      await seeder.batches.applyBatch(
        {
          batchId: 'seed',
          dataset: etf,
          rows: [{ ...etfBar('510300', '2024-01-02'), updated_at: '2024-01-02T10:00:00.000Z' }],
          prune: null,
          now: '2024-01-02T10:00:00.000Z',
        },
        (o) => acceptedRecord(o, { batch_id: 'seed' }),
      );
      await seeder.close();
      await healthy();

      // 1. Statements the database refuses (a bad value for a number column): errors, not 503s,
      //    and every connection goes back to the pool.
      const bad = await settle(
        Array.from({ length: 200 }, () =>
          store.datasets.query(plan([{ field: field('close'), op: 'eq', value: 'x' }]), true),
        ),
      );
      // Each fails with the database's own error; on a very busy machine a few may instead wait
      // longer than connectionTimeoutMs for a connection, which is a 503, never a hang.
      const reasons = bad.map((r) => (r.status === 'rejected' ? (r.reason as Error) : null));
      assert.ok(reasons.every((e) => e !== null));
      assert.ok(reasons.some((e) => !(e instanceof StoreUnavailableError)));
      for (const e of reasons) {
        if (e instanceof StoreUnavailableError)
          assert.match(e.message, /timeout exceeded when trying to connect/);
      }
      await healthy();

      // 2. Statements stuck behind a lock: statement_timeout or the pool's wait ends each one.
      await admin.connect();
      await admin.query('BEGIN');
      await admin.query('LOCK TABLE etf_daily IN ACCESS EXCLUSIVE MODE');
      const stuck = await settle(Array.from({ length: 30 }, () => store.datasets.query(plan(), true)));
      assert.ok(stuck.every((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError));
      await admin.query('ROLLBACK');
      await healthy();

      // 3. Every session terminated while statements wait on the lock.
      await admin.query('BEGIN');
      await admin.query('LOCK TABLE etf_daily IN ACCESS EXCLUSIVE MODE');
      const waiting = settle(Array.from({ length: 20 }, () => store.datasets.query(plan(), true)));
      // Terminated only once statements wait on the lock (pg_locks is live, unlike
      // pg_stat_activity inside a transaction): a fixed pause raced the pool's reconnections.
      for (let i = 0; ; i++) {
        const r = await admin.query(
          `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'etf_daily'::regclass`,
        );
        if ((r.rows[0] as { n: number }).n > 0) break;
        assert.ok(i < 600, 'no statement came to wait on the lock');
        await sleep(50);
      }
      await terminateSessions(databaseName(db.url)).catch(() => 0);
      const terminated = await waiting;
      // The lock holder is terminated too, so statements still queued for a connection succeed.
      const failed = terminated.filter((r) => r.status === 'rejected');
      assert.ok(failed.length > 0);
      assert.ok(failed.every((r) => r.reason instanceof StoreUnavailableError));
      adminAlive = false;
      await healthy();

      // 4. The server gone: every call fails fast with 503, then the pool reconnects by itself.
      await proxy.stop();
      const gone = await settle(Array.from({ length: 100 }, () => store.ping()));
      assert.ok(gone.every((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError));
      await proxy.start();
      await healthy();
    } finally {
      // end() of a client whose session was terminated never settles (pg), so only when alive.
      if (adminAlive) await admin.end().catch(() => {});
      await store.close();
      await proxy.stop();
      await db.drop();
    }
  });
});
