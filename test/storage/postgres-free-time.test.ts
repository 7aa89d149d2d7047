// Issue 24 / 28: the PostgreSQL timeouts count the time the thread was free, not its own CPU.
// An ingest thread parsing batches back to back once read an answer, long in its socket, only
// after the expired timer had fired, and answered 503 (docs/deployment.md). A real PostgreSQL;
// the thread is kept busy by a synchronous loop, as a parse does.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { cancelStatement, freeTimeout } from '../../src/storage/postgres/free-time.js';
import { PostgresDb } from '../../src/storage/postgres/postgres-db.js';
import { StoreUnavailableError } from '../../src/storage/store.js';
import { sql } from '../../src/storage/sql.js';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.js';

/** Keeps this thread busy for `ms` without yielding, as a batch's parse does. */
function busy(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // CPU only.
  }
}

/** A TCP server on a free port that accepts and never answers (a hung host). */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const held: net.Socket[] = [];
  const server = net.createServer((s) => held.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of held) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** `fn` over a PostgresDb with these connect and statement limits, closed afterwards. */
async function withDb(
  connectionString: string,
  limits: { connectMs: number; queryMs: number; max?: number },
  fn: (db: PostgresDb) => Promise<void>,
): Promise<void> {
  const db = new PostgresDb({
    connectionString,
    connectionTimeoutMs: limits.connectMs,
    queryTimeoutMs: limits.queryMs,
    ...(limits.max ? { max: limits.max } : {}),
  });
  try {
    await fn(db);
  } finally {
    await db.close();
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('free-time timeouts', { timeout: 60_000 }, () => {
  it('fire once the thread has been idle for their time', async () => {
    const fired = await new Promise<boolean>((resolve) => {
      freeTimeout(50, () => resolve(true));
    });
    assert.equal(fired, true);
  });

  it('do not fire when cleared', async () => {
    let fired = false;
    const clear = freeTimeout(20, () => (fired = true));
    clear();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(fired, false);
  });

  it("do not count the thread's own busy time: expired by the clock, not yet by idle time", async () => {
    let fired = false;
    const done = new Promise<void>((resolve) => {
      freeTimeout(100, () => {
        fired = true;
        resolve();
      });
    });
    busy(300);
    // The loop is back: a wall-clock timer of 100 ms would have fired in this turn's timers phase.
    await nextTurn();
    assert.equal(fired, false, 'still waiting: the thread was never free');
    await done;
    assert.equal(fired, true, 'fires once the thread has been free for its time');
  });
});

describe('cancelStatement: its failures', { timeout: 60_000 }, () => {
  it('rejects for a connection that has no cancel key (never opened)', async () => {
    const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/none' });
    await assert.rejects(cancelStatement(c, 1000), /no cancel key/);
  });

  it('rejects when the server cannot be reached', async () => {
    // A port nothing listens on: bound, then released.
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const c = Object.assign(new pg.Client({ host: '127.0.0.1', port }), { processID: 1, secretKey: 2 });
    await assert.rejects(cancelStatement(c, 1000), /ECONNREFUSED/);
  });

  it('rejects when the server does not close the cancel connection in time', async () => {
    const silent = await silentServer();
    try {
      const c = Object.assign(new pg.Client({ host: '127.0.0.1', port: silent.port }), {
        processID: 1,
        secretKey: 2,
      });
      await assert.rejects(cancelStatement(c, 200), /not answered in time/);
    } finally {
      await silent.close();
    }
  });
});

const runnable = await postgresAvailable();

describe(
  'PostgresDb: timeouts measure the database',
  { skip: !runnable && 'no PostgreSQL', timeout: 120_000 },
  () => {
    let fresh: { url: string; drop(): Promise<void> };
    before(async () => {
      fresh = await createTestDatabase();
    });
    after(async () => {
      await fresh?.drop();
    });

    it('an answer that waited in the socket while the thread was busy is not a timeout (was 503)', async () => {
      // Connect and statement limits far below the thread's busy time.
      await withDb(fresh.url, { connectMs: 200, queryMs: 200 }, async (db) => {
        // A new connection (its start-up round trips) and a statement, both outrun by the busy thread.
        const first = db.rows(sql`SELECT 1 AS one`);
        busy(600);
        assert.deepEqual(await first, [{ one: 1 }]);
        // On a pooled connection: the statement alone.
        const second = db.rows(sql`SELECT 2 AS two`);
        busy(600);
        assert.deepEqual(await second, [{ two: 2 }]);
      });
    });

    it('a server that accepts but never answers is still a 503 after the connect limit', async () => {
      const silent = await silentServer();
      try {
        const url = `postgres://postgres@127.0.0.1:${silent.port}/none`;
        await withDb(url, { connectMs: 200, queryMs: 200 }, (db) =>
          assert.rejects(
            db.rows(sql`SELECT 1`),
            (err: unknown) =>
              err instanceof StoreUnavailableError &&
              /connection timeout|trying to connect/.test(err.message),
          ),
        );
      } finally {
        await silent.close();
      }
    });

    it('a wait for a pooled connection past the connect limit is a 503 and leaves the pool queue', () =>
      withDb(fresh.url, { connectMs: 300, queryMs: 10_000, max: 1 }, async (db) => {
        const holder = db.rows(sql`SELECT pg_sleep(1.5)`);
        await assert.rejects(
          db.rows(sql`SELECT 1`),
          (err: unknown) => err instanceof StoreUnavailableError && /trying to connect/.test(err.message),
        );
        assert.equal(db.poolStats.waiting, 0, 'no waiter left behind in the pool');
        await holder;
        assert.deepEqual(await db.rows(sql`SELECT 4 AS four`), [{ four: 4 }]);
      }));

    it('a statement the server does not answer is still a 503 after the query limit', () =>
      withDb(fresh.url, { connectMs: 2000, queryMs: 300 }, async (db) => {
        await assert.rejects(
          db.rows(sql`SELECT pg_sleep(5)`),
          (err: unknown) => err instanceof StoreUnavailableError && /Query read timeout/.test(err.message),
        );
        // The pool goes on: the timed-out connection was destroyed, not handed out again.
        assert.deepEqual(await db.rows(sql`SELECT 3 AS three`), [{ three: 3 }]);
      }));
  },
);
