import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { sleep } from './server-process.js';

/**
 * Database servers a test starts for itself on its own port, so it can freeze (SIGSTOP), thaw,
 * kill and restart them without touching the shared ones. Ports come from 55200–55299.
 */

/** A free port in 55200–55299 (random start, so concurrent suites rarely probe the same one). */
export async function freePort(): Promise<number> {
  const start = 55200 + Math.floor(Math.random() * 100);
  for (let i = 0; i < 100; i++) {
    const port = 55200 + ((start - 55200 + i) % 100);
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port in 55200-55299');
}

/** A server process; signals reach it and every child it forks. */
export interface PrivateServer {
  readonly port: number;
  readonly url: string;
  /** SIGSTOP to every process of the server: it accepts TCP connections but answers nothing. */
  freeze(): void;
  thaw(): void;
  /** Kills the server (SIGKILL, all processes) and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data (after kill). */
  start(): Promise<void>;
  /** Kills it and removes its files. */
  remove(): Promise<void>;
}

/** The process ids of `pid`'s children (PostgreSQL's backends each lead a session of their own). */
function childrenOf(pid: number): number[] {
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

async function waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check().catch(() => false)) return;
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
    child = run();
    await waitUntil(`server on port ${port}`, answers);
  };
  return {
    port,
    url,
    freeze: () => signalAll(child, 'SIGSTOP'),
    thaw: () => signalAll(child, 'SIGCONT'),
    kill,
    start,
    async remove() {
      await kill();
      fs.rmSync(dir, { recursive: true, force: true });
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

/**
 * A PostgreSQL cluster of its own (initdb in a temporary directory, trust authentication,
 * fsync off), listening on 127.0.0.1:`port`; `url` names its `postgres` database.
 */
export async function privatePostgres(): Promise<PrivateServer> {
  const initdb = postgresBin('initdb');
  const postgres = postgresBin('postgres');
  if (!initdb || !postgres) throw new Error('initdb / postgres not found');
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-pg-'));
  const user = runAs();
  if ('uid' in user) fs.chownSync(dir, user.uid, user.gid);
  const data = path.join(dir, 'data');
  const init = spawnSync(initdb, ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync'], {
    ...user,
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const server = privateServer(
    port,
    url,
    () =>
      spawn(
        postgres,
        ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
        { ...user, stdio: 'ignore' },
      ),
    async () => {
      const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
      try {
        await c.connect();
        await c.query('SELECT 1');
        return true;
      } finally {
        await c.end().catch(() => {});
      }
    },
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
