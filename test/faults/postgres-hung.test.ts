import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { batch, etfBar } from '../helpers/batches.js';
import { batchStatus, get, json, push, startApp, type Harness } from '../helpers/harness.js';
import { postgresAvailable } from '../helpers/postgres.js';
import { privatePostgres, privatePostgresAvailable, type PrivateServer } from '../helpers/private-servers.js';
import { sleep } from '../helpers/server-process.js';

/**
 * A PostgreSQL that stops answering without closing its connections (SIGSTOP of every server
 * process: a hung host, a network partition). Before the fix every request and /health waited
 * for the whole outage; now each database call is bounded on the client side (query, connect
 * and pool-wait timeouts), so requests answer 503 / 5030 while the server is frozen and succeed
 * again once it runs. A cluster of the test's own, on its own port.
 */

const runnable = (await postgresAvailable()) && privatePostgresAvailable();

/**
 * A private cluster and an app on it with `env`, set up before the suite's tests and removed
 * after; both read through getters (they exist once `before` has run).
 */
function frozenLater(env: Record<string, string>): { server: PrivateServer; h: Harness } {
  let server: PrivateServer | undefined;
  let h: Harness | undefined;
  before(async () => {
    server = await privatePostgres();
    h = await startApp('postgres', env, { databaseUrl: server.url });
  });
  after(async () => {
    server?.thaw();
    await h?.close();
    await server?.remove();
  });
  return {
    get server(): PrivateServer {
      return server as PrivateServer;
    },
    get h(): Harness {
      return h as Harness;
    },
  };
}

describe(
  'a hung PostgreSQL',
  { skip: !runnable && 'PostgreSQL binaries unavailable', timeout: 120_000 },
  () => {
    const setup = frozenLater({
      MDS_PG_POOL_SIZE: '3',
      MDS_PG_CONNECT_TIMEOUT_MS: '1000',
      MDS_PG_STATEMENT_TIMEOUT_MS: '2000',
      MDS_PG_QUERY_TIMEOUT_MS: '1000',
    });

    test('requests, ingest and /health answer 503 while it is frozen, and recover after', async () => {
      const { server, h } = setup;
      const first = await push(
        h.app,
        batch('etf_daily', [etfBar('510300', '2024-01-02')], { batchId: 'hung-1' }),
      );
      assert.equal(first.statusCode, 200, first.body);
      assert.equal((await get(h.app, '/api/v1/etf/kline?code=510300')).statusCode, 200);

      server.freeze();
      try {
        // More requests than pooled connections, all at once: each answer comes while frozen.
        const answers = await Promise.all([
          h.app.inject({ method: 'GET', url: '/health' }),
          ...Array.from({ length: 5 }, (_, i) => get(h.app, `/api/v1/etf/kline?code=51030${i}`)),
          push(h.app, batch('etf_daily', [etfBar('510301', '2024-01-02')], { batchId: 'hung-2' })),
          batchStatus(h.app, 'hung-1'),
        ]);
        for (const a of answers) {
          assert.equal(a.statusCode, 503, a.body);
          const body = json(a);
          if ('code' in body) assert.equal(body.code, 5030);
          else assert.equal(body.status, 'error');
        }
        // A second round, once the timed-out connections were thrown away: still bounded.
        const again = await h.app.inject({ method: 'GET', url: '/health' });
        assert.equal(again.statusCode, 503);
      } finally {
        server.thaw();
      }

      for (let i = 0; ; i++) {
        const health = await h.app.inject({ method: 'GET', url: '/health' });
        if (health.statusCode === 200) break;
        assert.ok(i < 100, 'healthy again after SIGCONT');
        await sleep(100);
      }
      const retry = await push(
        h.app,
        batch('etf_daily', [etfBar('510301', '2024-01-02')], { batchId: 'hung-2' }),
      );
      assert.equal(retry.statusCode, 200, retry.body);
      const rows = await get(h.app, '/api/v1/etf/kline?code=510301');
      assert.equal(rows.statusCode, 200);
      assert.equal((json(rows).data as unknown[]).length, 1);
    });
  },
);

/**
 * A page's statement sent to a server that then answers nothing: answered 503 / 5030 by
 * MDS_PG_QUERY_TIMEOUT_MS (two liveness checks missed, each a third of it), not left to the
 * query deadline's 504 / 5040 ("narrow your request", which cannot help). Before: the checks came
 * every MDS_PG_QUERY_TIMEOUT_MS, each waiting up to the ping's bound, so with the defaults (10 s,
 * 30 s) the deadline always came first; here, with 3 s, the 503 came after 12 s.
 */
describe(
  'a page on a connection when PostgreSQL hangs',
  { skip: !runnable && 'PostgreSQL binaries unavailable', timeout: 120_000 },
  () => {
    const QUERY_TIMEOUT_MS = 3000;
    const setup = frozenLater({
      MDS_PG_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
      MDS_QUERY_TIMEOUT_MS: '30000',
    });

    test('is answered 503 / 5030 within MDS_PG_QUERY_TIMEOUT_MS and a margin', async () => {
      const { server, h } = setup;
      const first = await push(
        h.app,
        batch('etf_daily', [etfBar('510300', '2024-01-02')], { batchId: 'hung-page' }),
      );
      assert.equal(first.statusCode, 200, first.body);
      assert.equal((await get(h.app, '/api/v1/etf/kline?code=510300')).statusCode, 200);
      server.freeze();
      try {
        const started = Date.now();
        const r = await get(h.app, '/api/v1/etf/kline?code=510300&sort=close');
        const ms = Date.now() - started;
        assert.equal(r.statusCode, 503, r.body);
        assert.equal(json(r).code, 5030);
        assert.ok(ms < 2 * QUERY_TIMEOUT_MS, `answered after ${ms} ms`);
      } finally {
        server.thaw();
      }
    });
  },
);
