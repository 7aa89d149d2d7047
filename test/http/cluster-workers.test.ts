import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { describe, test } from 'node:test';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';
import { ADMIN_TOKEN, INGEST_KEY, freshDatabaseUrl, type Json } from '../helpers/harness.js';
import { postgresAvailable } from '../helpers/postgres.js';
import { request, sleep, startServer, type ServerProcess } from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';

/**
 * Cluster mode without Redis, as `npm start` runs on a machine of several cores: what the
 * workers share goes through the primary. Rate limits are one budget for the instance, an
 * event stream on one worker sees batches processed by any, /metrics counts every worker, and a
 * batch pushed to several workers at once is applied once. On both backends. Requests go on
 * fresh connections, which the workers accept from the shared socket; the log's pids say which
 * worker answered.
 */

const pgUp = await postgresAvailable();
const KLINE = '/api/v1/etf/kline?code=510300&limit=1';
const INGEST_URL = '/api/v1/upstream/ingest/batches';

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await Promise.resolve(check()).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** How many requests for `url` the workers have logged. */
const requestLines = (out: string, url: string): number =>
  out.split('\n').filter((l) => l.includes(`"url":"${url}"`) && l.includes('incoming request')).length;

/**
 * Sends requests for `url` (`send`, each on a fresh connection) at least `min` times, more until
 * both workers have answered one, `max` at most: the kernel spreads connections between the
 * workers (SCHED_NONE, src/main.ts), not in turn. Each request's log line is waited for before
 * the workers that answered are counted. Resolves with how many were sent.
 */
async function untilBothAnswered(
  out: () => string,
  url: string,
  min: number,
  max: number,
  send: (n: number) => Promise<void>,
): Promise<number> {
  let n = 0;
  while (n < min || (answeredBy(out(), url).size < 2 && n < max)) {
    await send(++n);
    await until(`request ${n} for ${url} logged`, () => requestLines(out(), url) >= n, 5000);
  }
  return n;
}

/** Workers' pids, from their "Server listening" log lines. */
const workerPids = (out: string): number[] => [
  ...new Set([...out.matchAll(/"pid":(\d+)[^\n]*Server listening at/g)].map((m) => Number(m[1]))),
];

/** Pids that logged a completed request to `url`. */
const answeredBy = (out: string, url: string): Set<number> => {
  const pids = new Set<number>();
  for (const line of out.split('\n')) {
    if (!line.includes('"url":"' + url)) continue;
    const m = /"pid":(\d+)/.exec(line);
    if (m) pids.add(Number(m[1]));
  }
  return pids;
};

async function startCluster(databaseUrl: string, workers: string | null): Promise<ServerProcess> {
  const env: Record<string, string> = { MDS_ADMIN_TOKEN: ADMIN_TOKEN, MDS_STATIC_RATE_PER_MINUTE: '' };
  const server = await startServer({ databaseUrl, env: { ...env, MDS_WORKERS: workers ?? '0' } });
  const expected = workers === null ? os.availableParallelism() : Number(workers);
  await until(
    `${expected} workers serving`,
    () =>
      (server.output().match(/database ready/g) ?? []).length >= expected &&
      workerPids(server.output()).length >= expected,
  );
  return server;
}

