import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { after, before } from 'node:test';
import { ADMIN_TOKEN, freshDatabaseUrl, INGEST_KEY, QUERY_KEY, type Backend } from './harness.js';
import { POOLER_ENV } from './postgres.js';
import { SERVER_MAIN } from './built.js';
import { ROOT } from './repo-root.js';

/**
 * The real server (`node dist/bundle/main.js`, built) as a child process on a random loopback
 * port: for faults that only a separate process can suffer (SIGKILL, SIGTERM, restarts).
 */

/** What test/helpers/ingest-hooks.mjs prints before it pauses a batch just before commit. */
export const PAUSE_MARKER = 'MDS_TEST_PAUSE_BEFORE_COMMIT';

export interface ServerProcess {
  readonly port: number;
  readonly base: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /**
   * Resolves when `text` appears in the output from offset `from` on (or rejects after
   * `timeoutMs`): a server that served earlier requests has logged the same lines before.
   */
  waitForOutput(text: string, timeoutMs?: number, from?: number): Promise<void>;
  /** Sends the signal; resolves with the exit code / signal once the process is gone. */
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when the process has exited. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartOptions {
  /** DATABASE_URL of the server (required: restarts reuse it). */
  databaseUrl: string;
  env?: Record<string, string>;
  /** How long to wait for /health to answer 200. */
  readyTimeoutMs?: number;
  /** Load the test-only ingest hooks (test/helpers/ingest-hooks.mjs; set up by `env`). */
  hooks?: boolean;
}

/**
 * The built server on `env` over a bare environment (PATH, HOME, any port on 127.0.0.1), for a
 * test that watches its start itself (refused, retried, clustered): everything it writes, and its
 * exit code. startServer, by contrast, waits for /health.
 */
export function spawnServer(env: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, [SERVER_MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const add = (c: Buffer): void => {
    out += c.toString('utf8');
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, output: () => out, exited };
}

export async function startServer(opts: StartOptions): Promise<ServerProcess> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATABASE_URL: opts.databaseUrl,
    MDS_INGEST_KEYS: INGEST_KEY,
    MDS_QUERY_KEYS: QUERY_KEY,
    MDS_ADMIN_TOKEN: ADMIN_TOKEN,
    MDS_SHUTDOWN_GRACE_MS: '10000',
    // One process (the default is one per core): these tests signal and inspect the server
    // itself. Cluster mode is tested with MDS_WORKERS set (cluster-workers.test.ts).
    MDS_WORKERS: '1',
    ...POOLER_ENV,
    ...opts.env,
  };
  const hooks = opts.hooks ? ['--import', './test/helpers/ingest-hooks.mjs'] : [];
  const child = spawn(process.execPath, [...hooks, SERVER_MAIN], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters: { text: string; from: number; resolve: () => void }[] = [];
  const onData = (chunk: Buffer): void => {
    out += chunk.toString('utf8');
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i] as { text: string; from: number; resolve: () => void };
      if (out.includes(w.text, w.from)) {
        waiters.splice(i, 1);
        w.resolve();
      }
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });

  const waitForOutput = (text: string, timeoutMs = 30_000, from = 0): Promise<void> =>
    new Promise((resolve, reject) => {
      if (out.includes(text, from)) return resolve();
      const timer = setTimeout(
        () => reject(new Error(`server output never showed "${text}"; output:\n${out.slice(-3000)}`)),
        timeoutMs,
      );
      waiters.push({
        text,
        from,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
      void exit.then(() => {
        clearTimeout(timer);
        if (!out.includes(text, from))
          reject(new Error(`server exited before "${text}"; output:\n${out.slice(-3000)}`));
      });
    });

  // Generous: a server on a fresh PostgreSQL database migrates it first, which took 21 s at a load
  // average of 30 and over 60 s at 45–55 on a 2-core machine.
  const readyTimeout = opts.readyTimeoutMs ?? 180_000;
  const port = Number(env.PORT);
  try {
    const deadline = Date.now() + readyTimeout;
    for (;;) {
      const status = await httpStatus(port, '/health').catch(() => 0);
      if (status === 200) break;
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`server exited during start; output:\n${out.slice(-3000)}`);
      }
      if (Date.now() > deadline) throw new Error(`server never became healthy; output:\n${out.slice(-3000)}`);
      await sleep(100);
    }
  } catch (err) {
    child.kill('SIGKILL');
    await exit;
    throw err;
  }

  return {
    port,
    base: `http://127.0.0.1:${port}`,
    child,
    output: () => out,
    waitForOutput,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exit;
    },
    exited: () => exit,
  };
}

/** The ingest endpoint, and the headers of a batch POSTed to it (StagedPost). */
/**
 * Two processes on one database: a writer that holds each change while `holdFile` exists
 * (MDS_TEST_HOLD_FILE, where the test hooks say) and a reader with its own connections, for
 * tests that read while a change is held (knowledge-time, minute-during-batch).
 */
export async function heldWriterAndReader(
  databaseUrl: string,
  holdFile: string,
): Promise<{ writer: ServerProcess; reader: ServerProcess }> {
  const writer = await startServer({
    databaseUrl,
    env: { MDS_TEST_HOLD_FILE: holdFile, LOG_LEVEL: 'warn' },
    hooks: true,
    readyTimeoutMs: 180_000,
  });
  const reader = await startServer({ databaseUrl, env: { LOG_LEVEL: 'warn' }, readyTimeoutMs: 180_000 });
  return { writer, reader };
}

export const INGEST_PATH = '/api/v1/upstream/ingest/batches';
export const INGEST_HEADERS = { 'Content-Type': 'application/json', 'UP-API-KEY': INGEST_KEY };

