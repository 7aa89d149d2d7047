#!/usr/bin/env node
import { loadConfig } from './config.js';
import { CATALOG } from './catalog/catalog.js';
import { createStore } from './storage/create-store.js';
import { buildApp } from './app.js';

/** config → store → app → listen; migrations retried with backoff; graceful shutdown on signals. */
async function main(): Promise<void> {
  const config = loadConfig();
  const store = await createStore(config.DATABASE_URL, CATALOG);
  let ready = false;
  const app = await buildApp({ config, store, ready: () => ready });
  await app.listen({ port: config.PORT, host: config.HOST });

  let stopping = false;
  const connect = async (): Promise<void> => {
    for (let attempt = 0, delay = 250; !stopping; attempt++, delay = Math.min(delay * 2, 10_000)) {
      try {
        await store.migrate();
        ready = true;
        app.log.info({ storage: store.backend }, 'database ready');
        return;
      } catch (err) {
        app.log.error({ err, attempt, retryInMs: delay }, 'database not reachable; retrying');
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };
  await connect();

  // Batch status records are kept MDS_BATCH_RETENTION_DAYS, then purged hourly.
  const purge = async (): Promise<void> => {
    const before = new Date(Date.now() - config.MDS_BATCH_RETENTION_DAYS * 86_400_000).toISOString();
    try {
      const n = await store.purgeBatches(before);
      if (n > 0) app.log.info({ purged: n }, 'purged old batch status records');
    } catch (err) {
      app.log.warn({ err }, 'batch purge failed');
    }
  };
  await purge();
  const timer = setInterval(() => void purge(), 3_600_000);
  timer.unref();

  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), config.MDS_SHUTDOWN_GRACE_MS);
    force.unref();
    try {
      await app.close();
      await store.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
