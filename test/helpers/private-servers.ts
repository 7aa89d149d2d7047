import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { processAlive } from './postgres.js';
import { sleep } from './server-process.js';

/**
 * Database servers a test starts for itself on its own port, so it can freeze (SIGSTOP), thaw,
 * kill and restart them without touching the shared ones. Ports come from 21000–21999.
 */

/**
 * Below the kernel's ephemeral range (32768–60999 on Linux): a port in that range can be taken,
 * between our check and the server's bind, by an outgoing connection or by a service a test
 * started on port 0, and a PgBouncer once failed to start that way (CI, 28 Nov).
 */
const PORTS = { first: 21000, count: 1000 };
/** Claims on ports, one file each holding the claiming process's id, shared by every test process. */
const CLAIMS = path.join(os.tmpdir(), 'mds-test-ports');

/** This process's claims, given up when it exits (a server kept for the whole process never is removed). */
const held = new Set<number>();
process.once('exit', () => {
  for (const port of held) release(port);
});

/** Claims `port` for this process unless a live process holds it (a dead one's claim is taken over). */
function claim(port: number): boolean {
  const file = path.join(CLAIMS, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      held.add(port);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number(fs.readFileSync(file, 'utf8'));
      if (holder > 0 && processAlive(holder)) return false;
      fs.rmSync(file, { force: true });
    }
  }
  return false;
}

/**
 * A port in 21000–21999 that no other test process has claimed and nothing listens on; claimed
 * until release(port). The claim, not the listen check, keeps two suites apart: both could find
 * a port free before either server binds it.
 */
