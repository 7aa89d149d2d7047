// Issue 24 (items 1–3, "every request bounded"): heavy reads never hold the thread that answers
// requests, and every query's statement is bounded. Real server processes on real sockets; the
// probe runs in its own process and opens a fresh connection per request, so whichever worker
// takes it is measured. Run once per backend, side by side: faults-heavy-reads-{sqlite,postgres}.test.ts.
import { afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { QUERY_KEY, type Backend } from '../helpers/harness.js';
import { batch, days, etfBar } from '../helpers/batches.js';
import { request, serverOnFreshDatabase, sleep } from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';
import { childrenOf } from '../helpers/private-servers.js';

/** Rows seeded: enough that sorting them on an unindexed field takes a reader a noticeable time (0.4 s on SQLite). */
const ROWS = 200_000;
const PER_BATCH = 50_000;
const SOURCE = 'heavy';
/** A deep page sorted on an unindexed field: every row sorted for each request. */
const deepSort = (n: number): string =>
  `/api/v1/etf/kline?source=${SOURCE}&sort=close&order=desc&offset=${150_000 + n}&limit=1000`;
const Q = { 'q-api-key': QUERY_KEY };
/** A second query key: the fairness between keys is what is tested. */
const OTHER_KEY = 'other-query-key-0123456789';
/** One code's first rows: a statement of a few milliseconds. */
const SMALL = `/api/v1/etf/kline?source=${SOURCE}&code=510000&limit=5`;

async function seed(port: number): Promise<void> {
  const dates = days('2015-01-01', 1000);
  for (let part = 0; part < ROWS / PER_BATCH; part++) {
    const rows = Array.from({ length: PER_BATCH }, (_, i) => {
      const n = part * PER_BATCH + i;
      // Closes in no index order, so the sort really sorts.
      return etfBar(String(510000 + Math.floor(n / 1000)), dates[n % 1000] as string, {
        source: SOURCE,
        close: ((n * 7919) % 100_003) / 100,
      });
    });
    const res = await pushBatch(port, JSON.stringify(batch('etf_daily', rows, { source: SOURCE })));
    assert.equal(res.status, 200, res.body.slice(0, 300));
  }
}

/**
 * /health probed from another process, a fresh connection each time, every `everyMs` for
 * `forMs`: resolves with each answer's latency (ms), or -1 for one that failed.
 */
function probeHealth(port: number, forMs: number, everyMs = 50): Promise<number[]> {
  const script = `
    const http = require('node:http');
    const out = [];
    const end = Date.now() + ${forMs};
    const one = () => new Promise((resolve) => {
      const t = process.hrtime.bigint();
      const req = http.get({ host: '127.0.0.1', port: ${port}, path: '/health', agent: false,
        headers: { connection: 'close' }, timeout: 30000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200 ? Number(process.hrtime.bigint() - t) / 1e6 : -1));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(-1));
    });
    (async () => {
      while (Date.now() < end) {
        out.push(await one());
        await new Promise((r) => setTimeout(r, ${everyMs}));
      }
      process.stdout.write(JSON.stringify(out));
    })();`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.on('error', reject);
    child.on('exit', () => resolve(JSON.parse(text || '[]') as number[]));
  });
}

function childPids(parent: number): number[] {
  return childrenOf(parent).sort((a, b) => a - b);
}

/** The server's `count` reader processes, once there are that many (and `ok` holds of them). */
async function readers(
  pid: number,
  count: number,
  ok: (pids: number[]) => boolean = () => true,
  everyMs = 100,
): Promise<number[]> {
  for (let i = 0; ; i++) {
    const pids = childPids(pid);
    if (pids.length === count && ok(pids)) return pids;
    assert.ok(i * everyMs < 60_000, `reader processes of ${pid}: ${pids.join(', ')}`);
    await sleep(everyMs);
  }
}

