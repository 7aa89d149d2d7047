import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { batch, uniqueId } from '../helpers/batches.js';
import { ADMIN_TOKEN, freshDatabaseUrl, QUERY_KEY } from '../helpers/harness.js';
import { holdingServer, type HoldingServer } from '../helpers/held-batches.js';
import { postgresAvailable } from '../helpers/postgres.js';
import {
  request,
  sleep,
  startServer,
  workersServing,
  type ServerProcess,
} from '../helpers/server-process.js';
import { batchState, pushBars, pushBatch, rowCount } from '../helpers/server-calls.js';
import { dayBars } from '../helpers/minute-bars.js';

/**
 * Issue 31: on SQLite every batch of a service is written by one connection. A cluster's
 * workers hand their batches to one writer process (src/ingest/writer-process.ts); one process
 * runs one ingest thread whatever MDS_INGEST_THREADS says. PostgreSQL keeps a pool per worker.
 * Real processes; the log's `batch written` lines say which process and thread wrote a batch
 * (`writer`: pid/threadId).
 */

const pgUp = await postgresAvailable();

/** `writer` of every `batch written` line, by batch id. */
function writers(out: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const x of out.matchAll(/"batch_id":"([^"]+)","writer":"([^"]+)","msg":"batch written"/g)) {
    m.set(x[1] as string, x[2] as string);
  }
  return m;
}

/**
 * The writer of each batch, once every one's line is in: the answer can reach the test before
 * the log line written just ahead of it is read from the pipe.
 */
async function writtenBy(server: ServerProcess, ids: readonly string[]): Promise<string[]> {
  for (const deadline = Date.now() + 10_000; ; await sleep(50)) {
    const by = writers(server.output());
    if (ids.every((id) => by.has(id))) return ids.map((id) => by.get(id) as string);
    if (Date.now() > deadline) throw new Error(`no "batch written" line for some of ${ids.join(', ')}`);
  }
}

/** Pids that logged `msg`. */
function pidsOf(out: string, msg: string): number[] {
  return [
    ...new Set(
      [...out.matchAll(new RegExp(`"pid":(\\d+),[^\\n]*"msg":"${msg}"`, 'g'))].map((m) => Number(m[1])),
    ),
  ];
}

/** Pids that logged a request to a URL starting with `url`. */
function answeredBy(out: string, url: string): Set<number> {
  const pids = new Set<number>();
  for (const line of out.split('\n')) {
    const m = /"pid":(\d+)/.exec(line);
    if (m && line.includes(`"url":"${url}`)) pids.add(Number(m[1]));
  }
  return pids;
}

const pushOne = pushBars;

/**
 * Batches pushed two at a time, as `mds push` sends them, on fresh connections, until both
 * workers have answered some (the kernel hands connections out unevenly): their ids.
 */
async function pushOnBothWorkers(server: ServerProcess, source: string): Promise<string[]> {
  const ids: string[] = [];
  const both = (): boolean => answeredBy(server.output(), '/api/v1/upstream/ingest/batches').size === 2;
  for (let round = 0; round < 20 && !(round >= 2 && both()); round++) {
    const answers = await Promise.all([pushOne(server.port, source), pushOne(server.port, source)]);
    for (const a of answers) {
      assert.equal(a.status, 200, JSON.stringify(a.body));
      ids.push(a.batchId);
    }
  }
  await writtenBy(server, ids);
  // The last answers' log lines may still be on their way.
  for (let i = 0; i < 50 && !both(); i++) await sleep(100);
  assert.ok(both(), 'pushes reached both workers');
  return ids;
}

