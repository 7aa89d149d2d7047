// A SQLite cluster's writer process frozen (SIGSTOP) inside a batch, and its supervisor killed
// (SIGKILL), from outside: the built server as a cluster of two workers, its batches held inside
// their transaction by the test-only hook (test/helpers/ingest-hooks.mjs). PostgreSQL has no
// writer process (each worker writes its own batches: test/ingest/ingest-one-writer.test.ts).
// - frozen: every batch waiting on it is answered 503 / 5030 with Retry-After within the bound
//   (MDS_WRITER_HANG_MS, 2 s here; the test allows 20 s on a loaded machine), the writer is killed
//   and replaced, its batch rolled back whole, and the client's retry applied once;
// - the supervisor SIGKILLed with a batch in flight: the writer exits at once (not after the
//   shutdown grace), its batch rolled back.
// Before: nothing answered until the writer resumed, and a writer outlived its supervisor by up to
// MDS_SHUTDOWN_GRACE_MS.
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { after, before, describe, test } from 'node:test';
import { uniqueId } from '../helpers/batches.js';
import { holdingServer, type HoldingServer } from '../helpers/held-batches.js';
import { sleep, workersServing, type ServerProcess } from '../helpers/server-process.js';
import { batchState, pushBars, rowCount } from '../helpers/server-calls.js';

const HANG_MS = 2000;

/** A batch of bars, its answer's status, code, batch status and Retry-After. */
const pushOne = (port: number, source: string, rows: number, batchId = uniqueId('fw')) =>
  pushBars(port, source, rows, batchId).then((r) => ({
    status: r.status,
    code: r.body.code,
    status_: r.body.status,
    retryAfter: r.retryAfter,
    body: JSON.stringify(r.body),
  }));

/** Pids of the processes that logged `writer started`, in order. */
const writerPids = (out: string): number[] =>
  [...out.matchAll(/"pid":(\d+),[^\n]*"msg":"writer started"/g)].map((m) => Number(m[1]));

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function gone(pid: number, withinMs: number): Promise<number> {
  const t0 = Date.now();
  while (alive(pid)) {
    assert.ok(Date.now() - t0 < withinMs, `process ${pid} still alive after ${withinMs} ms`);
    await sleep(20);
  }
  return Date.now() - t0;
}

describe('SQLite cluster: a frozen writer, a killed supervisor', { timeout: 300_000 }, () => {
  let h: HoldingServer;
  let server: ServerProcess;
  let writer: number;

  before(async () => {
    h = await holdingServer('sqlite', {
      MDS_WORKERS: '2',
      LOG_LEVEL: 'info',
      MDS_READER_PROCESSES: '0',
      MDS_WRITER_HANG_MS: String(HANG_MS),
    });
    server = h.server;
    await workersServing(server, 2);
    writer = writerPids(server.output())[0] as number;
    assert.ok(writer, server.output().slice(-3000));
  });
  after(() => h.close());

  test('frozen inside a batch: 503 / 5030 within the bound, replaced, the batch rolled back, the retry applied once', async () => {
    const source = uniqueId('src');
    assert.equal((await pushOne(server.port, source, 10)).status, 200);
    const id = uniqueId('frozen');
    h.hold();
    const inFlight = pushOne(server.port, `${source}-b`, 40, id);
    await h.held();
    const from = server.output().length;
    process.kill(writer, 'SIGSTOP');
    const t0 = Date.now();
    // The hold is the frozen writer's: the next writer must not stop at it.
    h.release();
    // Another batch while it is frozen, as a client's retry or another client's push.
    const waiting = pushOne(server.port, `${source}-c`, 5);
    const [refused, other] = await Promise.all([inFlight, waiting]);
    const waited = Date.now() - t0;
    for (const r of [refused, other]) {
      assert.equal(r.status, 503, r.body);
      assert.equal(r.code, 5030);
      assert.equal(r.retryAfter, '1');
    }
    assert.ok(waited < 20_000, `answered after ${waited} ms (bound ${HANG_MS} ms)`);
    await gone(writer, 10_000);
    await server.waitForOutput('writer started', 30_000, from);
    assert.match(server.output().slice(from), /answered nothing for 2000 ms \(MDS_WRITER_HANG_MS\): hung/);
    const next = writerPids(server.output().slice(from))[0] as number;
    assert.notEqual(next, writer);
    writer = next;
    assert.equal((await batchState(server.port, id)).status, 404, 'the frozen batch rolled back whole');
    assert.equal(await rowCount(server.port, `${source}-b`), 0);
    // The client's retry: applied, once.
    const retried = await pushOne(server.port, `${source}-b`, 40, id);
    assert.equal(retried.status, 200, retried.body);
    assert.equal(retried.status_, 'accepted');
    assert.equal((await pushOne(server.port, `${source}-b`, 40, id)).status_, 'duplicate');
    assert.equal(await rowCount(server.port, `${source}-b`), 40);
    assert.equal(await rowCount(server.port, source), 10, 'what was acknowledged before is there');
  });

  test('the supervisor SIGKILLed with a batch in flight: the writer exits at once, the batch rolled back', async () => {
    const source = uniqueId('src');
    h.hold();
    const inFlight = pushOne(server.port, source, 30).catch(() => null);
    await h.held();
    await server.kill('SIGKILL');
    // Before: it waited out MDS_SHUTDOWN_GRACE_MS (10 s) for the batch nobody would hear of.
    const took = await gone(writer, 5_000);
    h.release();
    await inFlight;
    const file = h.databaseUrl.slice('sqlite:'.length);
    const db = new Database(file, { readonly: true });
    try {
      const row = db.prepare('SELECT count(*) AS n FROM etf_daily WHERE source = ?').get(source) as {
        n: number;
      };
      assert.equal(row.n, 0, 'the batch in flight rolled back');
    } finally {
      db.close();
    }
    assert.ok(took < 5_000);
  });
});