/** Starts a GET and leaves after `ms`: the client disconnects while the server works. */
function leaveAfter(port: number, path: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.on('error', () => {});
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nQ-API-KEY: ${QUERY_KEY}\r\n\r\n`);
    setTimeout(() => {
      socket.destroy();
      resolve();
    }, ms);
  });
}

/** The heavy-read suite on one backend (each backend's file calls this). */
export function heavyReadSuite(backend: Backend): void {
  describe(`heavy reads and query deadlines (${backend})`, { timeout: 600_000 }, () => {
    const fx = serverOnFreshDatabase(backend, { LOG_LEVEL: 'info' });
    const start = (env: Record<string, string> = {}) => fx.start({ env });

    before(async () => {
      const s = await start();
      await seed(s.port);
      await fx.stop();
    });
    afterEach(() => fx.stop());

    it('/health answers within 1 s while one key runs deep sorts and a full CSV export', async () => {
      const s = await start({ MDS_QUERY_TIMEOUT_MS: '120000' });
      // Eight: a deep sort is about 0.4 s of CPU since SQLite picks a deep page by row id (it was
      // 2.2 s), so were they run on the request thread, they would hold it for seconds still.
      const heavy = [
        ...Array.from({ length: 8 }, (_, i) =>
          request(s.port, { method: 'GET', path: deepSort(i), headers: Q }),
        ),
        request(s.port, { method: 'GET', path: `/api/v1/etf/kline?source=${SOURCE}&format=csv`, headers: Q }),
      ];
      const probe = probeHealth(s.port, 3000);
      const answers = await Promise.all(heavy);
      const latencies = await probe;
      for (const a of answers) assert.equal(a.status, 200, a.body.slice(0, 300));
      assert.equal(answers.at(-1)?.body.trim().split('\n').length, ROWS + 1, 'the whole export');
      assert.ok(latencies.length > 0);
      assert.ok(!latencies.includes(-1), `every /health answered: ${latencies.join(', ')}`);
      // Before: each deep sort held the request thread for its whole length (seconds).
      assert.ok(Math.max(...latencies) < 1000, `/health latencies (ms): ${latencies.join(', ')}`);
    });

    it('one key with more deep sorts than connections: another key is answered first, /health throughout', async () => {
      // One worker, 2 readers (SQLite) or 3 pooled connections (PostgreSQL); on PostgreSQL a
      // ping not answered within 200 ms is a failed /health, as when every connection is held.
      const s = await start({
        MDS_WORKERS: '1',
        MDS_READER_PROCESSES: '2',
        MDS_PG_POOL_SIZE: '3',
        MDS_PG_QUERY_TIMEOUT_MS: '200',
        MDS_QUERY_TIMEOUT_MS: '120000',
        MDS_QUERY_KEYS: `${QUERY_KEY},${OTHER_KEY}`,
      });
      let heavyDone = 0;
      const heavy = Array.from({ length: 12 }, (_, i) =>
        request(s.port, { method: 'GET', path: deepSort(40 + i), headers: Q }).then((r) => {
          heavyDone++;
          return r;
        }),
      );
      await sleep(300);
      const probe = probeHealth(s.port, 1500);
      const page = await request(s.port, { method: 'GET', path: SMALL, headers: { 'q-api-key': OTHER_KEY } });
      const heavyBeforePage = heavyDone;
      const latencies = await probe;
      const answers = await Promise.all(heavy);
      assert.equal(page.status, 200, page.body.slice(0, 300));
      for (const a of answers) assert.equal(a.status, 200, a.body.slice(0, 300));
      // The key's sorts never hold every reader or connection: the other key's page does not
      // queue behind the eleven that wait (before: behind all of them on PostgreSQL).
      assert.ok(heavyBeforePage <= 4, `${heavyBeforePage} of 12 sorts ended before the other key's page`);
      assert.ok(!latencies.includes(-1), `every /health answered: ${latencies.join(', ')}`);
    });

    it('a statement past MDS_QUERY_TIMEOUT_MS is stopped: 504 / 5040, its reader killed and replaced', async () => {
      const s = await start({ MDS_QUERY_TIMEOUT_MS: '100' });
      const pid = s.child.pid as number;
      const sqlite = backend === 'sqlite';
      // A reader starts when a statement first finds none idle: none before the first.
      if (sqlite) assert.deepEqual(childPids(pid), [], 'reader processes before any read');
      const asked = request(s.port, { method: 'GET', path: deepSort(0), headers: Q });
      // The reader started for the sort, seen while it sorts (its deadline is 100 ms).
      const before = sqlite ? await readers(pid, 1, () => true, 5) : [];
      const res = await asked;
      assert.equal(res.status, 504, res.body.slice(0, 300));
      const body = JSON.parse(res.body) as { code: number; message: string; data: unknown[] };
      assert.equal(body.code, 5040);
      assert.match(body.message, /time limit/);
      assert.deepEqual(body.data, []);
      if (!sqlite) return;
      // The statement's reader process is gone (its sort stopped with it) and another took its place.
      const now = await readers(pid, 1, (pids) => pids.some((p) => !before.includes(p)));
      assert.ok(
        before.some((p) => !now.includes(p)),
        `readers before ${before.join(', ')}, after ${now.join(', ')}`,
      );
    });

    it('SIGTERM with long queries in flight: the process exits at once, well within the grace', async () => {
      const s = await start({ MDS_QUERY_TIMEOUT_MS: '600000', MDS_SHUTDOWN_GRACE_MS: '20000' });
      const inFlight = Array.from({ length: 4 }, (_, i) =>
        request(s.port, { method: 'GET', path: deepSort(10 + i), headers: Q }).catch(() => null),
      );
      await sleep(300);
      const t = Date.now();
      const exit = await fx.stop('SIGTERM');
      const took = Date.now() - t;
      // Exit code 0: stopped by the shutdown itself, not by the grace timer (exit 1).
      assert.equal(exit?.code, 0, `exit ${JSON.stringify(exit)}; output:\n${s.output().slice(-3000)}`);
      assert.ok(took < 20_000, `exited after ${took} ms`);
      for (const r of await Promise.all(inFlight)) if (r) assert.notEqual(r.status, 200);
    });

    // SQLite only: PostgreSQL runs 2 of a key's statements at once per process; its
    // cancellation of a departed client's statement is watched on the server itself
    // (postgres-query-bounds.test.ts).
    if (backend === 'sqlite')
      it('a client that disconnects stops its statement: the next request of the key is not held behind it', async () => {
        // One reader process per key at a time (MDS_READER_PROCESSES=2): were the abandoned sorts
        // run to their end, the page would wait for all four, each as long as the one timed here.
        const s = await start({ MDS_QUERY_TIMEOUT_MS: '600000', MDS_READER_PROCESSES: '2' });
        let t = Date.now();
        const one = await request(s.port, { method: 'GET', path: deepSort(30), headers: Q });
        const sortMs = Date.now() - t;
        assert.equal(one.status, 200, one.body.slice(0, 300));
        await Promise.all(Array.from({ length: 4 }, (_, i) => leaveAfter(s.port, deepSort(20 + i), 100)));
        t = Date.now();
        const res = await request(s.port, { method: 'GET', path: SMALL, headers: Q });
        const pageMs = Date.now() - t;
        assert.equal(res.status, 200, res.body.slice(0, 300));
        assert.ok(pageMs < 2 * sortMs, `page ${pageMs} ms after four abandoned sorts of ${sortMs} ms each`);
      });
  });
}
