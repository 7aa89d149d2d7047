import type { Catalog } from '../../catalog/catalog.js';
import { SqlStore } from '../sql-store.js';
import { PostgresDb, type PostgresOptions } from './postgres-db.js';

/** The PostgreSQL store: the shared store parts over PostgresDb. */
export class PostgresStore extends SqlStore {
  private readonly pg: PostgresDb;

  constructor(catalog: Catalog, opts: PostgresOptions) {
    const db = new PostgresDb(opts);
    super(catalog, db);
    this.pg = db;
  }

  /** Pool counters, for tests and metrics. */
  get poolStats(): { total: number; idle: number; waiting: number } {
    return this.pg.poolStats;
  }
}
