// Issue 28: a primary and a streaming replica (pg_basebackup -R) as private clusters, a PgBouncer
// in transaction mode in front of each, Redis, and two service instances reading from the
// replica: lag made real by pausing replay, the token, monotonic ETags, as_of, the replica and
// then the primary stopped.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { ADMIN_TOKEN, QUERY_KEY } from '../helpers/harness.js';
import { probe } from '../helpers/probe.js';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';
import { createTestDatabase, PG_ADMIN_URL, viaPort } from '../helpers/postgres.js';
import {
  pgBouncerAvailable,
  privatePgBouncer,
  privatePostgres,
  privatePostgresAvailable,
  privateRedis,
  privateRedisAvailable,
  privateStandby,
  type PrivateServer,
} from '../helpers/private-servers.js';
import {
  request,
  sleep,
  startServer,
  type RawResponse,
  type ServerProcess,
  spawnServer,
} from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';

const ready = privatePostgresAvailable() && privateRedisAvailable() && pgBouncerAvailable();
if (!ready) console.warn('# initdb, redis-server or pgbouncer missing: the replica suite is SKIPPED');

const PATH = '/api/v1/etf/kline?code=510300&limit=100';

/** A one-row batch of 510300 on `date` with close `close`. */
function bar(date: string, close: number): string {
  return JSON.stringify(
    batch('etf_daily', [etfBar('510300', date, { close })], { batchId: uniqueId('rep') }),
  );
}

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}

const get = (s: ServerProcess, path: string, headers: Record<string, string> = {}): Promise<RawResponse> =>
  request(s.port, { method: 'GET', path, headers: { 'Q-API-KEY': QUERY_KEY, ...headers } });

const closes = (r: RawResponse): number[] =>
  (JSON.parse(r.body) as { data: { close: number }[] }).data.map((x) => x.close);

/** A /metrics sample's value (0 when absent). */
async function metric(s: ServerProcess, name: string, labels: string): Promise<number> {
  const r = await request(s.port, { method: 'GET', path: '/metrics' });
  const line = r.body.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  assert.fail(`timed out waiting: ${what}`);
}

