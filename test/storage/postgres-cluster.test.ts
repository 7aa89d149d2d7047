import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';
import { INGEST_KEY, QUERY_KEY, type Json } from '../helpers/harness.js';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.js';
import { request, sleep, spawnServer } from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';

/**
 * Cluster mode (MDS_WORKERS): one port, several worker processes on one PostgreSQL. The same
 * batch pushed many times at once is applied once; a killed worker is replaced; SIGTERM stops
 * the whole group.
 */

const pgUp = await postgresAvailable();

const listeningPids = (out: string): number[] =>
  [...out.matchAll(/"pid":(\d+)[^\n]*Server listening at/g)].map((m) => Number(m[1]));

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await Promise.resolve(check()).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('cluster mode on PostgreSQL', { skip: !pgUp && 'PostgreSQL unreachable' }, () => {
  test('two workers share the port, apply a batch once, replace a dead worker, stop on SIGTERM', async () => {
    const db = await createTestDatabase();
    const { child, output, exited } = spawnServer({
      LOG_LEVEL: 'info',
      DATABASE_URL: db.url,
      MDS_WORKERS: '2',
      MDS_INGEST_KEYS: INGEST_KEY,
      MDS_QUERY_KEYS: QUERY_KEY,
    });
    try {
      await until('two workers listening', () => listeningPids(output()).length >= 2);
      const [w1, w2] = listeningPids(output()) as [number, number];
      assert.notEqual(w1, w2);
      const ports = new Set(
        [...output().matchAll(/listening at http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => m[1]),
      );
      assert.equal(ports.size, 1, 'every worker listens on the one port');
      const port = Number([...ports][0]);
      // Each worker migrates (one at a time, under the advisory lock) and then reports ready.
      await until('both workers ready', () => (output().match(/database ready/g) ?? []).length >= 2);
      assert.equal((await request(port, { method: 'GET', path: '/health' })).status, 200);

      const body = JSON.stringify(
        batch(
          'etf_daily',
          Array.from({ length: 500 }, (_, i) => etfBar(String(530000 + i), '2024-08-01')),
          { batchId: uniqueId('cluster') },
        ),
      );
      const answers = await Promise.all(Array.from({ length: 8 }, () => pushBatch(port, body)));
      const parsed = answers.map((r) => ({ status: r.status, body: JSON.parse(r.body) as Json }));
      assert.equal(parsed.filter((x) => x.status === 200 && x.body.status === 'accepted').length, 1);
      for (const x of parsed) {
        assert.ok(
          (x.status === 200 && ['accepted', 'duplicate'].includes(x.body.status as string)) ||
            (x.status === 409 && x.body.code === 4091),
          JSON.stringify(x),
        );
      }

      // A worker dies: the primary starts another; the port keeps answering meanwhile.
      process.kill(w1, 'SIGKILL');
      await until('a replacement worker', () => (output().match(/database ready/g) ?? []).length >= 3);
      const q = await request(port, {
        method: 'GET',
        path: '/api/v1/etf/kline?date=2024-08-01&limit=1',
        headers: { 'q-api-key': QUERY_KEY },
      });
      assert.equal(q.status, 200);
      assert.equal((JSON.parse(q.body) as { meta: { total: number } }).meta.total, 500);

      child.kill('SIGTERM');
      assert.equal(await exited, 0, 'the group stops cleanly on SIGTERM');
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      await db.drop();
    }
  });
});
