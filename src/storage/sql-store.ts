import type { Catalog } from '../catalog/catalog.js';
import { storageCatalog } from '../catalog/catalog.js';
import { SqlBatchStore } from './batch-store.js';
import { SqlDatasetStore } from './dataset-store.js';
import type { Db, ReadDb } from './db.js';
import { SqlKeyStore } from './key-store.js';
import { migrate } from './migrations.js';
import { SqlRevisionStore } from './revision-store.js';
import type { BatchStore, ChangeStore, DatasetStore, KeyStore, RevisionStore, Store } from './store.js';
import { SqlChangeStore } from './change-events.js';

/** The store of a backend: its parts over one executor, composed for wiring. */
export class SqlStore implements Store {
  readonly backend: 'sqlite' | 'postgres';
  readonly datasets: DatasetStore;
  readonly batches: BatchStore;
  readonly keys: KeyStore;
  readonly revisions: RevisionStore;
  readonly changes: ChangeStore;

  /**
   * `reads`: where dataset reads and key lookups go when not to `db` (PostgreSQL read replicas,
   * postgres/replica-router.ts); every write, the batch registry and revisions stay on `db`.
   * `rows`: the statements over dataset rows, when not to `datasets` (SQLite's reader
   * processes, sqlite/reader-pool.ts).
   */
  private readonly catalog: Catalog;

  constructor(
    catalog: Catalog,
    protected readonly db: Db,
    reads: { datasets: ReadDb; keys: ReadDb; rows?: ReadDb } = { datasets: db, keys: db },
  ) {
    // Intraday bars are stored as blocks: storage sees each block dataset's stored form.
    catalog = storageCatalog(catalog);
    this.catalog = catalog;
    this.backend = db.backend;
    this.datasets = new SqlDatasetStore(reads.datasets, catalog, reads.rows ?? reads.datasets);
    this.batches = new SqlBatchStore(db, catalog);
    this.keys = new SqlKeyStore(db, reads.keys);
    this.changes = new SqlChangeStore(db);
    this.revisions = new SqlRevisionStore(db, catalog, this.changes);
  }

  migrate(): Promise<void> {
    return migrate(this.db, this.catalog);
  }

  ping(): Promise<void> {
    return this.db.ping();
  }

  readToken(): Promise<string | null> {
    return Promise.resolve(null);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