export async function freePort(): Promise<number> {
  fs.mkdirSync(CLAIMS, { recursive: true, mode: 0o1777 });
  const start = Math.floor(Math.random() * PORTS.count);
  for (let i = 0; i < PORTS.count; i++) {
    const port = PORTS.first + ((start + i) % PORTS.count);
    if (!claim(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
    release(port);
  }
  throw new Error(`no free port in ${PORTS.first}-${PORTS.first + PORTS.count - 1}`);
}

/** Gives up this process's claim on `port`. */
function release(port: number): void {
  held.delete(port);
  fs.rmSync(path.join(CLAIMS, String(port)), { force: true });
}

/** A server process; signals reach it and every child it forks. */
export interface PrivateServer {
  readonly port: number;
  readonly url: string;
  /** The server's main process while it runs (the bench reads its CPU time). */
  readonly pid: number | undefined;
  /** SIGSTOP to every process of the server: it accepts TCP connections but answers nothing. */
  freeze(): void;
  thaw(): void;
  /** Kills the server (SIGKILL, all processes) and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data (after kill). */
  start(): Promise<void>;
  /** Kills it and removes its files. */
  remove(): Promise<void>;
  /** Lets this process exit while the server runs (one kept for the whole test process). */
  unref(): void;
}

/** The process ids of `pid`'s children (PostgreSQL's backends each lead a session of their own). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (in parentheses, which may hold spaces): state, ppid, …
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // Exited meanwhile.
    }
  }
  return out;
}

/** Sends `signal` to the server process and every process it forked. */
function signalAll(child: ChildProcess | null, signal: NodeJS.Signals): void {
  const pid = child?.pid;
  if (pid === undefined || child?.exitCode !== null) return;
  for (const p of [pid, ...childrenOf(pid)]) {
    try {
      process.kill(p, signal);
    } catch {
      // Already gone.
    }
  }
}

async function waitUntil(what: string, check: () => Promise<boolean>, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check().catch(() => false)) return;
    // A server that exited will not answer: say so now, not after 30 s.
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before answering`);
    await sleep(100);
  }
  throw new Error(`${what} did not start`);
}

function privateServer(
  port: number,
  url: string,
  run: () => ChildProcess,
  answers: () => Promise<boolean>,
  dir: string,
): PrivateServer {
  let child: ChildProcess | null = null;
  const kill = async (): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    signalAll(c, 'SIGCONT');
    signalAll(c, 'SIGKILL');
    await exited;
  };
  const start = async (): Promise<void> => {
    const c = run();
    child = c;
    await waitUntil(`server on port ${port}`, answers, c);
  };
  return {
    port,
    url,
    get pid() {
      return child?.pid;
    },
    unref: () => child?.unref(),
    freeze: () => signalAll(child, 'SIGSTOP'),
    thaw: () => signalAll(child, 'SIGCONT'),
    kill,
    start,
    async remove() {
      await kill();
      fs.rmSync(dir, { recursive: true, force: true });
      release(port);
    },
  };
}

/** Where PostgreSQL's server programs are: on PATH, or Debian's versioned directory. */
function postgresBin(name: string): string | null {
  const onPath = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath;
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  for (const v of fs.readdirSync(root).sort().reverse()) {
    const p = path.join(root, v, 'bin', name);
    if (fs.existsSync(p)) return p;
  }
  return null;
}

/** PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user. */
function runAs(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string): number =>
    Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Whether a private PostgreSQL cluster can be started here (initdb and postgres found). */
export function privatePostgresAvailable(): boolean {
  return postgresBin('initdb') !== null && postgresBin('postgres') !== null;
}

/** Whether a PostgreSQL server (or a pooler in front of one) answers at `url`. */
function pgAnswers(url: string): () => Promise<boolean> {
  return async () => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } finally {
      await c.end().catch(() => {});
    }
  };
}

/** The PostgreSQL server process on `data`, and how to tell that it answers (`url`). */
function postgresServer(dir: string, data: string, port: number, url: string): PrivateServer {
  const postgres = postgresBin('postgres');
  if (!postgres) throw new Error('postgres not found');
  return privateServer(
    port,
    url,
    () =>
      spawn(
        postgres,
        ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
        { ...runAs(), stdio: 'ignore' },
      ),
    pgAnswers(url),
    dir,
  );
}

/** A temporary directory the server's user owns. */
function serverDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const user = runAs();
  if ('uid' in user) fs.chownSync(dir, user.uid, user.gid);
  return dir;
}

/**
 * A PostgreSQL cluster of its own (initdb in a temporary directory, trust authentication,
 * fsync off), listening on 127.0.0.1:`port`; `url` names its `postgres` database. PostgreSQL 15's
 * defaults (wal_level=replica, max_wal_senders, initdb's trust for replication from 127.0.0.1)
 * let privateStandby() stream from it.
 */
export async function privatePostgres(): Promise<PrivateServer> {
  const initdb = postgresBin('initdb');
  if (!initdb || !postgresBin('postgres')) throw new Error('initdb / postgres not found');
  const port = await freePort();
  const dir = serverDir('mds-pg-');
  const data = path.join(dir, 'data');
  const init = spawnSync(initdb, ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync'], {
    ...runAs(),
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const server = postgresServer(dir, data, port, `postgres://postgres@127.0.0.1:${port}/postgres`);
  await server.start();
  return server;
}

/**
 * A hot standby of `primary` on a port of its own: `pg_basebackup -R` (streaming, with
 * primary_conninfo written for it), started read-only. Pause its replay with
 * `SELECT pg_wal_replay_pause()` on it.
 */
export async function privateStandby(primary: PrivateServer): Promise<PrivateServer> {
  const basebackup = postgresBin('pg_basebackup');
  if (!basebackup) throw new Error('pg_basebackup not found');
  const port = await freePort();
  const dir = serverDir('mds-pg-standby-');
  const data = path.join(dir, 'data');
  const copy = spawnSync(
    basebackup,
    [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      data,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ],
    { ...runAs(), encoding: 'utf8' },
  );
  if (copy.status !== 0) throw new Error(`pg_basebackup failed: ${copy.stderr}`);
  const server = postgresServer(dir, data, port, `postgres://postgres@127.0.0.1:${port}/postgres`);
  await server.start();
  return server;
}

/** Whether PgBouncer is installed (Debian's package: /usr/sbin/pgbouncer). */
export function pgBouncerAvailable(): boolean {
  const found =
    fs.existsSync('/usr/sbin/pgbouncer') || spawnSync('sh', ['-c', 'command -v pgbouncer']).status === 0;
  if (!found && process.env.MDS_REQUIRE_PGBOUNCER === '1') {
    throw new Error('MDS_REQUIRE_PGBOUNCER=1 but pgbouncer is not installed (apt-get install pgbouncer)');
  }
  return found;
}

/**
 * A PgBouncer of its own in front of the PostgreSQL server on `targetPort` (every database, user
 * postgres, trust), in `mode` (transaction by default). `url` names the `postgres` database
 * through it. Runs as the postgres user when root (PgBouncer refuses root, as PostgreSQL does).
 */
export async function privatePgBouncer(
  targetPort: number,
  mode: 'transaction' | 'session' | 'statement' = 'transaction',
): Promise<PrivateServer> {
  const bin = fs.existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : 'pgbouncer';
  const port = await freePort();
  const dir = serverDir('mds-pgbouncer-');
  const ini = path.join(dir, 'pgbouncer.ini');
  fs.writeFileSync(path.join(dir, 'users.txt'), '"postgres" ""\n');
  fs.writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=127.0.0.1 port=${targetPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      `pool_mode = ${mode}`,
      'max_client_conn = 1000',
      'default_pool_size = 20',
      // pg sends none of these, psql-style clients do; statement_timeout is not among them.
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const user = runAs();
  if ('uid' in user) for (const f of fs.readdirSync(dir)) fs.chownSync(path.join(dir, f), user.uid, user.gid);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const server = privateServer(
    port,
    url,
    () => spawn(bin, [ini], { ...user, stdio: 'ignore' }),
    pgAnswers(url),
    dir,
  );
  await server.start();
  return server;
}

/** Whether redis-server is installed. */
export function privateRedisAvailable(): boolean {
  return spawnSync('sh', ['-c', 'command -v redis-server']).status === 0;
}

/** A Redis of its own, without persistence: a restart (kill, start) loses every counter. */
export async function privateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  const server = privateServer(
    port,
    url,
    () =>
      spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
        { stdio: 'ignore' },
      ),
    async () => {
      const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      r.on('error', () => {});
      try {
        await r.connect();
        return (await r.ping()) === 'PONG';
      } finally {
        r.disconnect();
      }
    },
    dir,
  );
  await server.start();
  return server;
}
