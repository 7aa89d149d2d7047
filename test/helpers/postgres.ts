import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';

/** PostgreSQL for tests: each caller gets a database of its own, dropped afterwards. */
export const PG_ADMIN_URL = process.env.MDS_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let available: Promise<boolean> | null = null;

export function postgresAvailable(): Promise<boolean> {
  available ??= (async () => {
    // Under the runner, which reached PostgreSQL and made the run's template (createMigratedTemplate),
    // a file does not ask again: one connection less per file, and no probe to time out beside a
    // file's synchronous start-up work on a loaded machine (seen in CI).
    if (process.env.MDS_TEST_PG_TEMPLATE) return true;
    let err: unknown;
    // Run alone: a connect timed out is tried again (the timer can fire before the socket's answer
    // is read when synchronous work held the loop for longer); a refused connection is not.
    for (let attempt = 1; attempt <= 3; attempt++) {
      err = await probePostgres();
      if (err === null) return true;
      if (!/timeout/i.test(String(err))) break;
    }
    if (process.env.MDS_REQUIRE_POSTGRES === '1') {
      throw new Error(
        `MDS_REQUIRE_POSTGRES=1 but PostgreSQL is unreachable at ${PG_ADMIN_URL}: ${String(err)}`,
      );
    }
    console.warn(`# PostgreSQL unreachable at ${PG_ADMIN_URL}: PostgreSQL suites are SKIPPED`);
    return false;
  })();
  return available;
}

/** null when PostgreSQL answered `SELECT 1`, else what went wrong. */
async function probePostgres(): Promise<unknown> {
  const client = new pg.Client({
    connectionString: PG_ADMIN_URL,
    // Generous: a busy CI machine can take seconds to accept; MDS_REQUIRE_POSTGRES=1 must not fail on that.
    connectionTimeoutMillis: 15_000,
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return err;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * MDS_TEST_VIA_PGBOUNCER=1: the suites reach PostgreSQL through a PgBouncer of their own in
 * transaction mode (one per test process, in front of the test server), and the service runs
 * with MDS_PG_POOLER=pgbouncer (startServer, testConfig).
 */
export const VIA_PGBOUNCER = process.env.MDS_TEST_VIA_PGBOUNCER === '1';

let bouncerPort: Promise<number> | null = null;

/** The port of this process's PgBouncer in front of the test server (started on first use). */
function pgBouncerPort(): Promise<number> {
  bouncerPort ??= (async () => {
    const { pgBouncerAvailable, privatePgBouncer } = await import('./private-servers.js');
    if (!pgBouncerAvailable()) throw new Error('MDS_TEST_VIA_PGBOUNCER=1 but pgbouncer is not installed');
    const bouncer = await privatePgBouncer(Number(new URL(PG_ADMIN_URL).port || 5432));
    // Killed when the test process exits (kill() signals at once, synchronously).
    bouncer.unref();
    process.once('exit', () => void bouncer.kill());
    return bouncer.port;
  })();
  return bouncerPort;
}

/** The service's environment for the test database: the pooler mode when through PgBouncer. */
export const POOLER_ENV: Record<string, string> = VIA_PGBOUNCER ? { MDS_PG_POOLER: 'pgbouncer' } : {};
/** The same for a store a test opens itself (createStore's tuning). */
export const POOLER_TUNING: { MDS_PG_POOLER?: 'pgbouncer' } = VIA_PGBOUNCER
  ? { MDS_PG_POOLER: 'pgbouncer' }
  : {};

/**
 * The test server's database migrated once for the whole run (scripts/run-tests.ts makes it and
 * names it here): `createTestDatabase(…, { migrated: true })` clones it instead of leaving the
 * migration to the test. A fresh database's migration costs about 1 s of CPU (0.5 s in its
 * backend, 0.5 s in the process that migrates), a clone 0.1 s and its re-check 0.25 s; on a
 * machine where system calls cost more, 1.7 s against 1.0 s, the clone's backend opening each of
 * the template's 991 relations' files (docs/testing.md).
 */
const PG_TEMPLATE = process.env.MDS_TEST_PG_TEMPLATE;

/**
 * A new database on the server of `adminUrl` (tests; the benches use it too): empty, or with
 * `migrated` a clone of the run's migrated template when there is one (the test server only;
 * run alone, a file gets an empty database and its migration runs as before). Its URL through
 * this process's PgBouncer when MDS_TEST_VIA_PGBOUNCER=1 and `adminUrl` is the test server.
 */
export async function createTestDatabase(
  adminUrl = PG_ADMIN_URL,
  prefix = 'mds_test',
  opts: { migrated?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const template =
    opts.migrated && adminUrl === PG_ADMIN_URL && PG_TEMPLATE ? ` TEMPLATE ${PG_TEMPLATE}` : '';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}${template}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const direct = url.toString();
  return {
    url: VIA_PGBOUNCER && adminUrl === PG_ADMIN_URL ? viaPort(direct, await pgBouncerPort()) : direct,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        // Also when the DROP fails: an open client would keep the test's process alive, and the
        // runner waiting for it, forever.
        await c.end();
      }
    },
  };
}

/** `url` with its host and port replaced: to reach the same database through a proxy. */
export function viaPort(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

/**
 * A TCP proxy in front of the test PostgreSQL, so a test can make "the database" unreachable
 * or drop every connection at once (as a restart does) without touching the shared server.
 */
export interface PgProxy {
  readonly port: number;
  /** Starts accepting connections on `port` (again). */
  start(): Promise<void>;
  /** Stops accepting and cuts every open connection: PostgreSQL "down". */
  stop(): Promise<void>;
  /**
   * Closes the next `count` new connections at once, leaving those already open alone (a server
   * that cannot be reached for a moment); resolves once it has, new ones proxied again.
   */
  refuseNew(count: number): Promise<void>;
  /** Connections currently proxied. */
  readonly open: number;
}

/** A proxy on a free port, not yet accepting: nothing listens there until start(). */
export async function pgProxy(): Promise<PgProxy> {
  const target = new URL(PG_ADMIN_URL);
  const sockets = new Set<net.Socket>();
  let refusing: { left: number; done: () => void } | null = null;
  const server = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      if (--refusing.left === 0) {
        refusing.done();
        refusing = null;
      }
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    const cut = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    client.pipe(upstream).pipe(client);
  });
  // A free port: bind to 0, note the port, release it; start() binds it again.
  const port = await new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const p = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(p));
    });
  });
  return {
    port,
    get open() {
      return sockets.size / 2;
    },
    start: () =>
      new Promise<void>((resolve, reject) => {
        if (server.listening) return resolve();
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      }),
    refuseNew: (count) => new Promise<void>((done) => (refusing = { left: count, done })),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        sockets.clear();
        if (!server.listening) return resolve();
        server.close(() => resolve());
      }),
  };
}