/** Reads a server-sent-event stream until `n` events of `kind` arrived (or the time is up). */
function collectEvents(
  port: number,
  kind: string,
  n: number,
): { events: Json[]; done: Promise<void>; close(): void } {
  const events: Json[] = [];
  let req: http.ClientRequest | null = null;
  const done = new Promise<void>((resolve, reject) => {
    req = http.get(
      {
        host: '127.0.0.1',
        port,
        path: '/api/v1/upstream/ingest/events',
        headers: { 'UP-API-KEY': INGEST_KEY },
        agent: false,
      },
      (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let end: number;
          while ((end = buf.indexOf('\n\n')) >= 0) {
            const frame = buf.slice(0, end);
            buf = buf.slice(end + 2);
            if (!frame.includes(`event: ${kind}`)) continue;
            const data = /^data: (.*)$/m.exec(frame)?.[1];
            if (data) events.push(JSON.parse(data) as Json);
            if (events.length >= n) resolve();
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
  return { events, done, close: () => req?.destroy() };
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(
    `cluster workers without Redis (${backend})`,
    { skip: backend === 'postgres' && !pgUp && 'PostgreSQL unreachable' },
    () => {
      test('two workers: one rate-limit budget, events from every worker, summed metrics, a batch applied once', async () => {
        const db = await freshDatabaseUrl(backend);
        const server = await startCluster(db.url, '2');
        try {
          const out = server.output;
          assert.equal(workerPids(out()).length, 2, out().slice(-2000));
          // The first worker listens at once (and says 503 until ready); the other joins the port
          // only when its database is ready, so no connection reaches a worker still starting.
          const [first, second] = workerPids(out()) as [number, number];
          const at = (pid: number, msg: string): number =>
            out()
              .split('\n')
              .findIndex((l) => l.includes(`"pid":${pid},`) && l.includes(msg));
          assert.ok(at(first, 'Server listening') < at(first, 'database ready'), out().slice(-3000));
          assert.ok(at(second, 'database ready') < at(second, 'Server listening'), out().slice(-3000));

          // A key allowed 3 requests a minute: 3 answers in all, not 3 per worker.
          const created = await request(server.port, {
            method: 'POST',
            path: '/admin/api/keys',
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify({ scope: 'query', rate_per_minute: 3, daily_quota: 1000 }),
          });
          assert.equal(created.status, 201, created.body);
          const key = (JSON.parse(created.body) as { data: { secret: string } }).data.secret;
          const sec = new Date().getUTCSeconds();
          if (sec >= 50) await sleep((61 - sec) * 1000);
          // At least eight requests, more until both workers have answered one (at most 24).
          const statuses: number[] = [];
          const remaining: string[] = [];
          await untilBothAnswered(out, KLINE, 8, 24, async () => {
            const r = await request(server.port, {
              method: 'GET',
              path: KLINE,
              headers: { 'q-api-key': key },
            });
            statuses.push(r.status);
            remaining.push(String(r.headers.ratelimit ?? ''));
          });
          const refused = statuses.length - 3;
          assert.deepEqual(
            statuses,
            [200, 200, 200, ...Array.from({ length: refused }, () => 403)],
            remaining.join(' | '),
          );
          assert.match(remaining[0] as string, /"minute";r=2;/);
          assert.match(remaining[2] as string, /"minute";r=0;/);
          assert.equal(
            answeredBy(out(), KLINE).size,
            2,
            `requests reached both workers (${statuses.length})`,
          );

          // An event stream on one worker; batches pushed on fresh connections land on both: at
          // least four pushes, more until both workers have answered one (at most 20).
          const stream = collectEvents(server.port, 'batch', Number.POSITIVE_INFINITY);
          // Never done (no count): its close below aborts it.
          stream.done.catch(() => {});
          await sleep(300);
          const ids: string[] = [];
          await untilBothAnswered(out, INGEST_URL, 4, 20, async (n) => {
            const id = uniqueId('cl');
            ids.push(id);
            const body = JSON.stringify(
              batch('etf_daily', [etfBar('510300', `2024-08-${String(n).padStart(2, '0')}`)], {
                batchId: id,
              }),
            );
            const r = await pushBatch(server.port, body);
            assert.equal(r.status, 200, r.body);
          });
          await until('every batch event', () => stream.events.length >= ids.length, 10_000).catch(() => {});
          stream.close();
          assert.deepEqual(stream.events.map((e) => e.batch_id).sort(), [...ids].sort());
          assert.equal(answeredBy(out(), INGEST_URL).size, 2, `pushes reached both workers (${ids.length})`);

          // One batch pushed 8 times at once, through both workers: applied exactly once.
          const body = JSON.stringify(
            batch(
              'etf_daily',
              Array.from({ length: 300 }, (_, i) => etfBar(String(530000 + i), '2024-08-01')),
              {
                batchId: uniqueId('once'),
              },
            ),
          );
          const answers = (
            await Promise.all(Array.from({ length: 8 }, () => pushBatch(server.port, body)))
          ).map((r) => ({ status: r.status, body: JSON.parse(r.body) as Json }));
          assert.equal(answers.filter((a) => a.status === 200 && a.body.status === 'accepted').length, 1);
          for (const a of answers) {
            assert.ok(
              (a.status === 200 && ['accepted', 'duplicate'].includes(a.body.status as string)) ||
                (a.status === 409 && a.body.code === 4091),
              JSON.stringify(a),
            );
          }

          // /metrics through either worker counts the requests of both.
          for (let i = 0; i < 2; i++) {
            const m = await request(server.port, { method: 'GET', path: '/metrics' });
            assert.equal(m.status, 200);
            const served = [
              ...m.body.matchAll(
                /^mds_http_requests_total\{route="\/api\/v1\/etf\/kline",method="GET",status="(\d+)"\} (\d+)$/gm,
              ),
            ];
            const byStatus = Object.fromEntries(served.map((x) => [x[1], Number(x[2])]));
            assert.deepEqual(byStatus, { '200': 3, '403': refused }, m.body.slice(0, 3000));
            assert.match(
              m.body,
              new RegExp(
                `^mds_ingest_batches_total\\{dataset="etf_daily",status="accepted"\\} ${ids.length + 1}$`,
                'm',
              ),
            );
            assert.match(m.body, /^mds_cluster_workers_serving 2$/m);
          }

          assert.equal(await server.kill('SIGTERM').then((r) => r.code), 0, 'the group stops cleanly');
        } finally {
          await server.kill('SIGKILL');
          await db.drop();
        }
      });
    },
  );
}

test(
  'by default (MDS_WORKERS unset) the instance runs one worker per core',
  { skip: os.availableParallelism() < 2 && 'one core: one process' },
  async () => {
    const db = await freshDatabaseUrl('sqlite');
    const server = await startCluster(db.url, null);
    try {
      assert.equal(workerPids(server.output()).length, os.availableParallelism());
      assert.ok(
        !workerPids(server.output()).includes(server.child.pid as number),
        'the primary serves no requests',
      );
      // Workers get fewer malloc arenas unless the operator set it (the measured memory saving).
      for (const pid of workerPids(server.output())) {
        const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
        assert.ok(environ.includes('MALLOC_ARENA_MAX=2'), `worker ${pid}`);
      }
    } finally {
      await server.kill('SIGTERM');
      await db.drop();
    }
  },
);
