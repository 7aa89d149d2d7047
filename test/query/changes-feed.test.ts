import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { createStore } from '../../src/storage/create-store.js';
import type { Store } from '../../src/storage/store.js';
import type { ChangeEvent } from '../../src/model/changes.js';
import {
  ADMIN_TOKEN,
  QUERY_KEY,
  backends,
  freshDatabaseUrl,
  get,
  json,
  push,
  testConfig,
  type Json,
} from '../helpers/harness.js';
import { adjFactor, batch, etfBar, uniqueId } from '../helpers/batches.js';
import { PYTHON } from '../helpers/python.js';

/**
 * GET /api/v1/changes: the change feed as JSON pages and as server-sent events, on a real port,
 * every event checked against the revision trail of its batch.
 */

interface Sse {
  /** Events until `n` have arrived (or the stream ends: then what came). */
  take(n: number): Promise<{ id: number; data: ChangeEvent }[]>;
  close(): void;
}

async function sse(base: string, query = '', headers: Record<string, string> = {}): Promise<Sse> {
  const ctl = new AbortController();
  const res = await fetch(`${base}/api/v1/changes${query}`, {
    headers: { 'q-api-key': QUERY_KEY, accept: 'text/event-stream', ...headers },
    signal: ctl.signal,
  });
  assert.equal(res.status, 200, await (res.status === 200 ? Promise.resolve('') : res.text()));
  assert.match(String(res.headers.get('content-type')), /^text\/event-stream/);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async take(n) {
      const got: { id: number; data: ChangeEvent }[] = [];
      while (got.length < n) {
        let idx: number;
        while (got.length < n && (idx = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, idx);
          buffer = buffer.slice(idx + 2);
          const lines = block.split('\n');
          const id = lines.find((l) => l.startsWith('id: '));
          const data = lines.find((l) => l.startsWith('data: '));
          if (id && data)
            got.push({ id: Number(id.slice(4)), data: JSON.parse(data.slice(6)) as ChangeEvent });
        }
        if (got.length >= n) break;
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
      }
      return got;
    },
    close: () => ctl.abort(),
  };
}

const revert = (app: FastifyInstance, id: string) =>
  app.inject({
    method: 'POST',
    url: `/admin/api/batches/${encodeURIComponent(id)}/revert`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });

async function pushOk(app: FastifyInstance, body: Json): Promise<string> {
  const res = await push(app, body);
  assert.equal(res.statusCode, 200, res.body);
  return (body.meta as Json).batch_id as string;
}

async function feed(app: FastifyInstance, query = ''): Promise<{ data: ChangeEvent[]; meta: Json }> {
  const res = await get(app, `/api/v1/changes${query}`);
  assert.equal(res.statusCode, 200, res.body);
  return json(res) as unknown as { data: ChangeEvent[]; meta: Json };
}

/** Every event's counts, codes and date span against its batch's revisions in the trail. */
async function checkAgainstTrail(app: FastifyInstance, events: readonly ChangeEvent[]): Promise<void> {
  for (const e of events) {
    const res = await get(
      app,
      `/api/v1/revisions/${e.dataset}?batch_id=${encodeURIComponent(e.batch_id)}&limit=1000`,
    );
    assert.equal(res.statusCode, 200, res.body);
    const items = (json(res).data as Json[]).filter((i) => i.valid_from === e.known_at);
    const ops = { insert: 0, update: 0, delete: 0 };
    for (const i of items) ops[i.op as keyof typeof ops] += 1;
    assert.deepEqual({ insert: e.inserted, update: e.updated, delete: e.deleted }, ops, `event ${e.id}`);
    const rows = items.map((i) => i.row as Json);
    if (e.code_field) {
      const codes = [...new Set(rows.map((r) => String(r[e.code_field as string])))].sort();
      assert.deepEqual(e.codes, codes, `event ${e.id} codes`);
      assert.equal(e.code_count, codes.length);
    }
    if (e.date_field) {
      const dates = rows.map((r) => String(r[e.date_field as string])).sort();
      assert.equal(e.date_from, dates[0]);
      assert.equal(e.date_to, dates[dates.length - 1]);
    }
  }
}

