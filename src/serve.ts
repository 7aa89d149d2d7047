import { CATALOG } from './catalog/catalog.js';
import { loadConfig, splitKeys } from './config.js';
import { EXIT_CONFIG } from './exit-codes.js';
import { createStore } from './storage/create-store.js';
import { SchemaTooNewError, StoreSetupError } from './storage/store.js';
import { createServices } from './services.js';
import { requestThreadCheckpoints } from './ingest/ingest-pool.js';
import { createApp } from './app.js';
import { JOIN_WHEN_READY, primaryLink } from './cluster/primary-link.js';

/** config → store → services → app → listen; migrations retried with backoff; graceful shutdown on signals. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const readUrls = splitKeys(config.DATABASE_READ_URLS);
  const store = await createStore(config.DATABASE_URL, CATALOG, {
    ...config,
    sqliteCheckpoints: requestThreadCheckpoints(config),
    ...(readUrls.length > 0
      ? {
          replicas: {
            urls: readUrls,
            maxLagMs: config.MDS_REPLICA_MAX_LAG_MS,
            checkMs: config.MDS_REPLICA_CHECK_MS,
            readAfterWaitMs: config.MDS_READ_AFTER_WAIT_MS,
          },
        }
      : {}),
    readerProcesses: config.MDS_READER_PROCESSES,
  });
  // Not ready (503) until the migration below succeeds.
  const services = await createServices({ config, store, ready: () => false });
  const app = await createApp(services);
  // A worker joining a cluster whose first worker is serving listens once its database is
  // ready, so the port never hands a connection to a worker that would answer 503; anyone
  // else listens at once, and /health says 503 while the database is not ready.
  const joining = process.env[JOIN_WHEN_READY] === '1';
  const listen = (): Promise<string> => app.listen({ port: config.PORT, host: config.HOST });
  if (!joining) await listen();

  let stopping = false;
  const connect = async (): Promise<boolean> => {
    for (let attempt = 0, delay = 250; !stopping; attempt++, delay = Math.min(delay * 2, 10_000)) {
      try {
        await services.migrate();
        services.readiness.markReady();
        app.log.info({ storage: store.backend }, 'database ready');
        if (config.MDS_REQUIRE_SYNC_STANDBY === '1' && store.synchronousStandbys) {
          const n = await store.synchronousStandbys().catch(() => null);
          if (n === 0) {
            app.log.warn(
              'MDS_REQUIRE_SYNC_STANDBY=1 but the PostgreSQL primary has no synchronous standby: a batch ' +
                'acknowledged now could be lost if the primary dies (docs/deployment.md "Failover")',
            );
          }
        }
        return true;
      } catch (err) {
        if (err instanceof StoreSetupError) {
          // Another release's database, a pooler in the wrong mode: waiting does not change it.
          const what =
            err instanceof SchemaTooNewError ? 'database schema is newer than this release' : err.message;
          app.log.fatal({ err }, `${what}; exiting`);
          process.exitCode = EXIT_CONFIG;
          stopping = true;
          await app.close();
          await store.close();
          // Explicitly: a cluster worker's channel to its primary would keep it alive.
          process.exit(EXIT_CONFIG);
        }
        app.log.error({ err, attempt, retryInMs: delay }, 'database not reachable; retrying');
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    return false;
  };
  if (!(await connect())) return;
  // Graceful from the moment /health can say 200 (connect marked it ready): a signal during the
  // start-up purge below once ended the process without its shutdown (no batch is lost, but the
  // in-flight request was not drained).
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), config.MDS_SHUTDOWN_GRACE_MS);
    force.unref();
    try {
      // Queries in flight are stopped (503) rather than waited for: a long one would hold the
      // close until the grace runs out.
      services.queryContexts.abortAll();
      await app.close();
      await store.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  if (joining) await listen();
  primaryLink()?.ready();

  // Batch status records are kept MDS_BATCH_RETENTION_DAYS, then purged hourly.
  const purge = async (): Promise<void> => {
    const before = new Date(Date.now() - config.MDS_BATCH_RETENTION_DAYS * 86_400_000).toISOString();
    try {
      const n = await store.batches.purgeBatches(before);
      if (n > 0) app.log.info({ purged: n }, 'purged old batch status records');
    } catch (err) {
      app.log.warn({ err }, 'batch purge failed');
    }
  };
  await purge();
  // Revisions that stopped being current more than MDS_REVISIONS_KEEP_DAYS ago: removed in the
  // background (bounded steps), never on a request.
  const keepDays = config.MDS_REVISIONS_KEEP_DAYS;
  const purgeRevisions = async (): Promise<void> => {
    if (keepDays === undefined) return;
    const before = new Date(Date.now() - keepDays * 86_400_000).toISOString();
    try {
      const n = await store.revisions.purgeRevisions(before);
      if (n > 0) app.log.info({ removed: n, before }, 'removed revisions past MDS_REVISIONS_KEEP_DAYS');
    } catch (err) {
      app.log.warn({ err }, 'revision retention failed');
    }
  };
  void purgeRevisions();
  const timer = setInterval(() => void purge().then(purgeRevisions), 3_600_000);
  timer.unref();
}
