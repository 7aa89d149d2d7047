// Issue 25: SQLite's read gate (src/storage/sqlite/read-gate.ts, docs/point-in-time.md "When a
// change is known"). While a transaction that publishes a change holds it, a read waits (the
// request thread on a timer; a reader process waits in place, as tested by the server tests) and then sees the change; past the busy
// timeout it is a 503; a process killed while holding the gate (a kernel-released fcntl lock)
// leaves nothing shut. SQLite only: PostgreSQL has no gate.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteDb } from '../../src/storage/sqlite/sqlite-db.js';
import { ReadGate } from '../../src/storage/sqlite/read-gate.js';
import { StoreUnavailableError } from '../../src/storage/store.js';
import { sql } from '../../src/storage/sql.js';
import { now } from '../../src/storage/step.js';

describe('SQLite read gate', { timeout: 60_000 }, () => {
  let dir: string;
  let file: string;
  let writer: SqliteDb;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-gate-'));
    file = path.join(dir, 'test.db');
    writer = new SqliteDb({ file });
    await writer.run(sql`CREATE TABLE t (v INTEGER)`);
    await writer.run(sql`INSERT INTO t (v) VALUES (1)`);
  });
  after(async () => {
    await writer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a read arriving while a change is published waits for its COMMIT and sees it', async () => {
    const reader = new SqliteDb({ file, busyTimeoutMs: 5000, readOnly: true });
    const gate = new ReadGate(file);
    try {
      gate.hold();
      // Committed by another connection while the gate is held, as a publishing transaction's
      // rows are: a read passing the gate now would see 2, but must wait.
      await writer.run(sql`UPDATE t SET v = 2`);
      let answered = false;
      const read = reader.values(sql`SELECT v FROM t`).then((v) => {
        answered = true;
        return v;
      });
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(answered, false, 'the read went through a held gate');
      gate.release();
      assert.deepEqual(await read, [2]);
    } finally {
      gate.release();
      gate.close();
      await reader.close();
    }
  });

  it('past the busy timeout a read is 503; a writer holds the gate only for its transaction', async () => {
    const reader = new SqliteDb({ file, busyTimeoutMs: 30, readOnly: true });
    const gate = new ReadGate(file);
    try {
      gate.hold();
      await assert.rejects(reader.values(sql`SELECT v FROM t`), StoreUnavailableError);
      assert.throws(() => reader.readCompiled('values', 'SELECT v FROM t', []), StoreUnavailableError);
      gate.release();
      // A transaction that holds reads back lets them through once it has ended, even when it fails.
      await assert.rejects(
        writer.transaction(function* (tx) {
          yield* tx.holdReads();
          yield* now(undefined);
          throw new Error('stop');
        }),
        /stop/,
      );
      assert.deepEqual(await reader.values(sql`SELECT count(*) FROM t`), [1]);
    } finally {
      gate.release();
      gate.close();
      await reader.close();
    }
  });

  it('a process killed while holding the gate leaves it open', async () => {
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const D = require('better-sqlite3'); const g = new D(${JSON.stringify(`${file}-gate`)});
         g.prepare('BEGIN EXCLUSIVE').run(); process.stdout.write('held\\n'); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => d.includes('held') && resolve()),
    );
    const reader = new SqliteDb({ file, busyTimeoutMs: 30, readOnly: true });
    try {
      await assert.rejects(reader.values(sql`SELECT v FROM t`), StoreUnavailableError);
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      assert.deepEqual(await reader.values(sql`SELECT v FROM t`), [2]);
    } finally {
      child.kill('SIGKILL');
      await reader.close();
    }
  });
});
