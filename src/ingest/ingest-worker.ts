import { parentPort, workerData } from 'node:worker_threads';
import { CATALOG } from '../catalog/catalog.js';
import { createStore } from '../storage/create-store.js';
import { IngestService } from './ingest-service.js';
import {
  serialiseError,
  type PoolNotice,
  type PoolReply,
  type PoolRequest,
  type WorkerInit,
} from './ingest-pool.js';
import { lowerThreadPriority } from '../thread-priority.js';

/**
 * One ingest thread (ingest-pool.ts): its own store from the factory, the same IngestService
 * the request thread would run. Requests are answered as they finish; a lock wait (SQLite's
 * busy wait, a PostgreSQL row lock) blocks only this thread.
 */
const port = parentPort;
if (!port) throw new Error('ingest-worker.ts runs as a worker thread (ingest-pool.ts)');
const { config } = workerData as WorkerInit;
// First, before the store opens: the migration and every batch run at the lower priority.
port.postMessage({ id: 0, priority: lowerThreadPriority(config.MDS_INGEST_NICE) } satisfies PoolNotice);
// The request thread's connection leaves checkpoints to this thread's (SQLite; see sqlite-db.ts).
const store = await createStore(config.DATABASE_URL, CATALOG, { ...config, sqliteCheckpoints: 'all' });
const ingest = new IngestService(CATALOG, store, { maxRecords: config.MDS_MAX_RECORDS });

async function handle(req: PoolRequest): Promise<unknown> {
  switch (req.op) {
    case 'ingest':
      return ingest.ingestBytes(req.bytes);
    case 'migrate':
      return store.migrate();
    case 'coverage':
      return store.datasets.coverage();
    case 'close':
      await store.close();
      port?.close();
      return undefined;
  }
}

port.on('message', (req: PoolRequest) => {
  handle(req).then(
    (value) => {
      if (req.op !== 'close') port.postMessage({ id: req.id, ok: true, value } satisfies PoolReply);
    },
    (err: unknown) =>
      port.postMessage({ id: req.id, ok: false, error: serialiseError(err) } satisfies PoolReply),
  );
});
