import { sqliteUrl } from '../model/database-url.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Config } from '../config.js';
import type { Store } from './store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { SqliteCheckpoints } from './sqlite/sqlite-db.js';
import type { ReplicaOptions } from './postgres/postgres-store.js';

/** Connection settings of the stores (config.ts documents each; sqlite-db.ts the checkpoints). */
export type StoreTuning = Partial<
  Pick<
    Config,
    | 'MDS_SQLITE_BUSY_TIMEOUT_MS'
    | 'MDS_PG_POOL_SIZE'
    | 'MDS_PG_STATEMENT_TIMEOUT_MS'
    | 'MDS_PG_CONNECT_TIMEOUT_MS'
    | 'MDS_PG_QUERY_TIMEOUT_MS'
    | 'MDS_PG_PRIMARY_CHECK_MS'
    | 'MDS_PG_POOLER'
    | 'MDS_QUERY_TIMEOUT_MS'
  >
> & {
  sqliteCheckpoints?: SqliteCheckpoints;
  /**
   * PostgreSQL read replicas (DATABASE_READ_URLS) and their bounds: only the server's request
   * threads read through them (serve.ts); ingest threads and the CLI use the primary alone.
   */
  replicas?: ReplicaOptions;
  /** SQLite: processes that read dataset rows (sqlite/reader-pool.ts); unset or 0: none. */
  readerProcesses?: number;
};

/** Picks the store from DATABASE_URL: `sqlite:<path>` (default) or `postgres://…`. */
export async function createStore(
  databaseUrl: string,
  catalog: Catalog,
  tuning: StoreTuning = {},
): Promise<Store> {
  if (sqliteUrl(databaseUrl)) {
    if (tuning.replicas && tuning.replicas.urls.length > 0) {
      throw new Error('DATABASE_READ_URLS needs PostgreSQL (DATABASE_URL=postgres://…)');
    }
    return new SqliteStore(catalog, {
      file: databaseUrl.slice('sqlite:'.length) || './data/market-data.db',
      ...(tuning.MDS_SQLITE_BUSY_TIMEOUT_MS !== undefined
        ? { busyTimeoutMs: tuning.MDS_SQLITE_BUSY_TIMEOUT_MS }
        : {}),
      ...(tuning.sqliteCheckpoints !== undefined ? { checkpoints: tuning.sqliteCheckpoints } : {}),
      ...(tuning.readerProcesses !== undefined ? { readerProcesses: tuning.readerProcesses } : {}),
      ...(tuning.MDS_QUERY_TIMEOUT_MS !== undefined ? { queryTimeoutMs: tuning.MDS_QUERY_TIMEOUT_MS } : {}),
    });
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    if (tuning.replicas && !tuning.replicas.urls.every((u) => /^postgres(ql)?:\/\//.test(u))) {
      throw new Error('DATABASE_READ_URLS must be postgres:// URLs, comma-separated');
    }
    return new PostgresStore(
      catalog,
      {
        connectionString: databaseUrl,
        ...(tuning.MDS_PG_POOLER === 'pgbouncer' ? { pooler: true } : {}),
        ...(tuning.MDS_PG_POOL_SIZE !== undefined ? { max: tuning.MDS_PG_POOL_SIZE } : {}),
        ...(tuning.MDS_PG_STATEMENT_TIMEOUT_MS !== undefined
          ? { statementTimeoutMs: tuning.MDS_PG_STATEMENT_TIMEOUT_MS }
          : {}),
        ...(tuning.MDS_PG_CONNECT_TIMEOUT_MS !== undefined
          ? { connectionTimeoutMs: tuning.MDS_PG_CONNECT_TIMEOUT_MS }
          : {}),
        ...(tuning.MDS_PG_QUERY_TIMEOUT_MS !== undefined
          ? { queryTimeoutMs: tuning.MDS_PG_QUERY_TIMEOUT_MS }
          : {}),
        ...(tuning.MDS_QUERY_TIMEOUT_MS !== undefined ? { readDeadlineMs: tuning.MDS_QUERY_TIMEOUT_MS } : {}),
        ...(tuning.MDS_PG_PRIMARY_CHECK_MS !== undefined
          ? { primaryCheckMs: tuning.MDS_PG_PRIMARY_CHECK_MS }
          : {}),
      },
      tuning.replicas,
    );
  }
  throw new Error(
    `DATABASE_URL must start with sqlite: or postgres:// (got "${databaseUrl.split(':')[0]}:…")`,
  );
}
