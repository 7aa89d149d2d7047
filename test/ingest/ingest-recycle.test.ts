// An ingest thread that did work and then sat idle for MDS_INGEST_RECYCLE_MS is replaced by a
// fresh one (its heap goes with it: ingest-pool.ts). The slot is never empty, so on SQLite a
// thread with the checkpoint duty always runs; batches after a replacement are processed; close
// ends the threads being replaced too. The real pool, real worker threads, on both backends.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOG } from '../../src/catalog/catalog.js';
import { loadConfig } from '../../src/config.js';
import { IngestPool } from '../../src/ingest/ingest-pool.js';
import { createLogger } from '../../src/logger.js';
import { createStore } from '../../src/storage/create-store.js';
import type { Store } from '../../src/storage/store.js';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { backends, freshDatabaseUrl } from '../helpers/harness.js';
import { uniqueId } from '../helpers/batches.js';
import { sleep } from '../helpers/server-process.js';

for (const backend of await backends()) {
  describe(`ingest threads replaced after idling (${backend})`, { timeout: 120_000 }, () => {
    let db: { url: string; drop(): Promise<void> };
    let url: string;
    let store: Store;
    before(async () => {
      db = await freshDatabaseUrl(backend, { migrated: true });
      url = db.url;
      store = await createStore(url, CATALOG, { sqliteCheckpoints: 'none' });
    });
    after(async () => {
      await store.close();
      await db.drop();
    });

    const pool = (recycleMs: number): IngestPool => {
      const config = loadConfig({
        DATABASE_URL: url,
        MDS_INGEST_THREADS: '1',
        MDS_INGEST_RECYCLE_MS: String(recycleMs),
        LOG_LEVEL: 'silent',
      });
      return new IngestPool(config, CATALOG, store, createLogger(config), 1);
    };

    /** Waits for the thread to be replaced; the slot must hold a thread at every look. */
    async function replaced(p: IngestPool, id: number): Promise<number> {
      for (const deadline = Date.now() + 30_000; ; await sleep(10)) {
        const ids = p.threadIds;
        assert.equal(ids.length, 1, 'a thread at all times');
        if (ids[0] !== id) return ids[0] as number;
        if (Date.now() > deadline) throw new Error('the idle thread was never replaced');
      }
    }

    let pushes = 0;
    async function push(p: IngestPool, rows: number): Promise<void> {
      // A new close each time: rows equal to the stored ones would count as duplicates.
      const { body } = bigEtfBatch(rows, 'recycle', uniqueId('recycle'), { close: 10 + ++pushes });
      const outcome = await p.ingestBytes(new Uint8Array(body));
      assert.equal(outcome.kind, 'processed');
      assert.equal(outcome.record.status, 'accepted');
      assert.equal(outcome.record.accepted, rows);
    }

    it('a thread that worked is replaced once idle, and batches go on being processed', async () => {
      const p = pool(100);
      try {
        const first = p.threadIds[0] as number;
        await p.migrate();
        const second = await replaced(p, first);
        await push(p, 2_000);
        const third = await replaced(p, second);
        await push(p, 2_000);
        // Batches back to back keep their thread: it is replaced only when idle.
        const busy = await replaced(p, third);
        await Promise.all([push(p, 500), push(p, 500), push(p, 500)]);
        assert.equal(p.threadIds[0], busy);
      } finally {
        await p.close();
      }
      assert.deepEqual(p.threadIds, [], 'closed');
    });

    it('an unused thread is kept; MDS_INGEST_RECYCLE_MS=0 keeps a thread that worked', async () => {
      const fresh = pool(50);
      const kept = pool(0);
      try {
        const freshId = fresh.threadIds[0];
        await kept.migrate();
        const keptId = kept.threadIds[0];
        await sleep(500);
        assert.deepEqual(fresh.threadIds, [freshId]);
        assert.deepEqual(kept.threadIds, [keptId]);
      } finally {
        await fresh.close();
        await kept.close();
      }
    });

    it('close ends a thread being replaced as well as its successor', async () => {
      const p = pool(20);
      const first = p.threadIds[0] as number;
      await p.migrate();
      await replaced(p, first);
      // Closed right after the replacement, while the old thread may still be closing its connection.
      await p.close();
      assert.deepEqual(p.threadIds, []);
      // Nothing is left holding the database: another pool writes it.
      const again = pool(0);
      try {
        await push(again, 100);
      } finally {
        await again.close();
      }
    });
  });
}
