import { UniverseService } from './query/universe.js';
import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { CATALOG, type Catalog } from './catalog/catalog.js';
import type { Store } from './storage/store.js';
import { IngestService, type BatchIngest } from './ingest/ingest-service.js';
import { IngestPool, ingestThreads } from './ingest/ingest-pool.js';
import { sqliteUrl } from './model/database-url.js';
import { writerSocket } from './ingest/writer-env.js';
import { RemoteIngest } from './ingest/remote-ingest.js';
import { MinuteQueryService } from './query/minute-query.js';
import { QueryService } from './query/query-service.js';
import { sourcePriorityDefaults } from './query/parse.js';
import { CoverageCache } from './query/coverage-cache.js';
import { QualityService } from './query/quality-service.js';
import { MinuteQualityService } from './query/minute-quality.js';
import { KeyRing } from './access/keyring.js';
import { AuthFailureGuard } from './access/auth-failures.js';
import { AdminTokens } from './access/admin-tokens.js';
import { ExportBudget, IngestMemoryBudget } from './access/budgets.js';
import { ExportEncoders } from './export/encoder-pool.js';
import type { Limiter } from './access/limiter.js';
import { createLimiter } from './access/create-limiter.js';
import { KeyService, keyDefaults } from './access/key-service.js';
import { UsageRecorder, metered } from './access/usage-recorder.js';
import { Readiness } from './readiness.js';
import { createLogger } from './logger.js';
import { primaryLink } from './cluster/primary-link.js';
import { QueryContexts } from './request-context.js';
import { ChangeFeed } from './query/change-feed.js';

export interface ServiceDeps {
  config: Config;
  store: Store;
  catalog?: Catalog;
  /** Brought by the caller, who then closes it; else made from REDIS_URL (else memory). */
  limiter?: Limiter;
  /** Asked until true whether the database is migrated and reachable (default: it is). */
  ready?: () => boolean;
  log?: Logger;
}

/** Everything the HTTP layer serves from, built once here (the composition root). */
export interface Services {
  readonly config: Config;
  readonly log: Logger;
  readonly catalog: Catalog;
  readonly store: Store;
  /**
   * Batches, on worker threads (IngestPool) unless MDS_INGEST_THREADS=0 or a test catalog; in a
   * SQLite cluster's worker, on the cluster's one writer process (RemoteIngest).
   */
  readonly ingest: BatchIngest;
  /**
   * `batch` and `revert` events of every process of this instance: the ingest service's own,
   * or, in a cluster worker, those of all workers as the primary passes them on.
   */
  readonly batchEvents: EventEmitter;
  /** Creates or upgrades the tables: on an ingest thread when there are some. */
  migrate(): Promise<void>;
  readonly query: QueryService;
  /** The intraday datasets' reads (bar blocks decoded and resampled: docs/minute-bars.md). */
  readonly minute: MinuteQueryService;
  /** The query requests in flight: a shutdown stops their statements (request-context.ts). */
  readonly queryContexts: QueryContexts;
  readonly coverage: CoverageCache;
  readonly quality: QualityService;
  /** The change feed: its pages and the live streams' shared poll (docs/changes.md). */
  readonly changes: ChangeFeed;
  /** The minute datasets' quality report (1d from the minutes against the daily dataset). */
  readonly minuteQuality: MinuteQualityService;
  /** Who was there on a day: GET /api/v1/universe and the MCP tool (docs/universes.md). */
  readonly universe: UniverseService;
  readonly keyring: KeyRing;
  /** Counts query requests per key; metered, so usage is recorded as it counts. */
  readonly limiter: Limiter;
  readonly keys: KeyService;
  readonly usage: UsageRecorder;
  readonly authFailures: AuthFailureGuard;
  /** Exports running at once, per key and in this process (MDS_EXPORTS_PER_KEY / _PER_PROCESS). */
  readonly exports: ExportBudget;
  /** Encodes exports on threads of their own (MDS_EXPORT_THREADS). */
  readonly exportEncoders: ExportEncoders;
  /** Bytes of batch bodies in flight in this process (MDS_INGEST_MEMORY_BUDGET). */
  readonly ingestMemory: IngestMemoryBudget;
  /** MDS_ADMIN_TOKEN and the admin tokens of `mds admin-token`. */
  readonly adminTokens: AdminTokens;
  readonly readiness: Readiness;
  /** Flushes usage and closes what was made here (never the store: its opener closes it). */
  close(): Promise<void>;
}

