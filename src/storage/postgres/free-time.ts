import net from 'node:net';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

/**
 * Timeouts that measure the database, not this thread. A plain timer counts wall time, so when
 * the thread is busy (an ingest thread parsing batches back to back) an answer that arrived in
 * the socket meanwhile is read only after the expired timer has fired: the thread's own CPU was
 * counted as the database's and the batch answered 503. These count only the time the thread's
 * event loop was idle, waiting for I/O: then an answer, had it come, would have been read.
 */

/**
 * Calls `onExpiry` once this thread's event loop has spent `ms` idle since now; returns a
 * function that cancels it. While the thread is busy the deadline moves on by that time: a
 * server that does not answer is noticed `ms` after the thread last had nothing else to do.
 */
export function freeTimeout(ms: number, onExpiry: () => void): () => void {
  const start = performance.eventLoopUtilization();
  let timer: NodeJS.Timeout;
  const arm = (delay: number): void => {
    // Not unref'd: like pg's statement timer, a wait in flight keeps the process until it ends.
    timer = setTimeout(check, delay);
  };
  const check = (): void => {
    const left = ms - performance.eventLoopUtilization(start).idle;
    if (left < 1) onExpiry();
    else arm(left);
  };
  arm(ms);
  return () => clearTimeout(timer);
}

export interface FreeTimeLimits {
  /** ms to open a connection (TCP, start-up, authentication); 0 = none. */
  connectMs: number;
  /** ms to wait for a statement's answer unless the statement says (`query_timeout`); 0 = none. */
  queryMs: number;
}

/** What pg's Client has at run time that its types do not declare. */
interface ClientInternals {
  connection: { stream: { destroy(err?: Error): void } };
  host: string;
  port: number;
  /** null until the server has sent its key (BackendKeyData). */
  processID: number | null;
  secretKey: number | null;
}

type Callback = (err: Error | null | undefined) => void;
type QueryFn = (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) => unknown;
type ConnectFn = (this: pg.Client, callback?: Callback) => unknown;

const baseQuery = pg.Client.prototype.query as unknown as QueryFn;
const baseConnect = pg.Client.prototype.connect as unknown as ConnectFn;

/**
 * A pg Client class whose connect and statement timeouts are free-time timeouts (above), for
 * pg-pool's `Client` option; the pool itself gets no connectionTimeoutMillis or query_timeout (its
 * timers count wall time). Past a limit the connection's socket is destroyed with an error whose
 * message postgres-db.ts's error mapping reads as a lost connection (503, never pooled again).
 */
export function freeTimeClient(limits: FreeTimeLimits): typeof pg.Client {
  class FreeTimeClient extends pg.Client {}
  const destroy = (client: pg.Client, message: string): void =>
    (client as unknown as ClientInternals).connection.stream.destroy(new Error(message));

  Object.defineProperty(FreeTimeClient.prototype, 'connect', {
    value: function connect(this: pg.Client, callback?: Callback): unknown {
      if (limits.connectMs <= 0) return baseConnect.call(this, callback);
      let timedOut = false;
      const clear = freeTimeout(limits.connectMs, () => {
        timedOut = true;
        destroy(this, 'Connection terminated due to connection timeout');
      });
      const why = (err: Error | null | undefined): Error | null | undefined =>
        err && timedOut ? new Error('Connection terminated due to connection timeout', { cause: err }) : err;
      if (callback) {
        return baseConnect.call(this, (err) => {
          clear();
          callback(why(err));
        });
      }
      return (baseConnect.call(this) as Promise<void>).then(
        () => clear(),
        (err: Error) => {
          clear();
          throw why(err);
        },
      );
    },
  });

  Object.defineProperty(FreeTimeClient.prototype, 'query', {
    value: function query(this: pg.Client, config: unknown, values?: unknown, callback?: unknown): unknown {
      const own =
        typeof config === 'object' && config !== null && 'query_timeout' in config
          ? (config as { query_timeout?: unknown }).query_timeout
          : undefined;
      const ms = typeof own === 'number' && own > 0 ? own : limits.queryMs;
      if (ms <= 0) return baseQuery.call(this, config, values, callback);
      // pg would start a wall-time timer of its own for it.
      const plain =
        typeof own === 'number' && typeof (config as { submit?: unknown }).submit !== 'function'
          ? { ...(config as object), query_timeout: undefined }
          : config;
      const clear = freeTimeout(ms, () => destroy(this, 'Query read timeout'));
      const result = baseQuery.call(this, plain, values, callback);
      if (result instanceof Promise) {
        // A derived promise, handled here: the caller handles `result` itself.
        result.then(clear, clear);
      } else if (result !== null && typeof result === 'object' && 'once' in result) {
        // A submittable (a COPY stream): done when it ends either way.
        const stream = result as NodeJS.EventEmitter;
        for (const ev of ['finish', 'end', 'error', 'close']) stream.once(ev, clear);
      } else clear();
      return result;
    },
  });
  return FreeTimeClient;
}

/**
 * Asks the server to cancel the statement running on `client`'s connection with the protocol's
 * CancelRequest (its process id and secret key, on a connection of its own). Unlike
 * pg_cancel_backend(pid) this reaches the right statement through PgBouncer too: the key is the
 * pooler's, which forwards the cancel to the server connection that client's statement runs on.
 * Resolves once the server (or pooler) has closed the cancel connection, its sign that the
 * request was handled; rejects if that takes longer than `timeoutMs` or the connection fails.
 * Sent in plain TCP (the server reads a cancel before any TLS or authentication).
 */
export function cancelStatement(client: pg.Client, timeoutMs: number): Promise<void> {
  const c = client as unknown as ClientInternals;
  const { processID, secretKey } = c;
  if (typeof processID !== 'number' || typeof secretKey !== 'number') {
    return Promise.reject(new Error('no cancel key: the connection is not open'));
  }
  return new Promise<void>((resolve, reject) => {
    const socket = c.host.startsWith('/')
      ? net.connect(`${c.host}/.s.PGSQL.${c.port}`)
      : net.connect(c.port, c.host);
    const timer = setTimeout(
      () => socket.destroy(new Error('the cancel request was not answered in time')),
      timeoutMs,
    );
    socket.once('connect', () => {
      const msg = Buffer.alloc(16);
      msg.writeInt32BE(16, 0);
      msg.writeInt32BE(80877102, 4); // CancelRequest code
      msg.writeInt32BE(processID, 8);
      msg.writeInt32BE(secretKey, 12);
      // Not end(): a pooler may read the end of the stream as the request withdrawn.
      socket.write(msg);
    });
    // The server sends nothing back; anything it did is read and dropped.
    socket.on('data', () => {});
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.once('close', (hadError) => {
      clearTimeout(timer);
      if (!hadError) resolve();
    });
  });
}
