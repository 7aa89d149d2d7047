// The primary dies: a primary and a synchronous standby as private clusters, two service instances
// whose DATABASE_URL names both hosts, pushing batches without a pause while the primary is
// SIGKILLed and the standby promoted (what Patroni does), then, with the old primary rebuilt as a
// standby of the new one, while the new primary is SIGSTOPped and the rebuilt one promoted. A
// ledger of every batch is checked afterwards: each acknowledged batch applied exactly once, each
// other one whole or absent; writes answered again within the documented bound; knowledge
// instants strictly increasing across both failovers; an as_of answer from before them identical.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { QUERY_KEY } from '../helpers/harness.js';
import { batch, days, etfBar } from '../helpers/batches.js';
import {
  privatePostgres,
  privatePostgresAvailable,
  privateStandby,
  type PrivateServer,
} from '../helpers/private-servers.js';
import { request, sleep, startServer, type ServerProcess } from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';

const ready = privatePostgresAvailable();
if (!ready) console.warn('# initdb or pg_basebackup missing: the failover suite is SKIPPED');

/** Writes answered again this long after the primary is lost (docs/deployment.md "Failover"). */
const WRITES_BACK_MS = 15_000;
/** Set once the suite is over, pass or fail: every loop of the test stops (else its process lives on). */
let halted = false;
const ROWS = 20;

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}

async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  assert.fail(`timed out waiting: ${what}`);
}

/** One batch of the ledger: ROWS bars of one source of its own, so its rows are countable. */
interface Entry {
  id: string;
  body: string;
  source: string;
  /** Answered 200 (applied or already applied): the service acknowledged it. */
  acked: boolean;
  /** Every status it was answered, in order. */
  answers: number[];
}

/**
 * Pushes batches one after another on `server` until `stop()`, each retried (same id, same body)
 * after a failed answer, as an upstream does, until acknowledged or stopped.
 */
function pusher(server: ServerProcess, name: string, ledger: Entry[], stopped: () => boolean): Promise<void> {
  return (async () => {
    for (let i = 0; !stopped(); i++) {
      const source = `fo${name}${i}`;
      const id = `failover-${name}-${i}`;
      const rows = days('2020-01-01', ROWS).map((d, k) =>
        etfBar('510300', d, { close: i + k / 100, source }),
      );
      const entry: Entry = {
        id,
        source,
        body: JSON.stringify(batch('etf_daily', rows, { batchId: id })),
        acked: false,
        answers: [],
      };
      ledger.push(entry);
      while (!stopped()) {
        const r = await pushBatch(server.port, entry.body).catch(() => null);
        entry.answers.push(r?.status ?? 0);
        if (r?.status === 200) {
          entry.acked = true;
          break;
        }
        await sleep(r?.headers['retry-after'] ? 200 : 100);
      }
    }
  })();
}

/** ms from `from` until a push to `server` is acknowledged again (a one-row batch of its own). */
async function writesBack(server: ServerProcess, tag: string, from: number): Promise<number> {
  for (let i = 0; ; i++) {
    const id = `back-${tag}-${i}`;
    const body = JSON.stringify(
      batch('etf_daily', [etfBar('510300', '2021-01-04', { source: `back${tag}` })], { batchId: id }),
    );
    const r = await pushBatch(server.port, body).catch(() => null);
    if (r?.status === 200) return Date.now() - from;
    if (Date.now() - from > 120_000) assert.fail(`writes not answered again on ${tag}`);
    await sleep(100);
  }
}

