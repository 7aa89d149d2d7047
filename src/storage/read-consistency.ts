import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What a read request needs from the database that answers it, when reads may be served by a
 * lagging replica (postgres/replica-router.ts; docs/deployment.md "What a read may see"). The
 * HTTP layer opens one session per query request; the router picks a database on the request's
 * first statement and keeps it for the rest, so the version an ETag is built from and the rows
 * come from the same database. Backends without replicas ignore it.
 */
export interface ReadNeeds {
  /** Read-your-writes: a token from a batch answer (MDS-Read-After; a PostgreSQL WAL position). */
  after?: string;
  /** Monotonic reads: least versions per dataset (from the ETag the client sent back). */
  versions: Map<string, number>;
  /** `as_of` (ms since the epoch): the database must hold every commit up to this instant. */
  asOf?: number;
}

export interface ReadSession {
  readonly needs: ReadNeeds;
  /** The database each router picked for this request (its own handle), on its first read. */
  readonly pins: Map<object, unknown>;
}

const sessions = new AsyncLocalStorage<ReadSession>();

/** Runs `fn` (and everything it starts) as one read request with these needs. */
export function withReadSession<T>(needs: Partial<ReadNeeds>, fn: () => T): T {
  return sessions.run({ needs: { versions: new Map(), ...needs }, pins: new Map() }, fn);
}

/** The current request's session, if any (background reads and the CLI have none). */
export function readSession(): ReadSession | undefined {
  return sessions.getStore();
}

/**
 * `fn` bound to the current session, for work pulled later from outside it (an export's pages
 * are read when the client's socket drains, not in the handler's continuation).
 */
export function bindReadSession<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  const session = sessions.getStore();
  return session ? (...args: A) => sessions.run(session, () => fn(...args)) : fn;
}

/** A read-your-writes token, as PostgreSQL writes a WAL position (`16/B374D848`). */
export const READ_TOKEN = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/i;

/** A WAL position as a number, for comparing (its two halves are 32-bit hex). */
export function lsnValue(lsn: string): bigint {
  const [hi = '0', lo = '0'] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}
