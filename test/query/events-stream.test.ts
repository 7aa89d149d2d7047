import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { loadConfig } from '../../src/config.js';
import { createStore } from '../../src/storage/create-store.js';
import type { Store } from '../../src/storage/store.js';
import { INGEST_KEY, QUERY_KEY, backends, freshDatabaseUrl, push } from '../helpers/harness.js';
import { batch, etfBar } from '../helpers/batches.js';

/** GET /api/v1/upstream/ingest/events: server-sent events of processed batches, on a real port. */

interface Stream {
  /** Reads until a block (text between blank lines) satisfies `pred`; returns it. */
  until(pred: (block: string) => boolean): Promise<string>;
  close(): void;
}

async function connect(base: string, query = '', key = INGEST_KEY): Promise<Stream> {
  const ctl = new AbortController();
  const res = await fetch(`${base}/api/v1/upstream/ingest/events${query}`, {
    headers: { 'up-api-key': key },
    signal: ctl.signal,
  });
  assert.equal(res.status, 200);
  assert.match(String(res.headers.get('content-type')), /^text\/event-stream/);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async until(pred) {
      for (;;) {
        let idx: number;
        while ((idx = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, idx);
          buffer = buffer.slice(idx + 2);
          if (pred(block)) return block;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
    },
    close: () => ctl.abort(),
  };
}

const dataOf = (block: string): Record<string, unknown> =>
  JSON.parse(
    block
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
      .join('\n'),
  ) as Record<string, unknown>;

for (const backend of await backends()) {
  describe(`ingest event stream (${backend})`, () => {
    let app: FastifyInstance;
    let store: Store;
    let drop: () => Promise<void>;
    let base: string;

    before(async () => {
      const db = await freshDatabaseUrl(backend, { migrated: true });
      drop = db.drop;
      const config = loadConfig({
        MDS_INGEST_KEYS: INGEST_KEY,
        MDS_QUERY_KEYS: QUERY_KEY,
        LOG_LEVEL: 'silent',
        DATABASE_URL: db.url,
      });
      store = await createStore(config.DATABASE_URL, CATALOG);
      await store.migrate();
      app = await buildApp({ config, store, events: { heartbeatMs: 50 } });
      base = await app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(async () => {
      await app?.close();
      await store?.close();
      await drop?.();
    });

    test('needs an ingest key: none → 401/4010, a query key → 401 saying it is the wrong kind', async () => {
      const none = await fetch(`${base}/api/v1/upstream/ingest/events`);
      assert.equal(none.status, 401);
      assert.deepEqual(await none.json(), { code: 4010, message: 'missing API key header' });
      const q = await fetch(`${base}/api/v1/upstream/ingest/events`, {
        headers: { 'up-api-key': QUERY_KEY },
      });
      assert.equal(q.status, 401);
      // A key in the ingest header answers as any key that is not an ingest key (one answer for
      // every bad key: test/access/security-auth.test.ts).
      assert.deepEqual(await q.json(), { code: 4012, message: 'invalid API key' });
      // The query key in its own header: the ingest header is missing, and the answer says why.
      const own = await fetch(`${base}/api/v1/upstream/ingest/events`, {
        headers: { 'q-api-key': QUERY_KEY },
      });
      assert.equal(own.status, 401);
      assert.deepEqual(await own.json(), {
        code: 4010,
        message:
          'wrong kind of key: this endpoint takes an ingest key in UP-API-KEY, and the request has ' +
          'Q-API-KEY (a query key) instead',
      });
      const bad = await fetch(`${base}/api/v1/upstream/ingest/events?dataset=nope`, {
        headers: { 'up-api-key': INGEST_KEY },
      });
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { code: number }).code, 4001);
    });

    test('a processed batch arrives as an event; heartbeats are comments', async () => {
      const s = await connect(base);
      try {
        await s.until((b) => b.includes(': connected'));
        const res = await push(
          app,
          batch('etf_daily', [etfBar('510300', '2024-01-02')], { batchId: 'sse-1' }),
        );
        assert.equal(res.statusCode, 200);
        const ev = await s.until((b) => b.includes('event: batch'));
        assert.match(ev, /^id: \d+$/m);
        const data = dataOf(ev);
        assert.equal(data.batch_id, 'sse-1');
        assert.equal(data.dataset, 'etf_daily');
        assert.equal(data.status, 'accepted');
        assert.equal(data.accepted, 1);
        assert.equal(data.error_count, 0);
        assert.ok(!('errors' in data));
        await s.until((b) => b.startsWith(': heartbeat'));
      } finally {
        s.close();
      }
    });

    test('?dataset= filters events', async () => {
      const s = await connect(base, '?dataset=fx');
      try {
        await s.until((b) => b.includes(': connected'));
        await push(app, batch('etf_daily', [etfBar('510300', '2024-01-05')]));
        await push(
          app,
          batch('fx', [{ symbol: 'USDCNY', date: '2024-01-05', close: 7.1, source: 'eastmoney' }]),
        );
        const ev = await s.until((b) => b.includes('event: batch'));
        assert.equal(dataOf(ev).dataset, 'fx');
      } finally {
        s.close();
      }
    });

    test('a disconnected client is cleaned up (listener removed, gauge back to 0)', async () => {
      const streams = async (): Promise<number> => {
        const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
        return Number(/^mds_ingest_event_streams (\S+)$/m.exec(text)?.[1]);
      };
      // Streams of earlier tests close asynchronously: wait until none is open (no timing assertion).
      const settle = async (): Promise<void> => {
        for (let i = 0; i < 400 && (await streams()) > 0; i++) await new Promise((r) => setTimeout(r, 25));
      };
      await settle();
      assert.equal(await streams(), 0);
      const baseline = app.services.ingest.events.listenerCount('batch');
      const s = await connect(base);
      await s.until((b) => b.includes(': connected'));
      assert.equal(await streams(), 1);
      assert.equal(app.services.ingest.events.listenerCount('batch'), baseline + 1);
      s.close();
      await settle();
      assert.equal(await streams(), 0);
      assert.equal(app.services.ingest.events.listenerCount('batch'), baseline);
    });

    test('closing the app ends open streams', async () => {
      const s = await connect(base);
      await s.until((b) => b.includes(': connected'));
      const ended = s
        .until(() => false)
        .then(
          () => 'no',
          (err: unknown) => String(err),
        );
      await app.close();
      assert.match(await ended, /stream ended|terminated|abort/i);
    });
  });
}