describe('PostgreSQL failover: the primary killed, then frozen', { skip: !ready, timeout: 600_000 }, () => {
  let first: PrivateServer;
  let second: PrivateServer;
  let third: PrivateServer | undefined;
  let a: ServerProcess;
  let b: ServerProcess;
  const dbName = `mds_failover_${process.pid}`;
  const on = (s: PrivateServer): string => `postgres://postgres@127.0.0.1:${s.port}/${dbName}`;

  /** Every transaction waits for the standby's flush: what Patroni's synchronous_mode sets. */
  const synchronous = async (s: PrivateServer): Promise<void> => {
    await sql(s.url, "ALTER SYSTEM SET synchronous_standby_names = '*'");
    await sql(s.url, 'SELECT pg_reload_conf()');
  };

  before(async () => {
    first = await privatePostgres();
    await sql(first.url, `CREATE DATABASE ${dbName}`);
    second = await privateStandby(first);
    await synchronous(first);
    await until('the standby streaming synchronously', async () => {
      const r = await sql(first.url, "SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'");
      return r.rowCount === 1;
    });
  });
  after(async () => {
    halted = true;
    await Promise.all([a?.kill('SIGTERM'), b?.kill('SIGTERM')]);
    for (const s of [third, second, first]) {
      s?.thaw();
      // A thawed server's backends can still be writing as its files go: once more after a pause.
      await s?.remove().catch(async () => {
        await sleep(1000);
        await s.remove();
      });
    }
  });

  it('acknowledged batches survive both failovers exactly once; writes come back within the bound', async (t) => {
    const url = `postgres://postgres@127.0.0.1:${first.port},127.0.0.1:${second.port}/${dbName}?target_session_attrs=read-write`;
    const env = {
      LOG_LEVEL: 'warn',
      MDS_PG_CONNECT_TIMEOUT_MS: '1000',
      MDS_PG_QUERY_TIMEOUT_MS: '2000',
      MDS_REQUIRE_SYNC_STANDBY: '1',
    };
    a = await startServer({ databaseUrl: url, env });
    // B reads from the standby too, while it is one.
    b = await startServer({
      databaseUrl: url,
      env: { ...env, DATABASE_READ_URLS: on(second), MDS_REPLICA_MAX_LAG_MS: '60000' },
    });
    for (const s of [a, b]) assert.doesNotMatch(s.output(), /no synchronous standby/);

    // A point-in-time answer from before any failover, to compare afterwards.
    const seed = batch('etf_daily', [etfBar('510300', '2019-12-31', { close: 1, source: 'seed' })], {
      batchId: 'failover-seed',
    });
    assert.equal((await pushBatch(a.port, JSON.stringify(seed))).status, 200);
    await sleep(20);
    const asOf = new Date().toISOString();
    const asOfPath = `/api/v1/etf/kline?code=510300&as_of=${encodeURIComponent(asOf)}&limit=100`;
    const asOfBefore = await request(a.port, {
      method: 'GET',
      path: asOfPath,
      headers: { 'Q-API-KEY': QUERY_KEY },
    });
    assert.equal(asOfBefore.status, 200);

    const ledger: Entry[] = [];
    let stop = false;
    const pushing = [
      pusher(a, 'a', ledger, () => stop || halted),
      pusher(b, 'b', ledger, () => stop || halted),
    ];
    // Reads on B through the first failover (the replica, then the new primary).
    const reads: number[] = [];
    let stopReads = false;
    const reading = (async () => {
      while (!stopReads && !halted) {
        const r = await request(b.port, {
          method: 'GET',
          path: asOfPath,
          headers: { 'Q-API-KEY': QUERY_KEY },
        });
        reads.push(r.status);
        await sleep(50);
      }
    })();
    await until('batches flowing', async () => ledger.filter((e) => e.acked).length >= 6);

    // 1. SIGKILL of the primary; the synchronous standby is promoted at once.
    const killedAt = Date.now();
    await first.kill();
    await sql(second.url, 'SELECT pg_promote(wait => true)');
    const [backA, backB] = await Promise.all([writesBack(a, 'a1', killedAt), writesBack(b, 'b1', killedAt)]);
    t.diagnostic(`primary killed: writes answered again after ${backA} ms (a), ${backB} ms (b)`);
    assert.ok(backA <= WRITES_BACK_MS && backB <= WRITES_BACK_MS, `writes back after ${backA} / ${backB} ms`);
    stopReads = true;
    await reading;
    assert.ok(reads.length >= 3, `${reads.length} reads`);
    // 200, or 503 with Retry-After while the standby B reads from is being promoted (it stops
    // being a replica, and the primary it becomes is not found yet): never another answer, and
    // 200 again once the new primary is found.
    t.diagnostic(`reads on B: ${reads.length}, ${reads.filter((st) => st === 503).length} answered 503`);
    assert.deepEqual(
      reads.filter((st) => st !== 200 && st !== 503),
      [],
      `reads on B through the failover: ${reads.join(',')}`,
    );
    assert.deepEqual(reads.slice(-3), [200, 200, 200], `reads on B through the failover: ${reads.join(',')}`);
    // The request thread's own locator (its check every second), not the ingest thread's that wrote.
    await until(
      'a failover counted in /metrics',
      async () => {
        const metrics = await request(a.port, { method: 'GET', path: '/metrics' });
        return /^mds_pg_primary_switches_total [1-9]/m.test(metrics.body);
      },
      15_000,
    );
    const ackedAfterFirst = ledger.filter((e) => e.acked).length;
    await until(
      'batches flowing on the new primary',
      async () => ledger.filter((e) => e.acked).length >= ackedAfterFirst + 6,
    );

    // 2. A new synchronous standby of the new primary (as Patroni rebuilds the old one), and a third
    // instance whose URL names the two; then the new primary is frozen and the standby promoted.
    third = await privateStandby(second);
    await synchronous(second);
    await until('the rebuilt standby streaming synchronously', async () => {
      const r = await sql(second.url, "SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'");
      return r.rowCount === 1;
    });
    const url2 = `postgres://postgres@127.0.0.1:${second.port},127.0.0.1:${third.port}/${dbName}`;
    const c = await startServer({ databaseUrl: url2, env });
    try {
      const ledger2: Entry[] = [];
      let stop2 = false;
      const pushing2 = pusher(c, 'c', ledger2, () => stop2 || halted);
      await until('batches flowing on c', async () => ledger2.filter((e) => e.acked).length >= 4);
      // SIGSTOP: the server accepts connections and answers nothing.
      const frozenAt = Date.now();
      second.freeze();
      await sql(third.url, 'SELECT pg_promote(wait => true)');
      const backC = await writesBack(c, 'c2', frozenAt);
      t.diagnostic(`primary frozen: writes answered again after ${backC} ms`);
      assert.ok(backC <= WRITES_BACK_MS, `writes back after ${backC} ms with the primary frozen`);
      const acked2 = ledger2.filter((e) => e.acked).length;
      await until(
        'batches flowing after the freeze',
        async () => ledger2.filter((e) => e.acked).length >= acked2 + 4,
      );
      stop = true;
      stop2 = true;
      await Promise.all([...pushing, pushing2]);
      ledger.push(...ledger2);
    } finally {
      await c.kill('SIGTERM');
    }

    // The ledger, read on the last primary: acknowledged → applied once; otherwise whole or absent.
    const last = third.url.replace(/\/postgres$/, `/${dbName}`);
    const counts = new Map(
      (
        await sql(
          last,
          `SELECT source, count(*)::int AS n FROM etf_daily WHERE source LIKE 'fo%' GROUP BY source`,
        )
      ).rows.map((r: { source: string; n: number }) => [r.source, r.n]),
    );
    const statuses = new Map(
      (await sql(last, `SELECT batch_id, status FROM mds_batches WHERE batch_id LIKE 'failover-%'`)).rows.map(
        (r: { batch_id: string; status: string }) => [r.batch_id, r.status],
      ),
    );
    let acked = 0;
    for (const e of ledger) {
      const n = counts.get(e.source) ?? 0;
      if (e.acked) {
        acked++;
        assert.equal(n, ROWS, `acknowledged ${e.id} (${e.answers.join(',')}) has ${n} rows`);
        assert.notEqual(
          statuses.get(e.id),
          undefined,
          `acknowledged ${e.id} is ${String(statuses.get(e.id))}`,
        );
      } else assert.ok(n === 0 || n === ROWS, `unacknowledged ${e.id} is partly applied: ${n} rows`);
    }
    t.diagnostic(`${ledger.length} batches pushed, ${acked} acknowledged`);
    assert.ok(acked >= 20, `only ${acked} batches acknowledged`);
    // Applied exactly once: one revision per row of a batch (a second application would add none,
    // being equal; so the registry is the check) and one registry row per id.
    const dupes = await sql(
      last,
      `SELECT batch_id FROM mds_batches WHERE batch_id LIKE 'failover-%' GROUP BY batch_id HAVING count(*) > 1`,
    );
    assert.equal(dupes.rowCount, 0);

    // Knowledge instants strictly increasing per dataset, across both failovers.
    const known = (
      await sql(
        last,
        `SELECT known_at FROM mds_changes WHERE dataset = 'etf_daily' AND valid_from > '' ORDER BY valid_from`,
      )
    ).rows.map((r: { known_at: string }) => r.known_at);
    for (let i = 1; i < known.length; i++) {
      assert.ok((known[i] as string) > (known[i - 1] as string), `known_at ${known[i - 1]} then ${known[i]}`);
    }

    // The as_of answer from before the failovers, byte for byte, from an instance on the last
    // primary (a and b know only the dead and the frozen host).
    const d = await startServer({ databaseUrl: last, env });
    try {
      const asOfAfter = await request(d.port, {
        method: 'GET',
        path: asOfPath,
        headers: { 'Q-API-KEY': QUERY_KEY },
      });
      assert.equal(asOfAfter.status, 200);
      assert.equal(asOfAfter.body, asOfBefore.body);
    } finally {
      await d.kill('SIGTERM');
    }
  });
});

describe('MDS_REQUIRE_SYNC_STANDBY', { skip: !ready, timeout: 120_000 }, () => {
  it('warns at start-up when the primary has no synchronous standby', async () => {
    const alone = await privatePostgres();
    try {
      const s = await startServer({
        databaseUrl: alone.url,
        env: { LOG_LEVEL: 'warn', MDS_REQUIRE_SYNC_STANDBY: '1' },
      });
      try {
        await s.waitForOutput('the PostgreSQL primary has no synchronous standby', 30_000);
      } finally {
        await s.kill('SIGTERM');
      }
    } finally {
      await alone.remove();
    }
  });
});