describe('PostgreSQL read replicas through PgBouncer', { skip: !ready, timeout: 600_000 }, () => {
  let primary: PrivateServer;
  let standby: PrivateServer;
  let bouncerP: PrivateServer;
  let bouncerS: PrivateServer;
  let redis: PrivateServer;
  let db: { url: string; drop(): Promise<void> };
  /** Reads from the replica while it is within 1.5 s of the primary. */
  let a: ServerProcess;
  /** Tolerates 10 minutes of lag: keeps reading a paused replica. */
  let b: ServerProcess;
  const standbyUrl = (): string => viaPort(db.url, standby.port);

  const env = (maxLagMs: number): Record<string, string> => ({
    LOG_LEVEL: 'warn',
    DATABASE_URL: viaPort(db.url, bouncerP.port),
    DATABASE_READ_URLS: viaPort(db.url, bouncerS.port),
    MDS_PG_POOLER: 'pgbouncer',
    MDS_REPLICA_MAX_LAG_MS: String(maxLagMs),
    MDS_REPLICA_CHECK_MS: '100',
    MDS_READ_AFTER_WAIT_MS: '300',
    REDIS_URL: redis.url,
  });

  before(async () => {
    primary = await privatePostgres();
    standby = await privateStandby(primary);
    [bouncerP, bouncerS, redis] = await Promise.all([
      privatePgBouncer(primary.port),
      privatePgBouncer(standby.port),
      privateRedis(),
    ]);
    db = await createTestDatabase(primary.url);
    await until('the database on the standby', async () => {
      await sql(standbyUrl(), 'SELECT 1');
      return true;
    });
    a = await startServer({ databaseUrl: viaPort(db.url, bouncerP.port), env: env(1500) });
    b = await startServer({ databaseUrl: viaPort(db.url, bouncerP.port), env: env(600_000) });
    // Something to read: one bar, replicated.
    assert.equal((await pushBatch(a.port, bar('2024-03-01', 1))).status, 200);
    await until('the first bar on the replica', async () => closes(await get(b, PATH)).includes(1));
  });
  after(async () => {
    await Promise.all([a?.kill('SIGTERM'), b?.kill('SIGTERM')]);
    for (const s of [bouncerP, bouncerS, standby, redis, primary]) await s?.remove();
  });

  it('reads are served by the replica, writes by the primary', async () => {
    const before = await metric(b, 'mds_pg_reads_total', 'database="replica0"');
    const r = await get(b, PATH);
    assert.equal(r.status, 200);
    assert.ok((await metric(b, 'mds_pg_reads_total', 'database="replica0"')) > before);
    assert.equal(await metric(b, 'mds_pg_replica_serving', 'replica="replica0"'), 1);
    const m = await request(b.port, { method: 'GET', path: '/metrics' });
    assert.match(m.body, /mds_pg_replica_lag_seconds\{replica="replica0"\} \d/);
    assert.match(m.body, /mds_pg_pool_connections\{database="primary",state="waiting"\} 0/);
  });

  it('a lagging replica: a batch read back at once through the token, unseen without it', async () => {
    await sql(standbyUrl(), 'SELECT pg_wal_replay_pause()');
    try {
      const pushed = await pushBatch(a.port, bar('2024-03-04', 2));
      assert.equal(pushed.status, 200);
      const token = pushed.headers['mds-read-after'];
      assert.match(String(token), /^[0-9A-F]+\/[0-9A-F]+$/);
      // Without the token, B's paused replica answers: the batch is not there (lag is real).
      assert.deepEqual(closes(await get(b, PATH)), [1]);
      // With it, on the other instance, at once: the replica does not have it, the primary does.
      const fresh = await get(b, PATH, { 'MDS-Read-After': String(token) });
      assert.equal(fresh.status, 200);
      assert.deepEqual(closes(fresh).sort(), [1, 2]);
      // A malformed token is refused, not ignored.
      assert.equal((await get(b, PATH, { 'MDS-Read-After': 'latest' })).status, 400);

      // Monotonic reads: the ETag of the fresh answer, sent back to the lagging instance, is
      // never answered with an older version (the replica's) — 304 from the primary.
      const etag = String(fresh.headers.etag);
      const again = await get(b, PATH, { 'If-None-Match': etag });
      assert.equal(again.status, 304);
      assert.equal(again.headers.etag, etag);
      // An older ETag is answered by the replica as usual.
      const stale = await get(b, PATH);
      assert.notEqual(stale.headers.etag, etag);

      // as_of=now: the replica does not hold every commit up to now, the primary does.
      const now = new Date().toISOString();
      const asOf = await get(b, `${PATH}&as_of=${encodeURIComponent(now)}`);
      assert.equal(asOf.status, 200);
      assert.deepEqual(closes(asOf).sort(), [1, 2]);
      // An instant the replica covers is answered there.
      const replicaReads = await metric(b, 'mds_pg_reads_total', 'database="replica0"');
      const old = await get(b, `${PATH}&as_of=2024-01-01T00:00:00Z`);
      assert.equal(old.status, 200);
      assert.deepEqual(closes(old), []);
      assert.ok((await metric(b, 'mds_pg_reads_total', 'database="replica0"')) > replicaReads);

      // Bounded staleness: A stops reading from the replica once it is 1.5 s behind.
      await until('A stops using the lagging replica', async () => {
        return (await metric(a, 'mds_pg_replica_serving', 'replica="replica0"')) === 0;
      });
      assert.deepEqual(closes(await get(a, PATH)).sort(), [1, 2]);
    } finally {
      await sql(standbyUrl(), 'SELECT pg_wal_replay_resume()');
    }
    await until('A uses the replica again', async () => {
      return (await metric(a, 'mds_pg_replica_serving', 'replica="replica0"')) === 1;
    });
    const replicaReads = await metric(a, 'mds_pg_reads_total', 'database="replica0"');
    assert.deepEqual(closes(await get(a, PATH)).sort(), [1, 2]);
    assert.ok((await metric(a, 'mds_pg_reads_total', 'database="replica0"')) > replicaReads);
  });

  it('as_of=T is answered by a replica only once it has replayed the commit of every change known by T', async () => {
    // A batch held after its known instant was recorded, before its COMMIT: its rows are in the
    // WAL (the replica replays them, invisible), its commit is not. Positions of the primary
    // sampled meanwhile are ones the replica has, taken after T; they must not make it cover T.
    const hold = path.join(os.tmpdir(), `mds-hold-${process.pid}-${Date.now()}`);
    fs.writeFileSync(hold, '');
    const h = await startServer({
      databaseUrl: viaPort(db.url, bouncerP.port),
      env: { ...env(600_000), MDS_TEST_HOLD_FILE: hold, MDS_TEST_HOLD_AT: 'known' },
      hooks: true,
    });
    try {
      const body = JSON.stringify(
        batch('etf_daily', [etfBar('510500', '2024-03-01', { close: 7 })], { batchId: uniqueId('held') }),
      );
      const pushing = pushBatch(h.port, body);
      await until('the batch held after its known instant', async () => fs.existsSync(`${hold}.held`));
      const [written] = (await sql(viaPort(db.url, primary.port), 'SELECT pg_current_wal_lsn()::text AS lsn'))
        .rows as { lsn: string }[];
      await until('the replica past the held rows', async () => {
        const r = await sql(
          standbyUrl(),
          `SELECT pg_last_wal_replay_lsn() >= '${written?.lsn}'::pg_lsn AS ok`,
        );
        return (r.rows[0] as { ok: boolean }).ok;
      });
      await sql(standbyUrl(), 'SELECT pg_wal_replay_pause()');
      try {
        const t = new Date().toISOString();
        // B samples the primary every 100 ms meanwhile.
        await sleep(600);
        fs.rmSync(hold);
        assert.equal((await pushing).status, 200);
        const r = await get(b, `/api/v1/etf/kline?code=510500&as_of=${encodeURIComponent(t)}`);
        assert.equal(r.status, 200, r.body);
        assert.deepEqual(closes(r), [7]);
      } finally {
        await sql(standbyUrl(), 'SELECT pg_wal_replay_resume()');
      }
    } finally {
      fs.rmSync(hold, { force: true });
      await h.kill('SIGTERM');
    }
  });

  it('the primary frozen: managed-key requests and /health answered at once from the replica', async () => {
    const created = await request(a.port, {
      method: 'POST',
      path: '/admin/api/keys',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scope: 'query', name: 'frozen-primary' }),
    });
    assert.equal(created.status, 201, created.body);
    const key = (JSON.parse(created.body) as { data: { secret: string } }).data.secret;
    const managed = { path: PATH, headers: { 'q-api-key': key } };
    assert.equal((await get(a, PATH, { 'q-api-key': key })).status, 200);
    primary.freeze();
    try {
      // Each on a new connection from a process of its own, for longer than the key cache lasts
      // (1 s) and than the connect timeout (5 s): before, each waited about that long.
      const during = await probe(
        a.port,
        Array.from({ length: 24 }, (_, i) => (i % 4 === 0 ? { path: '/health' } : managed)),
        15_000,
      );
      const slowest = Math.max(...during.map((r) => r.ms));
      for (const r of during) assert.equal(r.status, 200, JSON.stringify(r));
      assert.ok(slowest < 2500, `slowest answer ${slowest} ms: ${JSON.stringify(during.map((r) => r.ms))}`);
    } finally {
      primary.thaw();
    }
  });

  it('the replica stopped: reads go to the primary with no 5xx; restarted: used again', async () => {
    await standby.kill();
    for (let i = 0; i < 10; i++) {
      for (const s of [a, b]) {
        const r = await get(s, PATH);
        assert.equal(r.status, 200, r.body);
        assert.deepEqual(closes(r).sort(), [1, 2]);
      }
    }
    await standby.start();
    await until('B uses the replica again', async () => {
      const before = await metric(b, 'mds_pg_reads_total', 'database="replica0"');
      await get(b, PATH);
      return (await metric(b, 'mds_pg_reads_total', 'database="replica0"')) > before;
    });
  });

  it('the primary stopped: reads go on from the replica, ingest answers 503, /health 200', async () => {
    const pushed = await pushBatch(a.port, bar('2024-03-05', 3));
    const token = String(pushed.headers['mds-read-after']);
    await until('the third bar on the replica', async () => closes(await get(b, PATH)).includes(3));
    // C checks the databases once a minute: 1.6 s after its first check its replica is past the
    // lag bound for it and its primary still up, so it reads from the primary; when the primary
    // dies, the first read learns it before any check does.
    const c = await startServer({
      databaseUrl: viaPort(db.url, bouncerP.port),
      env: { ...env(1500), MDS_REPLICA_CHECK_MS: '60000' },
    });
    await sleep(1600);
    await primary.kill();
    try {
      // It goes on from the replica (was 503 until the next check, a minute later).
      const replicaReads = await metric(c, 'mds_pg_reads_total', 'database="replica0"');
      const first = await get(c, PATH);
      assert.equal(first.status, 200, first.body);
      assert.deepEqual(closes(first).sort(), [1, 2, 3]);
      assert.ok((await metric(c, 'mds_pg_reads_total', 'database="replica0"')) > replicaReads);
      for (const s of [a, b]) {
        const r = await get(s, PATH);
        assert.equal(r.status, 200, r.body);
        assert.deepEqual(closes(r).sort(), [1, 2, 3]);
        // The token's batch is on the replica: served there.
        assert.equal((await get(s, PATH, { 'MDS-Read-After': token })).status, 200);
        assert.equal((await request(s.port, { method: 'GET', path: '/health' })).status, 200);
      }
      const refused = await pushBatch(a.port, bar('2024-03-06', 4));
      assert.equal(refused.status, 503, refused.body);
      // A token the replica cannot have (a later WAL position): no answer without it, a 503.
      const ahead = await get(b, PATH, { 'MDS-Read-After': 'FF/0' });
      assert.equal(ahead.status, 503);
    } finally {
      await c.kill('SIGTERM');
      await primary.start();
    }
    await until('ingest again', async () => (await pushBatch(a.port, bar('2024-03-06', 4))).status === 200);
  });
});