for (const backend of await backends()) {
  describe(`change feed (${backend})`, () => {
    let app: FastifyInstance;
    let other: FastifyInstance;
    let store: Store;
    let otherStore: Store;
    let drop: () => Promise<void>;
    let base: string;
    let otherBase: string;
    let dbUrl: string;
    const env = {
      MDS_CHANGES_HEARTBEAT_MS: '50',
      MDS_CHANGES_POLL_MS: '100',
      MDS_CHANGES_STREAMS_PER_KEY: '3',
      MDS_CHANGES_BUFFER_BYTES: '4096',
    };

    before(async () => {
      const db = await freshDatabaseUrl(backend, { migrated: true });
      drop = db.drop;
      dbUrl = db.url;
      const config = testConfig(db.url, env);
      store = await createStore(config.DATABASE_URL, CATALOG, config);
      await store.migrate();
      app = await buildApp({ config, store });
      base = await app.listen({ port: 0, host: '127.0.0.1' });
      // A second instance on the same database: its own store, process state and poll.
      otherStore = await createStore(config.DATABASE_URL, CATALOG, config);
      other = await buildApp({ config, store: otherStore });
      otherBase = await other.listen({ port: 0, host: '127.0.0.1' });
    });
    after(async () => {
      await app?.close();
      await other?.close();
      await store?.close();
      await otherStore?.close();
      await drop?.();
    });

    test('a correction, a revert and a factor change, in order, with what they touched', async () => {
      const first = await feed(app);
      assert.deepEqual(first.data, []);
      assert.equal(first.meta.latest_id, 0);

      const b1 = await pushOk(
        app,
        batch('etf_daily', [
          etfBar('510300', '2024-01-02'),
          etfBar('510300', '2024-01-03'),
          etfBar('159915', '2023-12-29'),
        ]),
      );
      const fix = await pushOk(app, batch('etf_daily', [etfBar('510300', '2024-01-03', { close: 9.9 })]));
      const r = await revert(app, fix);
      assert.equal(r.statusCode, 200, r.body);
      const f = await pushOk(app, batch('adj_factor', [adjFactor('510300', '2024-01-03', 1.5)]));

      const page = await feed(app);
      assert.deepEqual(
        page.data.map((e) => [e.kind, e.batch_id]),
        [
          ['batch', b1],
          ['batch', fix],
          ['revert', `revert:${fix}`],
          ['factor_change', f],
        ],
      );
      const ids = page.data.map((e) => e.id);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      );
      assert.equal(page.meta.next_since, ids[ids.length - 1]);
      assert.equal(page.meta.has_more, false);
      const [e1, e2, e3, e4] = page.data as [ChangeEvent, ChangeEvent, ChangeEvent, ChangeEvent];
      assert.deepEqual(
        [e1.codes, e1.inserted, e1.date_from, e1.date_to],
        [['159915', '510300'], 3, '2023-12-29', '2024-01-03'],
      );
      assert.deepEqual([e2.codes, e2.updated, e2.date_from], [['510300'], 1, '2024-01-03']);
      // The revert names what it put back: the corrected bar, its code and date.
      assert.deepEqual(
        [e3.codes, e3.updated, e3.date_from, e3.date_to],
        [['510300'], 1, '2024-01-03', '2024-01-03'],
      );
      assert.ok(e3.version > e2.version);
      assert.deepEqual(e4.codes, ['510300']);
      assert.ok(e4.adjusts.includes('etf_daily') && e4.adjusts.includes('stock_daily'), String(e4.adjusts));
      assert.deepEqual(e1.adjusts, []);
      await checkAgainstTrail(app, page.data);

      // Paged one by one, filtered by dataset: the same events, and the end says the latest id.
      const walked: ChangeEvent[] = [];
      let since = 0;
      for (;;) {
        const p = await feed(app, `?since=${since}&limit=1`);
        walked.push(...p.data);
        since = p.meta.next_since as number;
        if (!p.meta.has_more) break;
      }
      assert.deepEqual(walked, page.data);
      const factors = await feed(app, '?datasets=adj_factor,trade_calendar');
      assert.deepEqual(
        factors.data.map((e) => e.id),
        [e4.id],
      );
      const none = await feed(app, `?datasets=fx&since=${e1.id}`);
      assert.deepEqual([none.data, none.meta.next_since, none.meta.has_more], [[], e4.id, false]);
    });

    test("an adjusted page's ETag moves with a new factor; the raw page's does not", async () => {
      const url = '/api/v1/etf/kline?code=510300&adjust=qfq';
      const raw = '/api/v1/etf/kline?code=510300';
      const etag = async (u: string): Promise<string> => {
        const res = await get(app, u);
        assert.equal(res.statusCode, 200, res.body);
        return String(res.headers.etag);
      };
      const [a0, r0] = [await etag(url), await etag(raw)];
      await pushOk(app, batch('adj_factor', [adjFactor('510300', '2024-01-02', 1.2)]));
      assert.notEqual(await etag(url), a0);
      assert.equal(await etag(raw), r0);
    });

    test('bad since, Last-Event-ID and datasets are 400 and change nothing', async () => {
      const latest = (await feed(app)).meta.latest_id as number;
      for (const q of [
        `?since=${latest + 5}`,
        '?since=-1',
        '?since=x',
        '?datasets=nope',
        '?limit=0',
        '?limit=1001',
      ]) {
        const res = await get(app, `/api/v1/changes${q}`);
        assert.equal(res.statusCode, 400, q);
        assert.equal(json(res).code, 4001, q);
      }
      const res = await app.inject({
        method: 'GET',
        url: '/api/v1/changes',
        headers: { 'q-api-key': QUERY_KEY, accept: 'text/event-stream', 'last-event-id': 'abc' },
      });
      assert.equal(res.statusCode, 400);
      assert.equal(json(res).code, 4001);
      const noKey = await get(app, '/api/v1/changes', null);
      assert.equal(noKey.statusCode, 401);
    });

    test('a stream replays after a disconnect and goes live: nothing lost, nothing twice', async () => {
      const start = (await feed(app)).meta.latest_id as number;
      const s1 = await sse(base, `?since=${start}`);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(await pushOk(app, batch('etf_daily', [etfBar('510500', `2024-02-0${i + 1}`)])));
      }
      const got1 = await s1.take(3);
      s1.close();
      // While no one listens: more changes, one from the other instance.
      ids.push(await pushOk(app, batch('etf_daily', [etfBar('510500', '2024-02-05')])));
      ids.push(
        await pushOk(other, batch('fx', [{ symbol: 'USDCNY', date: '2024-02-05', close: 7.1, source: 's' }])),
      );
      const last = got1[got1.length - 1]?.id ?? 0;
      const s2 = await sse(base, `?since=${start}`, { 'last-event-id': String(last) });
      const replayed = await s2.take(2);
      ids.push(await pushOk(other, batch('etf_daily', [etfBar('510500', '2024-02-06')])));
      const liveOne = await s2.take(1);
      s2.close();
      const seen = [...got1, ...replayed, ...liveOne].map((e) => e.data);
      assert.deepEqual(
        seen.map((e) => e.batch_id),
        ids,
      );
      const all = (await feed(app, `?since=${start}`)).data;
      assert.deepEqual(seen, all);
      for (const e of seen) assert.equal(typeof e.id, 'number');
      await checkAgainstTrail(app, seen);
    });

    test('two instances tell one total order, live on both', async () => {
      const start = (await feed(app)).meta.latest_id as number;
      const [sa, sb] = [await sse(base), await sse(otherBase)];
      const pushes: Promise<string>[] = [];
      for (let i = 0; i < 6; i++) {
        const target = i % 2 ? other : app;
        const dataset = i % 3 ? 'etf_daily' : 'fx';
        const row =
          dataset === 'fx'
            ? { symbol: `X${i}`, date: '2024-03-01', close: i, source: 's' }
            : etfBar(`51100${i}`, '2024-03-01');
        pushes.push(pushOk(target, batch(dataset, [row], { batchId: uniqueId('order') })));
      }
      await Promise.all(pushes);
      const [a, b] = [await sa.take(6), await sb.take(6)];
      sa.close();
      sb.close();
      const stored = (await feed(other, `?since=${start}`)).data;
      assert.equal(stored.length, 6);
      assert.deepEqual(
        a.map((e) => e.data),
        stored,
      );
      assert.deepEqual(
        b.map((e) => e.data),
        stored,
      );
      // Dense: every id from start+1 on, none skipped or reused.
      assert.deepEqual(
        stored.map((e) => e.id),
        stored.map((_, i) => start + 1 + i),
      );
    });

    test('streams per key are bounded (429 / 4293), the place given back when one closes', async () => {
      const open = [await sse(base), await sse(base), await sse(base)];
      const res = await fetch(`${base}/api/v1/changes`, {
        headers: { 'q-api-key': QUERY_KEY, accept: 'text/event-stream' },
      });
      assert.equal(res.status, 429);
      assert.equal(((await res.json()) as Json).code, 4293);
      open[0]?.close();
      let ok = false;
      for (let i = 0; i < 100 && !ok; i++) {
        const again = await fetch(`${base}/api/v1/changes`, {
          headers: { 'q-api-key': QUERY_KEY, accept: 'text/event-stream' },
        });
        ok = again.status === 200;
        await again.body?.cancel();
        if (!ok) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(ok, 'a place came back');
      for (const s of open.slice(1)) s.close();
    });

    test('a reader that stops reading is cut, its place given back; the service keeps answering', async () => {
      // A replay of about 300 KB: more than a Unix socket's buffers take (no autotuning there,
      // unlike TCP's, which takes megabytes) and the 4 KiB allowed.
      const rows = Array.from({ length: 1000 }, (_, i) =>
        etfBar(`6${String(i).padStart(5, '0')}`, '2024-04-01'),
      );
      const start = (await feed(app)).meta.latest_id as number;
      for (let i = 0; i < 32; i++) {
        await pushOk(
          app,
          batch(
            'etf_daily',
            rows.map((r) => ({ ...r, close: 10 + i })),
          ),
        );
      }
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-changes-'));
      const socketPath = path.join(dir, 'mds.sock');
      const slow = await buildApp({ config: testConfig(dbUrl, env), store });
      await slow.listen({ path: socketPath });
      const open = (query: string): Promise<http.IncomingMessage> =>
        new Promise((resolve, reject) => {
          http
            .get(
              {
                socketPath,
                path: `/api/v1/changes${query}`,
                headers: { 'q-api-key': QUERY_KEY, accept: 'text/event-stream' },
              },
              resolve,
            )
            .on('error', reject);
        });
      try {
        // The reader: another process that reads nothing until told.
        const reader = spawn(
          PYTHON,
          [
            '-c',
            `import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"GET /api/v1/changes?since=${start} HTTP/1.1\\r\\nHost: x\\r\\nQ-API-Key: ${QUERY_KEY}\\r\\nAccept: text/event-stream\\r\\n\\r\\n")
print("sent", flush=True)
sys.stdin.readline()
n = 0
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        n += b.count(b"\\nid: ")
except ConnectionResetError:
    pass
print(n, flush=True)`,
            socketPath,
          ],
          { stdio: ['pipe', 'pipe', 'inherit'] },
        );
        let out = '';
        reader.stdout.on('data', (b: Buffer) => (out += b.toString()));
        while (!out.includes('sent')) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 200));
        // Two more streams of the key: the slow one holds the third place until it is cut.
        const held = [await open(''), await open('')];
        for (const h of held) assert.equal(h.statusCode, 200);
        const t0 = Date.now();
        let status = 0;
        while (status !== 200) {
          const h0 = Date.now();
          const health = await fetch(`${base}/health`);
          assert.equal(health.status, 200);
          assert.ok(Date.now() - h0 < 2000, 'health answers while the stream is stuck');
          const res = await open('');
          status = res.statusCode ?? 0;
          res.destroy();
          if (Date.now() - t0 > 60_000) assert.fail('the slow reader was not cut');
          if (status !== 200) {
            assert.equal(status, 429);
            await new Promise((r) => setTimeout(r, 100));
          }
        }
        // What reached the reader is a prefix of the replay, cut short.
        reader.stdin.write('\n');
        await new Promise((r) => reader.once('exit', r));
        const got = Number(out.trim().split('\n').pop());
        assert.ok(got < 32, `${got} events`);
        for (const h of held) h.destroy();
      } finally {
        await slow.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    test('a since older than retention kept is 410 / 4100 naming the oldest id', async () => {
      const before = (await feed(app)).meta.latest_id as number;
      await pushOk(app, batch('etf_daily', [etfBar('510300', '2024-05-06')]));
      // Retention as of now: every event so far is older than its horizon.
      await store.revisions.purgeRevisions(new Date(Date.now() + 1000).toISOString());
      const gone = await get(app, '/api/v1/changes?since=0');
      assert.equal(gone.statusCode, 410);
      const body = json(gone);
      assert.equal(body.code, 4100);
      assert.equal(body.latest_id, before + 1);
      assert.match(String(body.message), new RegExp(`since=0`));
      const sseGone = await fetch(`${base}/api/v1/changes?since=0`, {
        headers: { 'q-api-key': QUERY_KEY, accept: 'text/event-stream' },
      });
      assert.equal(sseGone.status, 410);
      await sseGone.body?.cancel();
      // From the latest id on, the feed goes on; without since it starts at the oldest kept.
      const next = await pushOk(app, batch('etf_daily', [etfBar('510300', '2024-05-07')]));
      const page = await feed(app, `?since=${before + 1}`);
      assert.deepEqual(
        page.data.map((e) => e.batch_id),
        [next],
      );
      assert.deepEqual(
        (await feed(app)).data.map((e) => e.batch_id),
        [next],
      );
    });
  });
}
