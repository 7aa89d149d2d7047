import type Database from 'better-sqlite3';
import type { Catalog } from '../../catalog/catalog.js';
import { SqlStore } from '../sql-store.js';
import { SqliteDb, type SqliteOptions } from './sqlite-db.js';

/** The embedded store (the default): the shared store parts over SqliteDb. */
export class SqliteStore extends SqlStore {
  private readonly sqlite: SqliteDb;

  constructor(catalog: Catalog, opts: SqliteOptions) {
    const db = new SqliteDb(opts);
    super(catalog, db);
    this.sqlite = db;
  }

  /** Exposed for fault-injection tests (e.g. max_page_count); not part of Store. */
  get raw(): Database.Database {
    return this.sqlite.raw;
  }
}
