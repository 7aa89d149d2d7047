// Spec 4.1 / decisions.md: /health needs no key; {"status":"ok"} while the database answers, else 503.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { loadConfig } from '../../src/config.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { QUERY_KEY } from '../helpers/harness.js';

it('answers ok while the database answers, 503 "error" when it does not, and 503 to queries before it is ready', async () => {
  const store = new SqliteStore(CATALOG, { file: ':memory:' });
  await store.migrate();
  let ready = false;
  const app = await buildApp({
    config: loadConfig({ LOG_LEVEL: 'silent', MDS_QUERY_KEYS: QUERY_KEY }),
    store,
    ready: () => ready,
  });
  // Closed whatever fails: an app left open keeps the file's process alive, and the run with it.
  try {
    await answers(app, store, (v) => (ready = v));
  } finally {
    await app.close();
  }
});

async function answers(
  app: Awaited<ReturnType<typeof buildApp>>,
  store: SqliteStore,
  setReady: (v: boolean) => void,
): Promise<void> {
  const notReady = await app.inject({ method: 'GET', url: '/health' });
  assert.equal(notReady.statusCode, 503);
  assert.equal(notReady.json().status, 'error');
  const early = await app.inject({
    method: 'GET',
    url: '/api/v1/etf/kline',
    headers: { 'q-api-key': QUERY_KEY },
  });
  assert.equal(early.statusCode, 503);
  assert.equal(early.json().code, 5030);
  assert.equal(early.headers['retry-after'], '1');

  setReady(true);
  const ok = await app.inject({ method: 'GET', url: '/health' });
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(Object.keys(ok.json()).sort(), ['database_id', 'status', 'storage', 'version']);
  assert.match(ok.json().database_id, /^[0-9a-f]{16}$/);
  assert.equal(ok.json().status, 'ok');

  await store.close();
  const down = await app.inject({ method: 'GET', url: '/health' });
  assert.equal(down.statusCode, 503);
  assert.equal(down.json().status, 'error');
}
