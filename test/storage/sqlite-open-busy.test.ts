// A SQLite file another process holds for a moment when the service opens it: the last
// connection of a server that has just stopped holds it exclusively while it cleans up its WAL,
// and SQLite answers SQLITE_BUSY for that without waiting (sqlite.org/wal.html). A server started
// right after another stopped failed to start ("database is locked"); the open now waits for up
// to its busy timeout. Held here by another process in exclusive locking mode, which SQLite
// answers the same way. SQLite only: PostgreSQL has no such file.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteDb } from '../../src/storage/sqlite/sqlite-db.js';
import { ROOT } from '../helpers/repo-root.js';

/** Another process holding `file` exclusively for `ms`; resolves once it does. */
async function holder(file: string, ms: number): Promise<ChildProcess> {
  const code = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(file)});
    db.pragma('journal_mode = WAL');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS t (x); INSERT INTO t VALUES (1)');
    process.stdout.write('held\\n');
    setTimeout(() => { db.close(); process.exit(0); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', code], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      if (c.toString().includes('held')) resolve();
    });
    child.once('exit', (status) => reject(new Error(`the holder exited (${status}) before holding`)));
  });
  return child;
}

const exited = (c: ChildProcess): Promise<void> =>
  c.exitCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', () => r()));

describe('SQLite: a file held by another process at open', { timeout: 60_000 }, () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-open-busy-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is waited for, and opened once released', async () => {
    const file = path.join(dir, 'released.db');
    const child = await holder(file, 400);
    const t = Date.now();
    const db = new SqliteDb({ file, busyTimeoutMs: 10_000 });
    const waited = Date.now() - t;
    await db.close();
    await exited(child);
    // Opened only once the holder let go (it held the file for 400 ms from before the open).
    assert.ok(waited >= 100, `opened after ${waited} ms, while the file was held`);
  });

  it('held past the busy timeout: the open fails with SQLITE_BUSY, after waiting for it', async () => {
    const file = path.join(dir, 'held.db');
    const child = await holder(file, 5_000);
    const t = Date.now();
    assert.throws(
      () => new SqliteDb({ file, busyTimeoutMs: 300 }),
      (err: { code?: string }) => err.code === 'SQLITE_BUSY',
    );
    const waited = Date.now() - t;
    assert.ok(waited >= 300, `failed after ${waited} ms`);
    child.kill();
    await exited(child);
  });
});
