import pg from 'pg';
import { StoreUnavailableError } from '../store.js';

/**
 * Which PostgreSQL failures mean "the database cannot answer now" (HTTP 503 with Retry-After)
 * rather than a bug (500), and which leave a connection unusable (destroy, never pool it again).
 */

/** SQLSTATEs answered with 503: the database is there but cannot serve this request now. */
const UNAVAILABLE_SQLSTATES = new Set([
  '57014', // query_canceled: statement_timeout
  '40001', // serialization_failure (after our retries)
  '40P01', // deadlock_detected (after our retries)
  '55P03', // lock_not_available
  '25006', // read_only_sql_transaction: connected to a standby after a failover
]);

/** SQLSTATE classes answered with 503: connection exceptions, resources, operator intervention. */
const UNAVAILABLE_CLASSES = ['08', '53', '57P'];

/** Messages of pg / pg-pool errors that carry no code but mean "no usable connection". */
const CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|not queryable|Cannot use a pool after calling end|Query read timeout|connection timeout/i;

function sqlState(err: unknown): string | null {
  if (err instanceof pg.DatabaseError && typeof err.code === 'string') return err.code;
  return null;
}

/** Stream errors of a COPY whose connection died under it. */
const STREAM_CODES = new Set([
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
]);

function systemCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (/^E[A-Z]+$/.test(code) || STREAM_CODES.has(code))) return code;
  if (err instanceof AggregateError) {
    for (const inner of err.errors) {
      const c = systemCode(inner);
      if (c) return c;
    }
  }
  return null;
}

/** The connection that raised this error must not be reused. */
export function breaksConnection(err: unknown): boolean {
  const state = sqlState(err);
  if (state !== null) return state.startsWith('08') || state.startsWith('57P');
  if (systemCode(err) !== null) return true;
  return err instanceof Error && CONNECTION_MESSAGES.test(err.message);
}

export function isUnavailable(err: unknown): boolean {
  const state = sqlState(err);
  if (state !== null) {
    return UNAVAILABLE_SQLSTATES.has(state) || UNAVAILABLE_CLASSES.some((c) => state.startsWith(c));
  }
  return breaksConnection(err);
}

/** Retried inside applyBatch before giving up with a 503. */
export function isRetryable(err: unknown): boolean {
  const state = sqlState(err);
  return state === '40001' || state === '40P01';
}

export function isBatchIdTaken(err: unknown): boolean {
  return sqlState(err) === '23505' && (err as pg.DatabaseError).constraint === 'mds_batches_pkey';
}

/** Rethrows as StoreUnavailableError when the database is the problem, else unchanged. */
export function translate(err: unknown): never {
  if (err instanceof StoreUnavailableError) throw err;
  if (isUnavailable(err)) {
    const state = sqlState(err) ?? systemCode(err);
    const detail = err instanceof Error ? err.message : String(err);
    throw new StoreUnavailableError(`database unavailable (${state ?? 'connection'}: ${detail})`, {
      cause: err,
      condition: state ?? 'connection',
    });
  }
  throw err;
}
