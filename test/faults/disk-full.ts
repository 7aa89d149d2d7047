import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';
import { PG_ADMIN_URL, postgresAvailable } from '../helpers/postgres.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';

/**
 * Issue 24 item 7c: a full disk is named in the answer, as reliability.md promises, on the
 * default start-up (batches written by ingest threads). SQLite's database on a small tmpfs of
 * its own, filled up by the test: the batch is 503 / 5030 `database unavailable (SQLITE_FULL):
 * the database or its disk is full`, nothing is written, and once there is room again the same
 * batch is accepted. Before, the condition was lost on its way back from the ingest thread and
 * the answer said `database unavailable (unavailable)`. Mounting needs root: skipped otherwise.
 */

const canMount = process.getuid?.() === 0 && process.platform === 'linux';

function mountTmpfs(dir: string, size: string): boolean {
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status === 0;
}

/** Writes `file` until the filesystem has no room left. */
function fill(file: string): void {
  const fd = fs.openSync(file, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A batch on a full disk: 503 / 5030 with `message`, nothing written; once `filler` is removed
 * the same batch is accepted.
 */
async function fullDisk(server: ServerProcess, filler: string, message: string): Promise<void> {
  const small = JSON.stringify(
    batch('etf_daily', [etfBar('510300', '2024-01-02')], { batchId: uniqueId('f') }),
  );
  assert.equal((await pushBatch(server.port, small)).status, 200);
  fill(filler);
  const big = bigEtfBatch(20_000, 'full', uniqueId('full'));
  try {
    const refused = await pushBatch(server.port, big.body);
    assert.equal(refused.status, 503, refused.body);
    assert.equal(refused.headers['retry-after'], '1');
    const body = JSON.parse(refused.body) as { code: number; message: string };
    assert.equal(body.code, 5030);
    assert.equal(body.message, message);
  } finally {
    fs.rmSync(filler);
  }
  const retry = await pushBatch(server.port, big.body);
  assert.equal(retry.status, 200, retry.body);
  assert.equal((JSON.parse(retry.body) as { status: string }).status, 'accepted');
}

describe(
  'a full disk (sqlite on a small tmpfs)',
  { skip: !canMount && 'needs root to mount a tmpfs' },
  () => {
    let dir: string;
    let server: ServerProcess;
    let mounted = false;
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-full-'));
      mounted = mountTmpfs(dir, '16m');
      assert.ok(mounted, 'tmpfs mounted');
      server = await startServer({ databaseUrl: `sqlite:${path.join(dir, 'db.sqlite')}` });
    });
    after(async () => {
      await server?.kill('SIGKILL');
      if (mounted) spawnSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('the batch is 503 naming the full disk, nothing is written, and the retry is accepted', () =>
      fullDisk(
        server,
        path.join(dir, 'filler'),
        'database unavailable (SQLITE_FULL): the database or its disk is full',
      ));
  },
);

/**
 * PostgreSQL: the test database lives in a tablespace on a small tmpfs (its WAL stays on the
 * server's own disk, so the server keeps running): extending a table fails with 53100
 * disk_full.
 */
describe(
  'a full disk (postgresql, a tablespace on a small tmpfs)',
  {
    skip:
      (!canMount && 'needs root to mount a tmpfs') ||
      (!(await postgresAvailable()) && 'PostgreSQL unreachable'),
  },
  () => {
    let dir: string;
    let server: ServerProcess;
    let mounted = false;
    const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
    const name = `mds_full_${suffix}`;
    const space = `mds_tiny_${suffix}`;
    const admin = async (statement: string): Promise<void> => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      try {
        await c.query(statement);
      } finally {
        await c.end();
      }
    };
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-full-pg-'));
      mounted = mountTmpfs(dir, '96m');
      assert.ok(mounted, 'tmpfs mounted');
      // The tablespace's directory belongs to the server's user.
      const id = (flag: string): number =>
        Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
      fs.chownSync(dir, id('-u'), id('-g'));
      await admin(`CREATE TABLESPACE ${space} LOCATION '${dir}'`);
      await admin(`CREATE DATABASE ${name} TABLESPACE ${space}`);
      const url = new URL(PG_ADMIN_URL);
      url.pathname = `/${name}`;
      server = await startServer({ databaseUrl: url.toString() });
    });
    after(async () => {
      await server?.kill('SIGKILL');
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin(`DROP TABLESPACE IF EXISTS ${space}`).catch(() => {});
      if (mounted) spawnSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('the batch is 503 naming the full disk (53100), and the retry is accepted', () =>
      fullDisk(
        server,
        path.join(dir, 'filler'),
        "database unavailable (53100): the database server's disk is full",
      ));
  },
);
