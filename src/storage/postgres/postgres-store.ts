import type { Catalog } from '../../catalog/catalog.js';
import { SqlStore } from '../sql-store.js';
import type { DatabaseStats } from '../store.js';
import { PostgresDb, type PostgresOptions } from './postgres-db.js';
import { ReplicaRouter, type RouterOptions } from './replica-router.js';

/** Streaming replicas that serve reads (DATABASE_READ_URLS), and how they are chosen. */
export interface ReplicaOptions extends RouterOptions {
  urls: readonly string[];
}

/**
 * The PostgreSQL store: the shared store parts over PostgresDb. With replicas, dataset reads go
 * through a ReplicaRouter and key lookups to the primary first; everything else to the primary.
 */
export class PostgresStore extends SqlStore {
  private readonly pg: PostgresDb;
  private readonly router: ReplicaRouter | null;

  constructor(catalog: Catalog, opts: PostgresOptions, replicas?: ReplicaOptions) {
    const db = new PostgresDb(opts);
    const router =
      replicas && replicas.urls.length > 0
        ? new ReplicaRouter(
            db,
            replicas.urls.map((url, i) => ({
              name: `replica${i}`,
              db: new PostgresDb({ ...opts, connectionString: url }),
            })),
            replicas,
          )
        : null;
    super(catalog, db, router ? { datasets: router, keys: router.primaryFirst() } : undefined);
    this.pg = db;
    this.router = router;
    router?.start();
  }

  /** Pool counters, for tests and metrics. */
  get poolStats(): { total: number; idle: number; waiting: number } {
    return this.pg.poolStats;
  }

  override async migrate(): Promise<void> {
    await this.pg.checkSetup();
    await super.migrate();
  }

  async synchronousStandbys(): Promise<number> {
    return this.pg.synchronousStandbys();
  }

  override ping(): Promise<void> {
    return this.router ? this.router.ping() : super.ping();
  }

  override async readToken(): Promise<string | null> {
    return this.router ? this.pg.walPosition() : null;
  }

  /** One round of replica checks now (tests; the router checks every MDS_REPLICA_CHECK_MS anyway). */
  async checkReplicas(): Promise<void> {
    await this.router?.check();
  }

  databaseStats(): DatabaseStats {
    const stats = this.router?.stats() ?? {
      primary: { up: true, reads: 0, pool: this.pg.poolStats },
      replicas: [],
    };
    const located = this.pg.primaryState;
    return located ? { ...stats, primary: { ...stats.primary, switches: located.switches } } : stats;
  }

  override async close(): Promise<void> {
    await this.router?.close();
    await super.close();
  }
}
