// Issue 13: a batch is processed off the thread that answers requests. The real server holds a
// batch inside its write transaction (test-only hook, test/helpers/ingest-hooks.mjs, in the
// ingest worker thread); meanwhile /health, a query and the batch's status are answered. Then
// the batch is released and committed whole. No timing assertions: while the batch is held,
// every answer proves the request thread was free. On every backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_TOKEN, backends, freshDatabaseUrl, QUERY_KEY } from '../helpers/harness.js';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { uniqueId } from '../helpers/batches.js';
import { request, sleep, startServer, type ServerProcess } from '../helpers/server-process.js';
import { batchState, pushBatch, rowCount } from '../helpers/server-calls.js';

const ROWS = 20_000;

async function until(cond: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !cond(); await sleep(20)) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
  }
}

for (const backend of await backends()) {
  describe(`ingest off the request thread (${backend})`, { timeout: 300_000 }, () => {
    let db: { url: string; drop(): Promise<void> };
    let server: ServerProcess;
    let dir: string;
    let hold: string;
    before(async () => {
      db = await freshDatabaseUrl(backend, { migrated: true });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-hold-'));
      hold = path.join(dir, 'hold');
      server = await startServer({ databaseUrl: db.url, env: { MDS_TEST_HOLD_FILE: hold }, hooks: true });
    });
    after(async () => {
      fs.rmSync(hold, { force: true });
      await server.kill('SIGTERM');
      await db.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('answers /health, a query and the batch status while a batch is held before commit', async () => {
      const source = 'held';
      const batchId = uniqueId('held');
      const { body } = bigEtfBatch(ROWS, source, batchId);
      fs.writeFileSync(hold, '');
      const answer = pushBatch(server.port, body);
      // Its content, not only the file: the hook creates the file, then writes the batch id.
      await until(
        () => fs.existsSync(`${hold}.held`) && fs.readFileSync(`${hold}.held`, 'utf8') !== '',
        'the batch reached the hold',
      );
      assert.equal(fs.readFileSync(`${hold}.held`, 'utf8'), batchId);

      // The batch sits inside its transaction, every row written: the request thread is free.
      const health = await request(server.port, { method: 'GET', path: '/health' });
      assert.equal(health.status, 200, health.body);
      assert.equal((JSON.parse(health.body) as { status: string }).status, 'ok');
      const page = await request(server.port, {
        method: 'GET',
        path: '/api/v1/etf/kline?limit=5',
        headers: { 'q-api-key': QUERY_KEY },
      });
      assert.equal(page.status, 200, page.body);
      assert.equal(await rowCount(server.port, source), 0, 'nothing of the batch is visible before commit');
      assert.equal((await batchState(server.port, batchId)).status, 404);
      assert.ok(fs.existsSync(`${hold}.held`), 'still held while all of this was answered');

      fs.rmSync(hold);
      const res = await answer;
      assert.equal(res.status, 200, res.body.slice(0, 300));
      assert.equal((JSON.parse(res.body) as { status: string }).status, 'accepted');
      assert.equal(await rowCount(server.port, source), ROWS);
      const state = await batchState(server.port, batchId);
      assert.deepEqual([state.batchStatus, state.accepted], ['accepted', ROWS]);
      // The coverage recount runs on an ingest thread too (queued behind a held batch, so asked here).
      const coverage = await request(server.port, {
        method: 'GET',
        path: '/admin/api/coverage',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(coverage.status, 200, coverage.body);
      const etf = (JSON.parse(coverage.body) as { data: { dataset: string; rows: number }[] }).data.find(
        (c) => c.dataset === 'etf_daily',
      );
      assert.equal(etf?.rows, ROWS);
    });
  });
}
