// Connection settings from the environment reach the stores (docs/reliability.md "Settings").
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOG } from '../../src/catalog/catalog.js';
import { loadConfig } from '../../src/config.js';
import { createStore } from '../../src/storage/create-store.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { StoreUnavailableError, type Store } from '../../src/storage/store.js';
import Database from 'better-sqlite3';
import { backends, freshDatabaseUrl } from '../helpers/harness.js';
import pg from 'pg';

it('MDS_SQLITE_BUSY_TIMEOUT_MS sets the SQLite lock wait, waited for without blocking the thread', async () => {
  const db = await freshDatabaseUrl('sqlite');
  const file = db.url.slice('sqlite:'.length);
  const write = (s: Store) =>
    s.keys.recordUsage([{ keyId: 'k', hour: '2024-01-02T03', count: 1, lastUsed: '2024-01-02T03:00:00Z' }]);
  const open = async (ms: string) => {
    const config = loadConfig({ DATABASE_URL: db.url, MDS_SQLITE_BUSY_TIMEOUT_MS: ms });
    const store = await createStore(config.DATABASE_URL, CATALOG, config);
    assert.ok(store instanceof SqliteStore);
    // SQLite's own busy wait would block the thread: it is off, the store waits on a timer.
    assert.equal(store.raw.pragma('busy_timeout', { simple: true }), 0);
    return store;
  };
  const waiting = await open('60000');
  await waiting.migrate();
  const impatient = await open('0');
  const other = new Database(file);
  other.prepare('BEGIN IMMEDIATE').run();
  // No wait allowed: refused at once while another connection writes.
  await assert.rejects(write(impatient), StoreUnavailableError);
  // A wait allowed: the write waits, the thread does not (this timer fires meanwhile).
  const pending = write(waiting);
  let ticked = false;
  await new Promise<void>((resolve) => setTimeout(() => resolve(void (ticked = true)), 50));
  assert.ok(ticked);
  other.prepare('ROLLBACK').run();
  await pending;
  other.close();
  await waiting.close();
  await impatient.close();
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
