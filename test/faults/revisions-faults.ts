// Issue 16, point in time under faults: a killed batch leaves neither rows nor revisions;
// concurrent batches on two processes keep every key's revision chain whole; retention (the
// background job and the 4005 horizon); rows stored before history existed (the baseline).
// Run once per backend, side by side: revisions-faults-{sqlite,postgres}.test.ts.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  ADMIN_TOKEN,
  get,
  json,
  push,
  QUERY_KEY,
  startApp,
  type Backend,
  type Json,
} from '../helpers/harness.js';
import { acceptedRecord, batch, etfBar, uniqueId } from '../helpers/batches.js';
import {
  PAUSE_MARKER,
  request,
  serverOnFreshDatabase,
  sleep,
  startServer,
  type ServerProcess,
} from '../helpers/server-process.js';
import { batchState, pushBatch } from '../helpers/server-calls.js';
import type { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import type { Store } from '../../src/storage/store.js';

type Item = { op: string; batch_id: string; valid_from: string; valid_to: string | null; row: Json };

/** Every revision of a source, through the HTTP trail, page by page with cursors. */
async function trailOf(port: number, source: string): Promise<Item[]> {
  const out: Item[] = [];
  let cursor: string | null = null;
  do {
    const r = await request(port, {
      method: 'GET',
      path: `/api/v1/revisions/etf_daily?source=${source}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
      headers: { 'q-api-key': QUERY_KEY },
    });
    assert.equal(r.status, 200, r.body);
    const body = JSON.parse(r.body) as { data: Item[]; meta: { next_cursor: string | null } };
    out.push(...body.data);
    cursor = body.meta.next_cursor;
  } while (cursor !== null);
  return out;
}

async function rowsOf(port: number, source: string): Promise<Json[]> {
  const r = await request(port, {
    method: 'GET',
    path: `/api/v1/etf/kline?source=${source}&limit=1000&sort=code&order=asc`,
    headers: { 'q-api-key': QUERY_KEY },
  });
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { data: Json[] }).data;
}

const bars = (n: number, source: string, close: number, day = '2024-05-06') =>
  Array.from({ length: n }, (_, i) => etfBar(`K${String(i).padStart(4, '0')}`, day, { source, close }));

async function applyAt(store: Store, id: string, close: number, at: string): Promise<void> {
  const etf = CATALOG.byName.get('etf_daily');
  assert.ok(etf);
  const rows = [{ ...etfBar('OLD1', '2020-01-02', { source: 'old', close }), updated_at: at }];
  const r = await store.batches.applyBatch(
    {
      batchId: id,
      dataset: etf,
      rows,
      prune: null,
      now: at,
      clock: () => at,
    },
    (o) =>
      acceptedRecord(o, {
        batch_id: id,
        source: 'old',
        business_date: '2020-01-02',
        record_count: rows.length,
        checksum: id,
      }),
  );
  assert.equal(r.kind, 'applied');
}

/**
 * A database of schema version 2 (before history existed): no revision table, no version 3,
 * no revision stamps on the rows (as when their columns are added by the upgrade).
 */
// A database of release 2 had no history and no record of changes (mds_changes, schema 7).
const BEFORE_HISTORY =
  'DROP TABLE "mds_rev_etf_daily"; DELETE FROM mds_changes; DELETE FROM mds_migrations WHERE version >= 3; ' +
  'UPDATE etf_daily SET mds_op = NULL, mds_batch_id = NULL, mds_valid_from = NULL';

async function dropRevisions(backend: Backend, store: Store, databaseUrl: string): Promise<void> {
  if (backend === 'sqlite') {
    (store as SqliteStore).raw.exec(BEFORE_HISTORY);
    return;
  }
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  await c.query(BEFORE_HISTORY);
  await c.end();
}

/** The point-in-time fault suite on one backend (each backend's file calls this). */
export function revisionFaults(backend: Backend): void {
  describe(`point in time under faults (${backend})`, { timeout: 600_000 }, () => {
    // The second server of the two-process test (the first is the fixture's); registered
    // before the fixture, so it is killed before the fixture drops the database.
    const second: ServerProcess[] = [];
    after(async () => {
      await Promise.all(second.map((s) => s.kill('SIGKILL')));
    });
    const fx = serverOnFreshDatabase(backend);

    it('a batch killed just before commit leaves neither rows nor revisions; its retry writes them once', async () => {
      const source = uniqueId('crash');
      const day = '2024-05-06';
      let server = await fx.start();
      const first = await pushBatch(
        server.port,
        JSON.stringify(batch('etf_daily', bars(300, source, 1), { source })),
      );
      assert.equal(first.status, 200, first.body);
      const rowsBefore = await rowsOf(server.port, source);
      const trailBefore = await trailOf(server.port, source);
      assert.equal(trailBefore.length, 300);
      await fx.stop('SIGTERM');

      // Updates every row, inserts 100, prunes nothing else: killed with every change written.
      const id = uniqueId('killed');
      const body = JSON.stringify(
        batch('etf_daily', [...bars(300, source, 2), ...bars(400, source, 2).slice(300)], {
          source,
          batchId: id,
          snapshotType: 'full_snapshot',
          businessDate: day,
        }),
      );
      server = await fx.start({ env: { MDS_TEST_PAUSE_BEFORE_COMMIT_MS: '60000' }, hooks: true });
      const pending = pushBatch(server.port, body).catch(() => null);
      await server.waitForOutput(`${PAUSE_MARKER} ${id}`, 120_000);
      const exit = await fx.stop('SIGKILL');
      assert.equal(exit?.signal, 'SIGKILL');
      await pending;

      server = await fx.start();
      assert.equal((await batchState(server.port, id)).status, 404);
      assert.deepEqual(await rowsOf(server.port, source), rowsBefore);
      assert.deepEqual(await trailOf(server.port, source), trailBefore);

      const retry = await pushBatch(server.port, body);
      assert.equal(retry.status, 200, retry.body);
      const trail = await trailOf(server.port, source);
      assert.equal(trail.filter((i) => i.batch_id === id && i.op === 'update').length, 300);
      assert.equal(trail.filter((i) => i.batch_id === id && i.op === 'insert').length, 100);
      assert.equal(trail.length, 700);
      await fx.stop('SIGTERM');
    });

    it('two processes pushing the same keys at once: every key keeps one whole chain', async (t) => {
      const source = uniqueId('race');
      const a = await fx.start({ env: { LOG_LEVEL: 'warn' } });
      const b = await startServer({ databaseUrl: fx.url, env: { LOG_LEVEL: 'warn' } });
      second.push(b);
      const KEYS = 40;
      const PUSHES = 12;
      const answers = await Promise.all(
        Array.from({ length: PUSHES }, (_, k) =>
          pushBatch(
            (k % 2 ? a : b).port,
            JSON.stringify(batch('etf_daily', bars(KEYS, source, k + 1), { source })),
          ),
        ),
      );
      let retried = 0;
      for (const [k, r] of answers.entries()) {
        if (r.status === 409 || r.status === 503) {
          // 4091 or a busy database: the documented retry.
          await sleep(200);
          const again = await pushBatch(
            a.port,
            JSON.stringify(batch('etf_daily', bars(KEYS, source, k + 1), { source })),
          );
          assert.equal(again.status, 200, again.body);
          retried++;
        } else assert.equal(r.status, 200, r.body);
      }
      t.diagnostic(`retried ${retried}`);
      const trail = await trailOf(a.port, source);
      assert.equal(trail.length, KEYS * PUSHES);
      const byKey = new Map<string, Item[]>();
      for (const it of trail) {
        const k = String(it.row.code);
        byKey.set(k, [...(byKey.get(k) ?? []), it]);
      }
      const current = new Map((await rowsOf(a.port, source)).map((r) => [String(r.code), r]));
      for (const [k, chain] of byKey) {
        assert.equal(chain.length, PUSHES);
        assert.equal(chain[0]?.op, 'insert');
        for (let i = 1; i < chain.length; i++) {
          assert.equal(chain[i]?.op, 'update');
          assert.ok(String(chain[i]?.valid_from) > String(chain[i - 1]?.valid_from));
          assert.equal(chain[i - 1]?.valid_to, chain[i]?.valid_from, `${k}: valid_to is the next valid_from`);
        }
        assert.equal(chain.at(-1)?.valid_to, null);
        assert.deepEqual(chain.at(-1)?.row, current.get(k), `${k}: the open revision is the current row`);
      }
      // Each batch's revisions carry its processed_at.
      const batches = new Set(trail.map((i) => i.batch_id));
      for (const id of batches) {
        const st = await request(a.port, {
          method: 'GET',
          path: `/api/v1/upstream/ingest/batches/${id}`,
          headers: { 'up-api-key': 'test-ingest-key-0123456789' },
        });
        const processed = (JSON.parse(st.body) as { processed_at: string }).processed_at;
        assert.ok(trail.filter((i) => i.batch_id === id).every((i) => i.valid_from === processed));
      }
      await Promise.all([fx.stop('SIGTERM'), b.kill('SIGTERM')]);
    });

    it('retention: the background job removes revisions past MDS_REVISIONS_KEEP_DAYS; an as_of before it is 4005', async () => {
      // A database of its own: its first batches are stamped with clocks of 2020.
      const h = await startApp(backend, { MDS_REVISIONS_KEEP_DAYS: '30' });
      // Stopped in finally: a failed assertion must not leave the server running (the test
      // process would wait for it and the whole run with it).
      let server: Awaited<ReturnType<typeof startServer>> | undefined;
      try {
        await applyAt(h.store, uniqueId('old1'), 1, '2020-01-02T10:00:00.000Z');
        await applyAt(h.store, uniqueId('old2'), 2, '2020-01-03T10:00:00.000Z');
        const fresh = await push(
          h.app,
          batch('etf_daily', [etfBar('OLD1', '2020-01-02', { source: 'old', close: 3 })], { source: 'old' }),
        );
        assert.equal(fresh.statusCode, 200, fresh.body);
        const trail = json(await get(h.app, '/api/v1/revisions/etf_daily?source=old')).data as Item[];
        assert.deepEqual(
          trail.map((i) => i.row.close),
          [1, 2, 3],
        );
        const old = await get(h.app, '/api/v1/etf/kline?source=old&as_of=2020-01-02T12:00:00Z');
        assert.equal(old.statusCode, 400);
        assert.equal(json(old).code, 4005);
        assert.match(String(json(old).message), /horizon \d{4}-\d{2}-\d{2}T/);
        assert.equal(typeof json(old).horizon, 'string');
        const etag = (await get(h.app, '/api/v1/revisions/etf_daily?source=old')).headers.etag;
        // The service in its own process: its retention job runs at start, in the background.
        server = await startServer({
          databaseUrl: h.databaseUrl,
          env: { MDS_REVISIONS_KEEP_DAYS: '30' },
        });
        await server.waitForOutput('removed revisions past MDS_REVISIONS_KEEP_DAYS', 60_000);
        const kept = await trailOf(server.port, 'old');
        // The revision that ended 2020-01-03 is gone; the one that ended today is kept (30 days).
        assert.deepEqual(
          kept.map((i) => i.row.close),
          [2, 3],
        );
        const after = await get(h.app, '/api/v1/revisions/etf_daily?source=old');
        assert.notEqual(after.headers.etag, etag, 'the trail changed: so did its ETag');
      } finally {
        await server?.kill('SIGTERM');
        await h.close();
      }
    });

    it('rows stored before history existed get a baseline revision; their batch cannot be reverted (4093)', async () => {
      const h = await startApp(backend, {}, { databaseUrl: fx.url });
      try {
        const source = uniqueId('pre');
        const pushed = await push(h.app, batch('etf_daily', bars(3, source, 5), { source }));
        const id = String(json(pushed).batch_id);
        await dropRevisions(backend, h.store, fx.url);
        const before = new Date().toISOString();
        await sleep(5);
        await h.store.migrate();
        const trail = json(await get(h.app, `/api/v1/revisions/etf_daily?source=${source}`)).data as Item[];
        assert.equal(trail.length, 3);
        assert.ok(
          trail.every((i) => i.op === 'insert' && i.batch_id === 'baseline' && i.valid_from > before),
        );
        assert.deepEqual(
          json(await get(h.app, `/api/v1/etf/kline?source=${source}&as_of=${before}`)).data,
          [],
        );
        const now = json(
          await get(h.app, `/api/v1/etf/kline?source=${source}&as_of=${new Date().toISOString()}`),
        );
        assert.equal((now.data as Json[]).length, 3);
        const r = await h.app.inject({
          method: 'POST',
          url: `/admin/api/batches/${id}/revert`,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        assert.equal(r.statusCode, 409);
        assert.equal(json(r).code, 4093);
      } finally {
        await h.app.close();
        await h.store.close();
      }
    });
  });
}
