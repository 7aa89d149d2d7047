import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';
import { ADMIN_TOKEN, backends, freshDatabaseUrl } from '../helpers/harness.js';
import { request, sleep, startServer, type ServerProcess } from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';

/**
 * Issue 24 item 7a: the loser of two concurrent reverts of one batch gets the same answer on
 * both backends: 200, "nothing to revert", zero counts (the batch is reverted, as it asked).
 * Two server processes share one database; the first holds its revert inside the transaction
 * (test-only hook) while the second asks for the same revert, then lets it commit. Before, the
 * loser got that answer on SQLite but 409 / 4092 listing every row as a conflict on PostgreSQL.
 */

interface RevertAnswer {
  status: number;
  body: { code: number; message: string; data?: { restored: number; updated: number; deleted: number } };
}

async function revert(port: number, batchId: string): Promise<RevertAnswer> {
  const r = await request(port, {
    method: 'POST',
    path: `/admin/api/batches/${encodeURIComponent(batchId)}/revert`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return { status: r.status, body: JSON.parse(r.body) as RevertAnswer['body'] };
}

for (const backend of await backends()) {
  describe(`concurrent reverts of one batch (${backend})`, { timeout: 180_000 }, () => {
    let db: { url: string; drop(): Promise<void> };
    let first: ServerProcess;
    let second: ServerProcess;
    let dir: string;
    let hold: string;
    before(async () => {
      db = await freshDatabaseUrl(backend, { migrated: true });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-revert-race-'));
      hold = path.join(dir, 'hold');
      first = await startServer({
        databaseUrl: db.url,
        env: { MDS_TEST_HOLD_FILE: hold, LOG_LEVEL: 'warn' },
        hooks: true,
      });
      second = await startServer({ databaseUrl: db.url, env: { LOG_LEVEL: 'warn' } });
    });
    after(async () => {
      fs.rmSync(hold, { force: true });
      await first?.kill('SIGKILL');
      await second?.kill('SIGKILL');
      await db?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('the loser is answered 200 "nothing to revert", not a conflict on every row', async () => {
      const id = uniqueId('race');
      const rows = Array.from({ length: 50 }, (_, i) => etfBar(String(510000 + i), '2024-03-01'));
      const pushed = await pushBatch(first.port, JSON.stringify(batch('etf_daily', rows, { batchId: id })));
      assert.equal(pushed.status, 200, pushed.body);

      fs.writeFileSync(hold, '');
      const winner = revert(first.port, id);
      for (let i = 0; !fs.existsSync(`${hold}.held`); i++) {
        assert.ok(i < 600, 'the first revert reached its commit');
        await sleep(50);
      }
      // The second asks while the first holds the dataset's lock; then the first commits.
      const loser = revert(second.port, id);
      await sleep(1000);
      fs.rmSync(hold);
      const [w, l] = await Promise.all([winner, loser]);

      assert.equal(w.status, 200, JSON.stringify(w.body));
      assert.equal(w.body.message, 'reverted');
      assert.equal(w.body.data?.deleted, 50);
      assert.equal(l.status, 200, JSON.stringify(l.body).slice(0, 500));
      assert.equal(l.body.message, 'nothing to revert');
      assert.deepEqual(
        { restored: l.body.data?.restored, updated: l.body.data?.updated, deleted: l.body.data?.deleted },
        { restored: 0, updated: 0, deleted: 0 },
      );
      // And once more, afterwards: the same answer.
      const third = await revert(second.port, id);
      assert.equal(third.status, 200);
      assert.equal(third.body.message, 'nothing to revert');
    });
  });
}