/** Terminates every other session on database `name`; returns how many. */
export async function terminateSessions(name: string): Promise<number> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    const r = await c.query(
      'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    return Number((r.rows[0] as { n: string }).n);
  } finally {
    await c.end();
  }
}

/** The database name of a postgres:// URL. */
export const databaseName = (url: string): string => new URL(url).pathname.slice(1);

/**
 * The run's migrated template (scripts/run-tests.ts, before the first file): a database of the
 * test server migrated by the current sources, that `createTestDatabase(…, { migrated: true })`
 * clones. Templates left by a runner that no longer runs (killed before it dropped its own) are
 * dropped first. Null without PostgreSQL.
 */
export async function createMigratedTemplate(): Promise<{ name: string; drop(): Promise<void> } | null> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 15_000 });
  try {
    await admin.connect();
  } catch {
    return null; // the suites say so themselves
  }
  try {
    const left = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'mds\\_template\\_%'",
    );
    for (const { datname } of left.rows) {
      const pid = Number(/^mds_template_(\d+)_/.exec(datname)?.[1]);
      if (pid > 0 && !processAlive(pid)) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
  const db = await createTestDatabase(PG_ADMIN_URL, 'mds_template');
  const [{ createStore }, { CATALOG }] = await Promise.all([
    import('../../src/storage/create-store.js'),
    import('../../src/catalog/catalog.js'),
  ]);
  const store = await createStore(db.url, CATALOG, {});
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
  return { name: databaseName(db.url), drop: db.drop };
}

/** Whether `pid` names a running process (EPERM: it runs, as another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
