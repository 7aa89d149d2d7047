/**
 * Which backend DATABASE_URL names, decided once (create-store.ts opens it; the cluster and the
 * ingest threads ask whether its batches need one writer). Kept apart from create-store.ts so
 * that the cluster's primary, which never opens a store, loads only this.
 */
import { createHash } from 'node:crypto';
import { resolve as resolvePath } from 'node:path';

/** Whether DATABASE_URL is a SQLite file (`sqlite:<path>`, the default). */
export function sqliteUrl(url: string): boolean {
  return url.startsWith('sqlite:');
}

/**
 * The database a DATABASE_URL names, without credentials: `sqlite:<absolute path>` (relative
 * paths resolved against the working directory, as the store opens them) or
 * `postgres://<host>:<port>/<database>`. Two processes use the same database when theirs are
 * equal; `mds keys create` prints it and compares it with a running server's (docs/tools.md).
 * Symbolic links and host aliases (localhost, 127.0.0.1) are not resolved: they differ.
 */
export function databaseIdentity(url: string, cwd: string = process.cwd()): string {
  if (sqliteUrl(url)) {
    const file = url.slice('sqlite:'.length) || './data/market-data.db';
    return file === ':memory:' ? 'sqlite::memory:' : `sqlite:${resolvePath(cwd, file)}`;
  }
  try {
    const u = new URL(url);
    const host = u.searchParams.get('host') ?? (u.hostname.toLowerCase() || 'localhost');
    const db = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username);
    return `postgres://${host}:${u.port || '5432'}/${db}`;
  } catch {
    return 'unknown';
  }
}

/** A short fingerprint of {@link databaseIdentity}: what /health shows (no path, no host). */
export function databaseId(url: string, cwd?: string): string {
  return createHash('sha256').update(databaseIdentity(url, cwd)).digest('hex').slice(0, 16);
}