export async function createServices(deps: ServiceDeps): Promise<Services> {
  const { config, store } = deps;
  const catalog = deps.catalog ?? CATALOG;
  const log = deps.log ?? createLogger(config);
  const baseLimiter = deps.limiter ?? (await createLimiter(config, log, store));
  const usage = new UsageRecorder(store, { log });
  const threads = ingestThreads(config);
  const sqlite = sqliteUrl(config.DATABASE_URL);
  if (sqlite && (config.MDS_INGEST_THREADS ?? 0) > 1) {
    log.warn(
      { MDS_INGEST_THREADS: config.MDS_INGEST_THREADS },
      'SQLite: batches are written by one thread; MDS_INGEST_THREADS above 1 is not used',
    );
  }
  // Worker threads (and the writer process) know only the built-in catalog and open the
  // database by its URL.
  const builtIn = catalog === CATALOG && !config.DATABASE_URL.endsWith(':memory:');
  const socket = sqlite && builtIn ? writerSocket() : null;
  // A SQLite cluster's worker: its batches go to the cluster's one writer (remote-ingest.ts).
  const pool: IngestPool | RemoteIngest | null = socket
    ? new RemoteIngest(socket, catalog, store, log, config.MDS_MAX_RECORDS)
    : threads > 0 && builtIn
      ? new IngestPool(config, catalog, store, log, threads)
      : null;
  const ingest = pool ?? new IngestService(catalog, store, { maxRecords: config.MDS_MAX_RECORDS });
  const exportEncoders = new ExportEncoders(config.MDS_EXPORT_THREADS, log);
  const link = primaryLink();
  link?.relay(ingest.events, ['batch', 'revert']);
  const query = new QueryService(store, catalog, {
    revisionsKeepDays: config.MDS_REVISIONS_KEEP_DAYS,
    sourcePriority: sourcePriorityDefaults(config.MDS_SOURCE_PRIORITY, catalog.datasets),
  });
  const batchEvents = link ? link.events : ingest.events;
  const changes = new ChangeFeed(store, catalog, batchEvents, {
    pollMs: config.MDS_CHANGES_POLL_MS,
    streamsPerKey: config.MDS_CHANGES_STREAMS_PER_KEY,
  });
  return {
    config,
    log,
    catalog,
    store,
    ingest,
    batchEvents,
    migrate: () => (pool ? pool.migrate() : store.migrate()),
    query,
    minute: new MinuteQueryService(store, query),
    queryContexts: new QueryContexts(),
    // The recount reads every dataset: through the store's readers (SQLite's reader processes,
    // PostgreSQL's pool), never queued behind a batch on an ingest thread (list_datasets and the
    // dashboard waited for a batch in flight: test/mcp/mcp-concurrency.test.ts). Without reader
    // processes it stays off the request thread on an ingest thread.
    coverage: new CoverageCache(
      store,
      catalog,
      pool && config.MDS_READER_PROCESSES === 0 ? () => pool.coverage() : undefined,
    ),
    quality: new QualityService(store, catalog),
    changes,
    minuteQuality: new MinuteQualityService(store, catalog),
    universe: new UniverseService(catalog, store, query),
    keyring: new KeyRing(store, config),
    limiter: metered(baseLimiter, usage),
    keys: new KeyService(store, keyDefaults(config)),
    usage,
    authFailures: new AuthFailureGuard(config.MDS_AUTH_FAILURES_PER_MINUTE),
    exports: new ExportBudget(config.MDS_EXPORTS_PER_KEY, config.MDS_EXPORTS_PER_PROCESS),
    exportEncoders,
    ingestMemory: new IngestMemoryBudget(config.MDS_INGEST_MEMORY_BUDGET),
    adminTokens: new AdminTokens(store, config.MDS_ADMIN_TOKEN),
    readiness: new Readiness(deps.ready ?? (() => true)),
    async close() {
      changes.close();
      await pool?.close();
      await exportEncoders.close();
      await usage.close();
      if (!deps.limiter) await baseLimiter.close();
    },
  };
}
