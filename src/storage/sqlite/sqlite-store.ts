import type Database from 'better-sqlite3';
import type { Catalog } from '../../catalog/catalog.js';
import { SqlStore } from '../sql-store.js';
import { SqliteDb, type SqliteOptions } from './sqlite-db.js';
import { ReaderPool, ThreadReads } from './reader-pool.js';

export interface SqliteStoreOptions extends SqliteOptions {
  /** Processes that read dataset rows (reader-pool.ts); 0 or unset: this thread reads them. */
  readerProcesses?: number;
  /** ms a read on a reader process may take before it is stopped (504); 0: no limit. */
  queryTimeoutMs?: number;
}

/**
 * The embedded store (the default): the shared store parts over SqliteDb, dataset rows read on
 * reader processes when there are some.
 */
export class SqliteStore extends SqlStore {
  private readonly sqlite: SqliteDb;
  private readonly readers: ReaderPool | null;

  constructor(catalog: Catalog, opts: SqliteStoreOptions) {
    const db = new SqliteDb(opts);
    const readerCount = opts.file === ':memory:' ? 0 : (opts.readerProcesses ?? 0);
    const readers = readerCount > 0 ? new ReaderPool(opts.file, readerCount, opts.queryTimeoutMs ?? 0) : null;
    super(catalog, db, readers ? { datasets: db, keys: db, rows: new ThreadReads(readers) } : undefined);
    this.sqlite = db;
    this.readers = readers;
  }

  override async close(): Promise<void> {
    await this.readers?.close();
    await super.close();
  }

  /** Exposed for fault-injection tests (e.g. max_page_count); not part of Store. */
  get raw(): Database.Database {
    return this.sqlite.raw;
  }
}