/**
 * Resolves once the server has logged a request to the ingest endpoint (in its output from
 * offset `from` on): it has read the request's headers (it logs a request before it reads the
 * body). The kill points and signals that belong right after the headers wait for this rather
 * than for a fixed time.
 */
export const ingestLogged = (server: ServerProcess, from = 0): Promise<void> =>
  server.waitForOutput(`"url":"${INGEST_PATH}"`, 30_000, from);

/** One server process at a time on a database of its own: the kill-point suites' set-up. */
export interface ServerOnDatabase {
  /** DATABASE_URL of the database (after the suite's `before`). */
  readonly url: string;
  /** The server started last, while it runs. */
  readonly server: ServerProcess | null;
  /** Starts a server on the database (the suite's `env` under the test's own); one still running is killed first. */
  start(opts?: Omit<StartOptions, 'databaseUrl'>): Promise<ServerProcess>;
  /** Signals the running server, if any, and resolves with its exit once it is gone. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null } | null>;
}

/**
 * A fresh database of `backend` for the enclosing `describe`, and the server a test runs, kills
 * and restarts on it. Registers the block's hooks: the database is created before its tests;
 * after them the last server is killed (a test that failed half-way left it running) and the
 * database dropped.
 */
export function serverOnFreshDatabase(backend: Backend, env: Record<string, string> = {}): ServerOnDatabase {
  let db: { url: string; drop(): Promise<void> } | null = null;
  let server: ServerProcess | null = null;
  const stop: ServerOnDatabase['stop'] = async (signal = 'SIGKILL') => {
    const s = server;
    server = null;
    return s ? s.kill(signal) : null;
  };
  before(async () => {
    db = await freshDatabaseUrl(backend, { migrated: true });
  });
  after(async () => {
    await stop();
    await db?.drop();
  });
  return {
    get url() {
      if (!db) throw new Error("the database is created in the suite's before hook");
      return db.url;
    },
    get server() {
      return server;
    },
    async start(opts = {}) {
      await stop();
      server = await startServer({ ...opts, databaseUrl: this.url, env: { ...env, ...opts.env } });
      return server;
    },
    stop,
  };
}

/** A port free right now on 127.0.0.1 (the kernel's pick, released for the child to bind). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Waits until `n` cluster workers have said both "database ready" and "Server listening". */
export async function workersServing(server: ServerProcess, n: number, timeoutMs = 120_000): Promise<void> {
  const pids = (msg: string): Set<string> =>
    new Set(
      [...server.output().matchAll(new RegExp(`"pid":(\\d+)[^\\n]*${msg}`, 'g'))].map((m) => m[1] as string),
    );
  const deadline = Date.now() + timeoutMs;
  while (pids('database ready').size < n || pids('Server listening').size < n) {
    if (Date.now() > deadline)
      throw new Error(`${n} workers never served; output:\n${server.output().slice(-3000)}`);
    await sleep(100);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** GET on a fresh connection; resolves with the status code. */
export function httpStatus(
  port: number,
  urlPath: string,
  headers: http.OutgoingHttpHeaders = {},
): Promise<number> {
  return request(port, { method: 'GET', path: urlPath, headers }).then((r) => r.status);
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on a fresh connection (no keep-alive pooling), body sent at once. */
export function request(
  port: number,
  opts: { method: string; path: string; headers?: http.OutgoingHttpHeaders; body?: string | Buffer },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: opts.method,
        path: opts.path,
        headers: { connection: 'close', ...opts.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * A POST whose body is written in steps the test controls, over a raw socket: so a test can
 * stop after the headers or half the body and then kill the server.
 */
export class StagedPost {
  private readonly socket: net.Socket;
  private readonly received: Promise<string>;
  private sent = 0;

  constructor(
    port: number,
    urlPath: string,
    private readonly body: Buffer,
    headers: Record<string, string>,
  ) {
    this.socket = net.connect({ host: '127.0.0.1', port });
    this.socket.on('error', () => {});
    const chunks: Buffer[] = [];
    this.received = new Promise((resolve) => {
      this.socket.on('data', (c: Buffer) => chunks.push(c));
      this.socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    const head =
      `POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n` +
      `Content-Length: ${body.length}\r\n` +
      Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('') +
      '\r\n';
    this.socket.write(head);
  }

  /** Writes the body up to `fraction` (0..1) of its length; resolves once flushed to the kernel. */
  async sendUpTo(fraction: number): Promise<void> {
    const end = Math.floor(this.body.length * fraction);
    if (end <= this.sent) return;
    const part = this.body.subarray(this.sent, end);
    this.sent = end;
    await new Promise<void>((resolve) => {
      if (this.socket.destroyed) return resolve();
      this.socket.write(part, () => resolve());
    });
  }

  /** The raw response text (status line, headers, body) once the connection closes. */
  response(): Promise<string> {
    return this.received;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/**
 * Writes `bytes` (a whole request, or only its headers) on a fresh raw socket and returns what
 * came back once the server closed it (or after `giveUpMs`).
 */
export async function rawExchange(port: number, bytes: Buffer | string, giveUpMs = 10_000): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  let got = '';
  socket.on('data', (d: Buffer) => (got += d.toString('utf8')));
  socket.write(bytes);
  await Promise.race([once(socket, 'close'), sleep(giveUpMs)]);
  socket.destroy();
  return got;
}

/** Status code of a raw HTTP response text, or 0 when there is none. */
export function rawStatus(raw: string): number {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(raw);
  return m ? Number(m[1]) : 0;
}
