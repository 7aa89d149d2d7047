// Issue 16, point in time: revisions of every change, as_of on the query endpoints, the
// revision trail and batch revert, on every backend, through the HTTP contract.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADMIN_TOKEN,
  backends,
  batchStatus,
  get,
  json,
  push,
  startApp,
  type Harness,
  type Json,
} from '../helpers/harness.js';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';

type Item = { op: string; batch_id: string; valid_from: string; valid_to: string | null; row: Json };

const KLINE = '/api/v1/etf/kline';

async function pushOk(h: Harness, body: Record<string, unknown>): Promise<Json> {
  const res = await push(h.app, body);
  assert.ok(res.statusCode === 200 || res.statusCode === 207, res.body);
  return json(res);
}

async function revert(h: Harness, id: string): Promise<{ status: number; body: Json }> {
  const res = await h.app.inject({
    method: 'POST',
    url: `/admin/api/batches/${encodeURIComponent(id)}/revert`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  const body = json(res);
  // The admin answer's data on success; the error body otherwise.
  return { status: res.statusCode, body: res.statusCode === 200 ? (body.data as Json) : body };
}

async function rows(h: Harness, query: string): Promise<Json[]> {
  const res = await get(h.app, `${KLINE}?${query}`);
  assert.equal(res.statusCode, 200, res.body);
  return json(res).data as Json[];
}

async function trail(h: Harness, query: string): Promise<Item[]> {
  const res = await get(h.app, `/api/v1/revisions/etf_daily?${query}`);
  assert.equal(res.statusCode, 200, res.body);
  return json(res).data as Item[];
}

/** Waits for the clock to pass `t` (revisions are stamped in milliseconds). */
async function after1ms(): Promise<string> {
  const t = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 3));
  return t;
}

