// Issue 13: with ingest threads, SQLite's WAL checkpoints run on their connections, never on the
// request thread's (a checkpoint blocks the thread that runs it). The request thread's
// connection does not checkpoint after its own commits; an ingest thread's checkpoints after
// its commits and, on a timer, what the others wrote. SQLite only: PostgreSQL has no WAL of ours.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CATALOG } from '../../src/catalog/catalog.js';
import { loadConfig } from '../../src/config.js';
import { createStore } from '../../src/storage/create-store.js';
import { requestThreadCheckpoints } from '../../src/ingest/ingest-pool.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { sleep } from '../helpers/server-process.js';

const autoCheckpoint = (s: SqliteStore): number =>
  s.raw.pragma('wal_autocheckpoint', { simple: true }) as number;

describe('SQLite checkpoints', { timeout: 60_000 }, () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-ckpt-'));
    file = path.join(dir, 'test.db');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("checkpoints after a connection's own commits by default; 'none' never does", async () => {
    const own = new SqliteStore(CATALOG, { file });
    const none = new SqliteStore(CATALOG, { file, checkpoints: 'none' });
    assert.equal(autoCheckpoint(own), 10_000);
    assert.equal(autoCheckpoint(none), 0);
    await own.close();
    await none.close();
  });

  it("an 'all' connection checkpoints what another connection wrote, with no commit of its own", async () => {
    const writer = new SqliteStore(CATALOG, { file, checkpoints: 'none' });
    await writer.migrate();
    // Another connection holds the file open, so closing does not checkpoint either.
    const holder = new SqliteStore(CATALOG, { file, checkpoints: 'none' });
    const size = fs.statSync(file).size;
    writer.raw.exec('CREATE TABLE filler (x BLOB)');
    const insert = writer.raw.prepare('INSERT INTO filler VALUES (randomblob(4000))');
    for (let i = 0; i < 50; i++) insert.run();
    assert.equal(fs.statSync(file).size, size, 'the rows are in the WAL, not yet in the file');
    assert.ok(fs.statSync(`${file}-wal`).size > 50 * 4000);

    const checkpointer = new SqliteStore(CATALOG, { file, checkpoints: 'all', checkpointEveryMs: 20 });
    try {
      // Copied into the file by the timer alone (waits until it happens, no time limit asserted).
      while (fs.statSync(file).size <= size) await sleep(20);
      assert.ok(fs.statSync(file).size >= size + 50 * 4000);
    } finally {
      await checkpointer.close();
      await writer.close();
      await holder.close();
    }
  });

  it("the service's request thread leaves checkpoints to its ingest threads; without them it runs its own", async () => {
    const config = (threads: string): ReturnType<typeof loadConfig> =>
      loadConfig({ DATABASE_URL: `sqlite:${file}`, MDS_INGEST_THREADS: threads });
    assert.equal(requestThreadCheckpoints(config('2')), 'none');
    assert.equal(requestThreadCheckpoints(config('0')), 'own');
    // As main.ts opens it.
    const reader = await createStore(`sqlite:${file}`, CATALOG, {
      sqliteCheckpoints: requestThreadCheckpoints(config('1')),
    });
    assert.equal(autoCheckpoint(reader as SqliteStore), 0);
    await reader.close();
  });
});