/** Fails when `p` takes longer than `ms`: a request that waited on the writer would. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    sleep(ms).then(() => {
      throw new Error(`${what} not answered within ${ms} ms`);
    }),
  ]);
}

describe('SQLite cluster: one writer', () => {
  let h: HoldingServer;
  let server: ServerProcess;
  let writerPid: number;

  before(async () => {
    // No reader processes: the coverage recount goes to the writer too (services.ts), and queries
    // read on each worker's own connection while the writer writes.
    h = await holdingServer('sqlite', {
      MDS_WORKERS: '2',
      LOG_LEVEL: 'info',
      MDS_INGEST_THREADS: '2',
      MDS_READER_PROCESSES: '0',
    });
    server = h.server;
    await workersServing(server, 2);
    const started = pidsOf(server.output(), 'writer started');
    assert.equal(started.length, 1, server.output().slice(-3000));
    writerPid = started[0] as number;
  });
  after(() => h.close());

  test('batches pushed at once through both workers, and a minute-bar batch, are all written by the one writer thread', async () => {
    const source = uniqueId('src');
    const ids = await pushOnBothWorkers(server, source);
    const out = server.output();
    const workerPids = pidsOf(out, 'Server listening at [^"]*');
    // A minute-bar batch (the columnar path) goes the same way.
    const minuteId = uniqueId('min');
    const minute = await pushBatch(
      server.port,
      JSON.stringify(batch('stock_minute', dayBars('600000', '2024-09-02'), { batchId: minuteId })),
    );
    assert.equal(minute.status, 200, minute.body);
    ids.push(minuteId);
    const seen = new Set(await writtenBy(server, ids));
    assert.equal(seen.size, 1, `one writer: ${[...seen].join(', ')}`);
    const [writer] = [...seen] as [string];
    assert.match(writer, new RegExp(`^${writerPid}/\\d+$`));
    assert.ok(!workerPids.includes(writerPid), 'the writer is not a worker');
    // MDS_INGEST_THREADS=2 is not used on SQLite: the writer runs one thread.
    assert.equal(pidsOf(out, 'ingest thread started').length, 1, 'no worker runs an ingest thread');
    assert.equal((out.match(/"msg":"ingest thread started"/g) ?? []).length, 1);
    assert.equal(await rowCount(server.port, source), 50);
    // The coverage recount, run by the writer: the rows just written.
    const coverage = await request(server.port, {
      method: 'GET',
      path: '/admin/api/coverage',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(coverage.status, 200, coverage.body);
    const rows = (JSON.parse(coverage.body) as { data: { dataset: string; rows: number }[] }).data;
    assert.ok((rows.find((r) => r.dataset === 'etf_daily')?.rows ?? 0) >= 50, coverage.body.slice(0, 500));
    assert.ok((rows.find((r) => r.dataset === 'stock_minute')?.rows ?? 0) > 0, coverage.body.slice(0, 500));
  });

  test('/health and queries are answered by every worker while the writer holds a batch', async () => {
    h.hold();
    const push = pushOne(server.port, uniqueId('src'));
    await h.held();
    try {
      const from = server.output().length;
      for (let i = 0; i < 40 && answeredBy(server.output().slice(from), '/health').size < 2; i++) {
        assert.equal(
          await within(
            request(server.port, { method: 'GET', path: '/health' }).then((r) => r.status),
            5000,
            '/health',
          ),
          200,
        );
        const q = await within(
          request(server.port, {
            method: 'GET',
            path: '/api/v1/etf/kline?code=600001&limit=1',
            headers: { 'q-api-key': QUERY_KEY },
          }),
          5000,
          'a query',
        );
        assert.equal(q.status, 200, q.body);
      }
      assert.equal(answeredBy(server.output().slice(from), '/health').size, 2, 'both workers answered');
      assert.ok(h.holding(), 'the batch was held all along');
    } finally {
      h.release();
    }
    assert.equal((await push).status, 200);
  });

  test('the writer killed with a batch in flight: 503 with Retry-After, the retry applied once, later batches succeed', async () => {
    const source = uniqueId('src');
    const acknowledged = await pushOne(server.port, source, 10);
    assert.equal(acknowledged.status, 200);
    const id = uniqueId('killed');
    h.hold();
    const inFlight = pushOne(server.port, `${source}-b`, 40, id);
    await h.held();
    const from = server.output().length;
    process.kill(writerPid, 'SIGKILL');
    const refused = await inFlight;
    h.release();
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 5030);
    assert.equal(refused.retryAfter, '1');
    await server.waitForOutput('writer started', 30_000, from);
    const [next] = pidsOf(server.output().slice(from), 'writer started') as [number];
    assert.notEqual(next, writerPid);
    writerPid = next;
    // The client's retry (as `mds push` retries a 503): applied, once.
    const retried = await pushOne(server.port, `${source}-b`, 40, id);
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    assert.equal(retried.body.status, 'accepted');
    const again = await pushOne(server.port, `${source}-b`, 40, id);
    assert.equal(again.body.status, 'duplicate');
    assert.equal(await rowCount(server.port, `${source}-b`), 40);
    assert.equal(await rowCount(server.port, source), 10, 'what was acknowledged before is there');
    const later = await Promise.all([pushOne(server.port, source), pushOne(server.port, source)]);
    assert.deepEqual(
      later.map((a) => a.status),
      [200, 200],
    );
    const laterWriters = await writtenBy(server, [later[0].batchId, later[1].batchId]);
    assert.deepEqual(
      laterWriters.map((w) => w.split('/')[0]),
      [String(writerPid), String(writerPid)],
    );
  });

  test('SIGTERM: the batch in flight is still written, then every process exits 0', async () => {
    const id = uniqueId('term');
    h.hold();
    const inFlight = pushOne(server.port, uniqueId('src'), 30, id);
    await h.held();
    const exited = server.kill('SIGTERM');
    await sleep(500);
    h.release();
    const answer = await inFlight;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.status, 'accepted');
    assert.equal((await exited).code, 0);
    assert.match(server.output(), /"msg":"writer stopped"/);
    let alive = true;
    try {
      process.kill(writerPid, 0);
    } catch {
      alive = false;
    }
    assert.equal(alive, false, 'the writer ended with its primary');
  });
});

test('one SQLite process runs one ingest thread whatever MDS_INGEST_THREADS says, and says so', async () => {
  const db = await freshDatabaseUrl('sqlite');
  const server = await startServer({ databaseUrl: db.url, env: { MDS_INGEST_THREADS: '3' } });
  try {
    await server.waitForOutput('ingest thread started');
    await sleep(500);
    assert.equal((server.output().match(/"msg":"ingest thread started"/g) ?? []).length, 1);
    assert.match(server.output(), /MDS_INGEST_THREADS above 1 is not used/);
    assert.doesNotMatch(server.output(), /writer started/);
    const a = await pushOne(server.port, uniqueId('src'));
    assert.equal(a.status, 200);
    const [writer] = await writtenBy(server, [a.batchId]);
    assert.equal(writer?.split('/')[0], String(server.child.pid));
    assert.equal((await batchState(server.port, a.batchId)).batchStatus, 'accepted');
  } finally {
    await server.kill('SIGTERM');
    await db.drop();
  }
});

test(
  'PostgreSQL cluster: no writer process, each worker writes its own batches',
  { skip: !pgUp && 'PostgreSQL unreachable' },
  async () => {
    const db = await freshDatabaseUrl('postgres');
    const server = await startServer({ databaseUrl: db.url, env: { MDS_WORKERS: '2' } });
    try {
      await workersServing(server, 2);
      const source = uniqueId('src');
      const ids = await pushOnBothWorkers(server, source);
      const writerPids = new Set((await writtenBy(server, ids)).map((w) => Number(w.split('/')[0])));
      const out = server.output();
      assert.doesNotMatch(out, /writer started/);
      assert.deepEqual(
        [...writerPids].sort(),
        [...answeredBy(out, '/api/v1/upstream/ingest/batches')].sort(),
        'each batch written in the worker that took it',
      );
      assert.equal(writerPids.size, 2);
    } finally {
      await server.kill('SIGTERM');
      await db.drop();
    }
  },
);
