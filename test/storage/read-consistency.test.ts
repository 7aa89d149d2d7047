// Issue 28: MDS-Read-After on both backends without replicas (accepted when well-formed, 400
// when not, no token handed out), and on PostgreSQL a read URL that is not a hot standby is
// never read from. The real replica is exercised by test/storage/postgres-replicas.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { createStore } from '../../src/storage/create-store.js';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import {
  backends,
  freshDatabaseUrl,
  json,
  push,
  QUERY_KEY,
  startApp,
  testConfig,
} from '../helpers/harness.js';
import { batch, etfBar } from '../helpers/batches.js';

const PATH = '/api/v1/etf/kline?code=510300';

for (const backend of await backends()) {
  describe(`MDS-Read-After without replicas (${backend})`, () => {
    it('a batch answer carries no token; a query takes a well-formed one and refuses others', async () => {
      const h = await startApp(backend);
      try {
        const pushed = await push(h.app, batch('etf_daily', [etfBar('510300', '2024-03-01')]));
        assert.equal(pushed.statusCode, 200);
        assert.equal(pushed.headers['mds-read-after'], undefined);
        const read = (token: string) =>
          h.app.inject({
            method: 'GET',
            url: PATH,
            headers: { 'q-api-key': QUERY_KEY, 'mds-read-after': token },
          });
        const ok = await read('0/3000148');
        assert.equal(ok.statusCode, 200);
        assert.equal((json(ok).data as unknown[]).length, 1);
        for (const bad of ['latest', '0/', '1/2/3', 'G/1']) {
          const r = await read(bad);
          assert.equal(r.statusCode, 400, bad);
          assert.equal(json(r).code, 4001);
        }
      } finally {
        await h.close();
      }
    });
  });
}

if ((await backends()).includes('postgres')) {
  describe('a read URL that is not a hot standby (postgres)', () => {
    it('is not read from; the batch answer carries the primary position as its token', async () => {
      const db = await freshDatabaseUrl('postgres', { migrated: true });
      const config = testConfig(db.url);
      const store = await createStore(db.url, CATALOG, {
        ...config,
        replicas: { urls: [db.url], maxLagMs: 5000, checkMs: 50, readAfterWaitMs: 50 },
      });
      try {
        await store.migrate();
        assert.ok(store instanceof PostgresStore);
        await store.checkReplicas();
        const app = await buildApp({ config, store });
        try {
          const pushed = await push(app, batch('etf_daily', [etfBar('510300', '2024-03-01')]));
          assert.equal(pushed.statusCode, 200);
          const token = String(pushed.headers['mds-read-after']);
          assert.match(token, /^[0-9A-F]+\/[0-9A-F]+$/);
          const r = await app.inject({
            method: 'GET',
            url: PATH,
            headers: { 'q-api-key': QUERY_KEY, 'mds-read-after': token },
          });
          assert.equal(r.statusCode, 200);
          const stats = store.databaseStats();
          assert.equal(stats.replicas[0]?.usable, false, 'not in recovery: never used');
          assert.equal(stats.replicas[0]?.reads, 0);
          assert.ok(stats.primary.reads > 0);
        } finally {
          await app.close();
        }
      } finally {
        await store.close();
        await db.drop();
      }
    });
  });
}