for (const backend of await backends()) {
  describe(`point in time (${backend})`, { timeout: 120_000 }, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend);
    });
    after(async () => {
      await h.close();
    });

    it('keeps a revision per insert, update and prune; duplicates write none', async () => {
      const src = uniqueId('ops');
      const day = '2024-02-01';
      const b1 = await pushOk(
        h,
        batch(
          'etf_daily',
          [etfBar('A1', day, { source: src, close: 1 }), etfBar('A2', day, { source: src, close: 2 })],
          {
            source: src,
          },
        ),
      );
      // Identical again: a duplicate, no revision.
      await pushOk(
        h,
        batch(
          'etf_daily',
          [etfBar('A1', day, { source: src, close: 1 }), etfBar('A2', day, { source: src, close: 2 })],
          {
            source: src,
          },
        ),
      );
      const b3 = await pushOk(
        h,
        batch('etf_daily', [etfBar('A1', day, { source: src, close: 11 })], { source: src }),
      );
      const b4 = await pushOk(
        h,
        batch('etf_daily', [etfBar('A1', day, { source: src, close: 11 })], {
          source: src,
          snapshotType: 'full_snapshot',
          businessDate: day,
        }),
      );
      assert.equal(b4.pruned, 1);
      const items = await trail(h, `source=${src}`);
      assert.deepEqual(
        items.map((i) => [i.op, i.row.code, i.row.close, i.batch_id]),
        [
          ['insert', 'A1', 1, b1.batch_id],
          ['insert', 'A2', 2, b1.batch_id],
          ['update', 'A1', 11, b3.batch_id],
          ['delete', 'A2', 2, b4.batch_id],
        ],
      );
      // valid_from is the batch's processed_at exactly as its status record shows it.
      for (const it of items) {
        const st = json(await batchStatus(h.app, it.batch_id));
        assert.equal(it.valid_from, st.processed_at);
        assert.equal(st.reverted_at, null);
      }
      // valid_to is the next revision's valid_from; null while current.
      assert.equal(items[0]?.valid_to, items[2]?.valid_from);
      assert.equal(items[1]?.valid_to, items[3]?.valid_from);
      assert.equal(items[2]?.valid_to, null);
      assert.equal(items[3]?.valid_to, null);
      // The trail's filters: batch_id, since/until on valid_from, the endpoint's own.
      assert.equal((await trail(h, `source=${src}&batch_id=${String(b3.batch_id)}`)).length, 1);
      assert.equal((await trail(h, `source=${src}&code=A2`)).length, 2);
      assert.equal((await trail(h, `source=${src}&since=${String(b3.processed_at)}`)).length, 2);
      assert.equal((await trail(h, `source=${src}&until=${String(b1.processed_at)}`)).length, 2);
      // As an export: NDJSON holds the items as the pages do; CSV a flat table, revision columns first.
      const nd = await get(h.app, `/api/v1/revisions/etf_daily?source=${src}&format=ndjson`);
      assert.equal(nd.statusCode, 200, nd.body);
      assert.deepEqual(
        nd.body
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Item),
        items,
      );
      const csv = await get(h.app, `/api/v1/revisions/etf_daily?source=${src}&format=csv`);
      assert.equal(csv.statusCode, 200, csv.body);
      const [header = '', ...lines] = csv.body.trim().split('\n');
      assert.match(header, /^op,batch_id,valid_from,valid_to,code,/);
      assert.deepEqual(
        lines.map((l) => l.split(',').slice(0, 2)),
        items.map((i) => [i.op, i.batch_id]),
      );
    });

    it('as_of answers what the same request answered then: rows, values, created_at, total', async () => {
      const src = uniqueId('asof');
      const day = '2024-03-01';
      const t0 = await after1ms();
      const first = [1, 2, 3].map((i) => etfBar(`C${i}`, day, { source: src, close: i }));
      await pushOk(h, batch('etf_daily', first, { source: src }));
      const t1 = await after1ms();
      const snapshot1 = await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc`);
      await pushOk(
        h,
        batch(
          'etf_daily',
          [etfBar('C1', day, { source: src, close: 10 }), etfBar('C4', day, { source: src, close: 4 })],
          {
            source: src,
            snapshotType: 'full_snapshot',
            businessDate: day,
          },
        ),
      );
      const t2 = await after1ms();
      const snapshot2 = await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc`);

      assert.deepEqual(await rows(h, `source=${src}&as_of=${t0}`), []);
      const at1 = await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc&as_of=${t1}`);
      assert.deepEqual(json(at1).data, json(snapshot1).data);
      assert.deepEqual(json(at1).meta, json(snapshot1).meta);
      const at2 = await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc&as_of=${t2}`);
      assert.deepEqual(json(at2).data, json(snapshot2).data);
      // An offset form of the same instant is the same instant.
      const local = new Date(Date.parse(t1) + 8 * 3600_000).toISOString().replace('Z', '+08:00');
      assert.deepEqual(
        await rows(h, `source=${src}&sort=code&order=asc&as_of=${encodeURIComponent(local)}`),
        json(snapshot1).data,
      );
      // Projections, filters and exports under as_of.
      assert.deepEqual(await rows(h, `source=${src}&code=C1&fields=code,close&as_of=${t1}`), [
        { code: 'C1', close: 1 },
      ]);
      const csv = await get(
        h.app,
        `${KLINE}?source=${src}&sort=code&order=asc&fields=code,close&format=csv&as_of=${t1}`,
      );
      assert.equal(csv.body, 'code,close\nC1,1\nC2,2\nC3,3\n');
      const nd = await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc&format=ndjson&as_of=${t1}`);
      assert.deepEqual(
        nd.body
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Json),
        json(snapshot1).data,
      );
      // Paging: offset and cursor pages under as_of cover the answer once.
      const p1 = json(await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc&limit=2&as_of=${t1}`));
      assert.deepEqual(p1.meta, {
        total: 3,
        limit: 2,
        offset: 0,
        has_more: true,
        next_cursor: (p1.meta as Json).next_cursor,
      });
      const cursor = String((p1.meta as Json).next_cursor);
      const p2 = json(
        await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc&limit=2&as_of=${t1}&cursor=${cursor}`),
      );
      assert.deepEqual([...(p1.data as Json[]), ...(p2.data as Json[])], json(snapshot1).data);
      assert.equal((p2.meta as Json).has_more, false);
      const o2 = json(
        await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc&limit=2&offset=2&as_of=${t1}`),
      );
      assert.deepEqual(o2.data, p2.data);
      // A cursor of an as_of query is refused on the current one.
      const foreign = await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc&limit=2&cursor=${cursor}`);
      assert.equal(foreign.statusCode, 400);
    });

    it('revert puts back the version before, as new revisions; conflicts and repeats change nothing', async () => {
      const src = uniqueId('rev');
      const day = '2024-04-01';
      await pushOk(
        h,
        batch(
          'etf_daily',
          [1, 2, 3].map((i) => etfBar(`R${i}`, day, { source: src, close: i })),
          { source: src },
        ),
      );
      const before = await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc`);
      // Updates R1, prunes R2 and R3, inserts R4.
      const snap = await pushOk(
        h,
        batch(
          'etf_daily',
          [etfBar('R1', day, { source: src, close: 10 }), etfBar('R4', day, { source: src, close: 4 })],
          {
            source: src,
            snapshotType: 'full_snapshot',
            businessDate: day,
          },
        ),
      );
      const tSnap = await after1ms();
      const r = await revert(h, String(snap.batch_id));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual([r.body.restored, r.body.updated, r.body.deleted], [2, 1, 1]);
      assert.deepEqual(
        json(await get(h.app, `${KLINE}?source=${src}&sort=code&order=asc`)).data,
        json(before).data,
      );
      const st = json(await batchStatus(h.app, String(snap.batch_id)));
      assert.equal(st.reverted_at, r.body.reverted_at);
      // The revert's revisions, and as_of across it.
      const revs = await trail(h, `source=${src}&batch_id=revert:${String(snap.batch_id)}`);
      assert.deepEqual(
        revs.map((i) => [i.row.code, i.op, i.row.close]),
        [
          ['R1', 'update', 1],
          ['R2', 'insert', 2],
          ['R3', 'insert', 3],
          ['R4', 'delete', 4],
        ],
      );
      assert.ok(revs.every((i) => i.valid_from === r.body.reverted_at));
      assert.deepEqual(
        (await rows(h, `source=${src}&sort=code&order=asc&as_of=${tSnap}`)).map((x) => [x.code, x.close]),
        [
          ['R1', 10],
          ['R4', 4],
        ],
      );
      // Again: 200, zero counts, nothing changed.
      const again = await revert(h, String(snap.batch_id));
      assert.equal(again.status, 200);
      assert.deepEqual([again.body.restored, again.body.updated, again.body.deleted], [0, 0, 0]);
      assert.equal((await trail(h, `source=${src}`)).length, revs.length + 7);

      // A later batch changed a row the first batch wrote: 409 / 4092 naming the key.
      const b = await pushOk(
        h,
        batch('etf_daily', [etfBar('R9', day, { source: src, close: 9 })], { source: src }),
      );
      await pushOk(h, batch('etf_daily', [etfBar('R9', day, { source: src, close: 99 })], { source: src }));
      const trailBefore = await trail(h, `source=${src}`);
      const c = await revert(h, String(b.batch_id));
      assert.equal(c.status, 409);
      assert.equal(c.body.code, 4092);
      assert.deepEqual(c.body.conflicts, [{ code: 'R9', date: day, source: src }]);
      assert.deepEqual(await trail(h, `source=${src}`), trailBefore);
      assert.equal(json(await batchStatus(h.app, String(b.batch_id))).reverted_at, null);
      // Unknown batch: 404 / 4040.
      const unknown = await revert(h, 'no-such-batch');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 4040);
    });

    it('as_of composes with adjust and interval: bars and factors both as they were known then', async () => {
      const src = uniqueId('adj');
      const bars = (close: number) =>
        ['2024-06-03', '2024-06-04', '2024-06-05'].map((d) => etfBar('ADJ1', d, { source: src, close }));
      const factors = (f: number) =>
        ['2024-06-03', '2024-06-05'].map((d, i) => ({
          symbol: 'ADJ1',
          date: d,
          adj_factor: f * (i + 1),
          source: 'adjtest',
          updated_at: '2024-06-06T00:00:00Z',
        }));
      await pushOk(h, batch('etf_daily', bars(10), { source: src }));
      await pushOk(h, batch('adj_factor', factors(1), { source: 'adjtest' }));
      const t1 = await after1ms();
      const url = `${KLINE}?code=ADJ1&source=${src}&adjust=hfq&sort=date&order=asc`;
      const then = json(await get(h.app, url));
      // Bars corrected and factors restated afterwards.
      await pushOk(h, batch('etf_daily', bars(20), { source: src }));
      await pushOk(h, batch('adj_factor', factors(5), { source: 'adjtest' }));
      const now = json(await get(h.app, url));
      assert.notDeepEqual(now.data, then.data);
      const asOf = json(await get(h.app, `${url}&as_of=${t1}`));
      assert.deepEqual(asOf.data, then.data);
      assert.deepEqual(
        (asOf.data as Json[]).map((r) => r.close),
        [10, 10, 20],
      );
      const monthly = `${KLINE}?code=ADJ1&source=${src}&interval=1M&adjust=hfq`;
      const monthlyThen = json(await get(h.app, `${monthly}&as_of=${t1}`));
      assert.equal((monthlyThen.data as Json[])[0]?.close, 20);
      assert.equal((monthlyThen.meta as Json).total, 1);
    });

    it('a batch of hundreds of rows in no order, new, changed and unchanged, updated_at given or not: each change kept once', async () => {
      // More rows than one write statement takes (SQLite writes them 64 to a statement, in key
      // order), shuffled, so every statement boundary is crossed.
      const src = uniqueId('many');
      const days = Array.from(
        { length: 50 },
        (_, i) =>
          `2023-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + Math.floor(i / 12)).padStart(2, '0')}`,
      );
      const keys = ['N1', 'N2', 'N3', 'N4'].flatMap((code) => days.map((day) => ({ code, day })));
      let seed = 7;
      const shuffled = <T>(xs: T[]): T[] => {
        const out = [...xs];
        for (let i = out.length - 1; i > 0; i--) {
          seed = (seed * 1103515245 + 12345) % 2147483648;
          const j = seed % (i + 1);
          [out[i], out[j]] = [out[j] as T, out[i] as T];
        }
        return out;
      };
      const given = (i: number): boolean => i % 2 === 0;
      const bar = (i: number, nav: number, updated: string): Record<string, unknown> => {
        const k = keys[i] as { code: string; day: string };
        const row: Record<string, unknown> = { code: k.code, trade_date: k.day, nav, source: src };
        if (given(i)) row.updated_at = updated;
        return row;
      };
      const first = keys.map((_, i) => bar(i, 1 + i / 1000, '2024-01-01T00:00:00Z'));
      const b1 = await pushOk(h, batch('etf_nav', shuffled(first), { source: src }));
      assert.equal(b1.accepted, keys.length);
      const t1 = await after1ms();
      // Key i: i % 3 = 0 the same; 1 a new nav; 2 a new updated_at only (no change: docs/ingest.md).
      const second = keys.map((_, i) =>
        i % 3 === 1
          ? bar(i, 2 + i / 1000, '2024-01-01T00:00:00Z')
          : bar(i, 1 + i / 1000, i % 3 === 2 ? '2024-06-01T00:00:00Z' : '2024-01-01T00:00:00Z'),
      );
      const fresh = Array.from({ length: 30 }, (_, i) => ({
        code: 'N5',
        trade_date: days[i],
        nav: 5,
        source: src,
      }));
      const b2 = await pushOk(h, batch('etf_nav', shuffled([...second, ...fresh]), { source: src }));
      const changed = keys.filter((_, i) => i % 3 === 1).length;
      assert.equal(b2.accepted, changed + fresh.length);
      assert.equal(b2.duplicate, keys.length - changed);
      const items: Item[] = [];
      for (let offset = 0; ; offset += 1000) {
        const res = await get(h.app, `/api/v1/revisions/etf_nav?source=${src}&limit=1000&offset=${offset}`);
        assert.equal(res.statusCode, 200, res.body);
        const page = json(res).data as Item[];
        items.push(...page);
        if (page.length < 1000) break;
      }
      const ofB2 = items.filter((it) => it.batch_id === b2.batch_id);
      assert.equal(ofB2.filter((it) => it.op === 'update').length, changed);
      assert.equal(ofB2.filter((it) => it.op === 'insert').length, fresh.length);
      // Each changed key's first version closed at the second batch's instant, the rest open.
      const closed = items.filter((it) => it.batch_id === b1.batch_id && it.valid_to !== null);
      assert.equal(closed.length, changed);
      assert.ok(closed.every((it) => it.valid_to === b2.processed_at));
      // as_of before the second batch answers the first batch's values, every one.
      const before = await get(h.app, `/api/v1/etf/nav?source=${src}&limit=1000&as_of=${t1}`);
      assert.equal(before.statusCode, 200, before.body);
      const then = (json(before).data as Json[]).map(
        (r) => `${String(r.code)} ${String(r.trade_date)} ${String(r.nav)}`,
      );
      const want = first.map((r) => `${String(r.code)} ${String(r.trade_date)} ${String(r.nav)}`);
      assert.deepEqual(then.sort(), want.sort());
    });

    it('refuses a malformed as_of (4001) and an unknown trail dataset (4041)', async () => {
      for (const bad of ['yesterday', '2024-01-01', '2024-13-01T00:00:00Z', '2024-01-01T00:00:00']) {
        const res = await get(h.app, `${KLINE}?as_of=${encodeURIComponent(bad)}`);
        assert.equal(res.statusCode, 400, bad);
        assert.equal(json(res).code, 4001);
      }
      const res = await get(h.app, '/api/v1/revisions/nope');
      assert.equal(res.statusCode, 404);
      const unk = await get(h.app, '/api/v1/revisions/etf_daily?sort=code');
      assert.equal(unk.statusCode, 400);
    });
  });
}
