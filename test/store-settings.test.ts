// Connection settings from the environment reach the stores (docs/reliability.md "Settings").
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOG } from '../src/catalog/catalog.js';
import { loadConfig } from '../src/config.js';
import { createStore } from '../src/storage/create-store.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { StoreUnavailableError } from '../src/storage/store.js';
import { backends, freshDatabaseUrl } from './helpers/harness.js';
import pg from 'pg';

it('MDS_SQLITE_BUSY_TIMEOUT_MS sets the SQLite lock wait', async () => {
  const db = await freshDatabaseUrl('sqlite');
  const config = loadConfig({ DATABASE_URL: db.url, MDS_SQLITE_BUSY_TIMEOUT_MS: '250' });
  const store = await createStore(config.DATABASE_URL, CATALOG, config);
  assert.ok(store instanceof SqliteStore);
  assert.equal(store.raw.pragma('busy_timeout', { simple: true }), 250);
  await store.close();
  await db.drop();
});

it('refuses settings that are not numbers, naming the variable', () => {
  assert.throws(() => loadConfig({ MDS_PG_POOL_SIZE: 'many' }), /MDS_PG_POOL_SIZE/);
  assert.throws(() => loadConfig({ MDS_SQLITE_BUSY_TIMEOUT_MS: '-1' }), /MDS_SQLITE_BUSY_TIMEOUT_MS/);
});

if ((await backends()).includes('postgres')) {
  // Without the setting a lock wait would last the default 30 s: the test's own timeout catches that.
  it(
    'MDS_PG_STATEMENT_TIMEOUT_MS bounds a PostgreSQL lock wait, answered as unavailable',
    { timeout: 15_000 },
    async () => {
      const db = await freshDatabaseUrl('postgres');
      const config = loadConfig({
        DATABASE_URL: db.url,
        MDS_PG_STATEMENT_TIMEOUT_MS: '500',
        MDS_PG_POOL_SIZE: '2',
      });
      const store = await createStore(config.DATABASE_URL, CATALOG, config);
      await store.migrate();
      const locker = new pg.Client({ connectionString: db.url });
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE mds_batches IN ACCESS EXCLUSIVE MODE');
      await assert.rejects(store.batches.getBatch('any'), StoreUnavailableError);
      await locker.query('ROLLBACK');
      await locker.end();
      assert.equal(await store.batches.getBatch('any'), null, 'answers again once the lock is gone');
      await store.close();
      await db.drop();
    },
  );
}
