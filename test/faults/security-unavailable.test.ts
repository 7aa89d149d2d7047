// Issue 14 item 7: a 503 names only the database condition (an SQLSTATE, an error code), never
// the database's address, file or the driver's text, to clients with or without a valid key.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { loadConfig } from '../../src/config.js';
import { createStore } from '../../src/storage/create-store.js';
import { generateKey } from '../../src/access/api-key-format.js';
import { freshDatabaseUrl, INGEST_KEY, QUERY_KEY } from '../helpers/harness.js';
import { batch, etfBar } from '../helpers/batches.js';
import { freePort } from '../helpers/server-process.js';

/** What a client may read in a 503: the condition as a code, nothing else. */
function assertOpaque(r: LightMyRequestResponse, forbidden: string[]): void {
  assert.equal(r.statusCode, 503, r.body);
  const body = r.json() as { code: number; message: string };
  assert.equal(body.code, 5030);
  assert.match(body.message, /^database unavailable \([A-Za-z0-9_]+\)$/, body.message);
  for (const f of forbidden) assert.ok(!r.body.includes(f), `${JSON.stringify(f)} in ${r.body}`);
}

const push = (key: string) => ({
  method: 'POST' as const,
  url: '/api/v1/upstream/ingest/batches',
  headers: { 'content-type': 'application/json', 'up-api-key': key },
  payload: JSON.stringify(batch('etf_daily', [etfBar('510300', '2024-01-02')])),
});

describe('503 answers hide the database', { timeout: 60_000 }, () => {
  it('PostgreSQL refusing connections: no address, port or driver text, with or without a key', async () => {
    const port = await freePort();
    const url = `postgres://postgres@127.0.0.1:${port}/mds_nowhere`;
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATABASE_URL: url,
      MDS_QUERY_KEYS: QUERY_KEY,
      MDS_INGEST_KEYS: INGEST_KEY,
    });
    const store = await createStore(url, CATALOG, config);
    const app = await buildApp({ config, store });
    try {
      const forbidden = ['127.0.0.1', String(port), 'mds_nowhere', 'connect ', 'postgres'];
      const q = (key: string) =>
        app.inject({ method: 'GET', url: '/api/v1/etf/kline', headers: { 'q-api-key': key } });
      assertOpaque(await q(QUERY_KEY), forbidden);
      // A well-formed managed key nobody issued: its lookup needs the database.
      assertOpaque(await q(generateKey('query')), forbidden);
      assertOpaque(await app.inject(push(INGEST_KEY)), forbidden);
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('SQLite locked by another process: no file path or driver text', async () => {
    const db = await freshDatabaseUrl('sqlite');
    const file = db.url.slice('sqlite:'.length);
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATABASE_URL: db.url,
      MDS_INGEST_KEYS: INGEST_KEY,
      MDS_SQLITE_BUSY_TIMEOUT_MS: '50',
    });
    const store = await createStore(db.url, CATALOG, config);
    await store.migrate();
    const app = await buildApp({ config, store });
    const other = new Database(file);
    try {
      other.prepare('BEGIN IMMEDIATE').run();
      assertOpaque(await app.inject(push(INGEST_KEY)), [file, 'locked']);
    } finally {
      other.prepare('ROLLBACK').run();
      other.close();
      await app.close();
      await store.close();
      await db.drop();
    }
  });
});