/** Starts the service against `url` and returns its exit code and output (it should not start). */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const server = spawnServer({ MDS_WORKERS: '1', ...env });
  return { code: await server.exited, out: server.output() };
}

describe(
  'PgBouncer in a mode the service cannot keep its guarantees in',
  { skip: !ready, timeout: 300_000 },
  () => {
    // The machine's server and a database of its own: nothing here stops or pauses a server, so
    // a private cluster (an initdb and a start) is not needed.
    let db: { url: string; drop(): Promise<void> };
    const port = Number(new URL(PG_ADMIN_URL).port || 5432);
    before(async () => {
      db = await createTestDatabase();
    });
    after(async () => {
      await db?.drop();
    });

    it('not told of the pooler: the start stops naming MDS_PG_POOLER', async () => {
      const bouncer = await privatePgBouncer(port);
      try {
        const { code, out } = await refusedStart({ DATABASE_URL: viaPort(db.url, bouncer.port) });
        assert.equal(code, 78, out);
        assert.match(out, /MDS_PG_POOLER=pgbouncer/);
      } finally {
        await bouncer.remove();
      }
    });

    it('statement mode: the start stops asking for transaction mode', async () => {
      const bouncer = await privatePgBouncer(port, 'statement');
      try {
        const { code, out } = await refusedStart({
          DATABASE_URL: viaPort(db.url, bouncer.port),
          MDS_PG_POOLER: 'pgbouncer',
        });
        assert.equal(code, 78, out);
        assert.match(out, /pool_mode=transaction/);
      } finally {
        await bouncer.remove();
      }
    });
  },
);
