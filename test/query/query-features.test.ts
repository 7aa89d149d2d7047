import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { MemoryLimiter } from '../../src/access/memory-limiter.js';
import { QUERY_KEY, backends, get, json, push, startApp, type Harness } from '../helpers/harness.js';
import { batch, days, etfBar } from '../helpers/batches.js';

/** fields=, format=csv|ndjson, ETag / If-None-Match and keyset cursors, over HTTP on every backend. */

const SYMBOLS = ['510300', '510500', '159915'];
const DAYS = days('2020-01-01', 500);

/** 1500 etf_daily rows; `open` is null on some rows and repeats, to page over NULLs and ties. */
function rows(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  DAYS.forEach((date, i) => {
    for (const symbol of SYMBOLS) {
      const extra: Record<string, unknown> = { close: 1 + i / 100, volume: 1000 + i };
      if (i % 7 === 0) delete extra.open;
      out.push({ ...etfBar(symbol, date, extra), open: i % 7 === 0 ? undefined : Math.round(i / 10) });
    }
  });
  return out.map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)));
}

type Meta = { total: number; limit: number; offset: number; has_more: boolean; next_cursor: string | null };

for (const backend of await backends()) {
  describe(`query features (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend);
      const res = await push(h.app, batch('etf_daily', rows(), { batchId: 'seed-1' }));
      assert.equal(res.statusCode, 200, res.body);
    });
    after(async () => h?.close());

    test('an export counts against the key like any request', async () => {
      // A fixed clock: a minute boundary passing between the two requests let the second one
      // through once (a new window).
      const at = Date.UTC(2030, 0, 15, 12, 0, 30);
      const limited = await startApp(
        backend,
        { MDS_STATIC_RATE_PER_MINUTE: '1' },
        { limiter: new MemoryLimiter({ now: () => at }) },
      );
      try {
        assert.equal((await get(limited.app, '/api/v1/etf/kline?format=csv')).statusCode, 200);
        const second = await get(limited.app, '/api/v1/etf/kline?format=ndjson');
        assert.equal(second.statusCode, 403);
        assert.equal(json(second).code, 4030);
      } finally {
        await limited.close();
      }
    });

    test('fields= selects columns; an unknown field is 400 / 4001', async () => {
      const res = await get(h.app, '/api/v1/etf/kline?fields=code,close,date&limit=3');
      assert.equal(res.statusCode, 200);
      const body = json(res) as { data: Record<string, unknown>[] };
      assert.equal(body.data.length, 3);
      for (const r of body.data) assert.deepEqual(Object.keys(r).sort(), ['close', 'code', 'date']);
      const bad = await get(h.app, '/api/v1/etf/kline?fields=code,nope');
      assert.equal(bad.statusCode, 400);
      assert.equal(json(bad).code, 4001);
      assert.match(String(json(bad).message), /nope/);
    });

    test('format=csv streams the whole result with a header row', async () => {
      const res = await get(h.app, '/api/v1/etf/kline?format=csv&fields=code,date,close,open');
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/csv/);
      const table = parse(res.body, { columns: true }) as Record<string, string>[];
      assert.equal(table.length, 1500);
      assert.deepEqual(Object.keys(table[0] ?? {}), ['code', 'date', 'close', 'open']);
      const nullOpen = table.find((r) => r.date === DAYS[0] && r.code === '510300');
      assert.equal(nullOpen?.open, '', 'an absent value is an empty cell');
      assert.equal(nullOpen?.close, '1');
    });

    test('format=ndjson streams one JSON row per line, filters applied', async () => {
      const res = await get(h.app, '/api/v1/etf/kline?format=ndjson&code=510500');
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
      const lines = res.body.trim().split('\n');
      assert.equal(lines.length, 500);
      const first = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
      assert.equal(first.code, '510500');
      assert.equal(first.date, DAYS[DAYS.length - 1], 'default sort date desc');
      assert.ok('created_at' in first);
    });

    test('ETag: 304 on If-None-Match; unchanged by a duplicate, changed by a real change', async () => {
      const url = '/api/v1/etf/kline?code=510300&limit=5';
      const first = await get(h.app, url);
      const etag = String(first.headers.etag);
      assert.ok(etag.length > 0);
      const cond = () =>
        h.app.inject({
          method: 'GET',
          url,
          headers: { 'q-api-key': QUERY_KEY, 'if-none-match': etag },
        });
      assert.equal((await cond()).statusCode, 304);

      // The same batch again (duplicate), and a new batch whose rows are all identical.
      const again = await push(h.app, batch('etf_daily', rows(), { batchId: 'seed-1' }));
      assert.equal(json(again).status, 'duplicate');
      const same = await push(h.app, batch('etf_daily', rows().slice(0, 3)));
      assert.equal(json(same).accepted, 0);
      assert.equal((await cond()).statusCode, 304);

      // A batch that changes a row of the dataset changes the ETag.
      const change = await push(h.app, batch('etf_daily', [etfBar('510300', '2030-01-01')]));
      assert.equal(json(change).accepted, 1);
      const after304 = await cond();
      assert.equal(after304.statusCode, 200);
      assert.notEqual(after304.headers.etag, etag);
      // A batch of another dataset leaves this one's ETag alone.
      const etag2 = String(after304.headers.etag);
      const other = await push(
        h.app,
        batch('fx', [{ symbol: 'USDCNY', date: '2024-01-02', close: 7.1, source: 's' }]),
      );
      assert.equal(json(other).accepted, 1);
      const cond2 = await h.app.inject({
        method: 'GET',
        url,
        headers: { 'q-api-key': QUERY_KEY, 'if-none-match': etag2 },
      });
      assert.equal(cond2.statusCode, 304);
    });

    test('cursor paging visits every row exactly once (default, nullable asc, mixed orders)', async () => {
      const orders = [
        '',
        '&sort=open&order=asc',
        '&sort=open&order=desc',
        '&sort=close&order=asc&code=510300',
        '&date_from=2020-03-01&date_to=2020-09-30',
      ];
      for (const extra of orders) {
        const total = (json(await get(h.app, `/api/v1/etf/kline?limit=1${extra}`)).meta as Meta).total;
        const seen = new Set<string>();
        let cursor: string | null = null;
        let pages = 0;
        do {
          const url: string =
            `/api/v1/etf/kline?limit=97&fields=close${extra}` + (cursor ? `&cursor=${cursor}` : '');
          const res = await get(h.app, url);
          assert.equal(res.statusCode, 200, res.body);
          const body = json(res) as { data: Record<string, unknown>[]; meta: Meta };
          assert.equal(body.meta.total, total);
          for (const r of body.data)
            assert.deepEqual(Object.keys(r), ['close'], 'extra sort fields stripped');
          // Identify rows through an export of the same page would be heavy: use full rows.
          const full = await get(h.app, url.replace('fields=close', 'fields=code,date,source'));
          for (const r of (json(full) as { data: Record<string, unknown>[] }).data) {
            const k = `${String(r.code)}|${String(r.date)}|${String(r.source)}`;
            assert.ok(!seen.has(k), `row ${k} seen twice (${extra})`);
            seen.add(k);
          }
          cursor = body.meta.next_cursor;
          assert.equal(body.meta.has_more, cursor !== null);
          pages++;
        } while (cursor !== null && pages < 100);
        assert.equal(seen.size, total, `every row once (${extra})`);
      }
    });

    test('cursor: the same order as offset paging; first page offers next_cursor', async () => {
      const a = json(await get(h.app, '/api/v1/etf/kline?limit=50&sort=open')) as {
        data: Record<string, unknown>[];
        meta: Meta;
      };
      assert.ok(a.meta.next_cursor);
      const b = json(
        await get(h.app, `/api/v1/etf/kline?limit=50&sort=open&cursor=${a.meta.next_cursor}`),
      ) as {
        data: Record<string, unknown>[];
      };
      const byOffset = json(await get(h.app, '/api/v1/etf/kline?limit=50&offset=50&sort=open')) as {
        data: Record<string, unknown>[];
      };
      assert.deepEqual(b.data, byOffset.data);
    });

    test('cursor paging over an integer key field and a timestamp sort', async () => {
      const risk = days('2024-01-01', 10).flatMap((date) =>
        [20, 60, 120].map((window) => ({
          symbol: '510300',
          date,
          window,
          volatility: window / 10,
          source: 's',
        })),
      );
      assert.equal((await push(h.app, batch('etf_risk_features', risk))).statusCode, 200);
      for (const extra of ['', '&sort=window&order=desc', '&sort=created_at&order=asc', '&sort=volatility']) {
        const seen = new Set<string>();
        let cursor: string | null = null;
        do {
          const url: string =
            `/api/v1/features/etf-risk?limit=4&fields=code,date,window${extra}` +
            (cursor ? `&cursor=${cursor}` : '');
          const res = await get(h.app, url);
          assert.equal(res.statusCode, 200, res.body);
          const body = json(res) as { data: Record<string, unknown>[]; meta: Meta };
          for (const r of body.data) {
            assert.equal(typeof r.window, 'number');
            const k = `${String(r.date)}|${String(r.window)}`;
            assert.ok(!seen.has(k), `${k} twice (${extra})`);
            seen.add(k);
          }
          cursor = body.meta.next_cursor;
        } while (cursor !== null);
        assert.equal(seen.size, 30, extra);
      }
    });

    test('a cursor with other filters or sort, or malformed, is 400 / 4001', async () => {
      const first = json(await get(h.app, '/api/v1/etf/kline?limit=10&code=510300')).meta as Meta;
      const cursor = String(first.next_cursor);
      for (const url of [
        `/api/v1/etf/kline?limit=10&code=510500&cursor=${cursor}`,
        `/api/v1/etf/kline?limit=10&code=510300&sort=open&cursor=${cursor}`,
        `/api/v1/etf/kline?limit=10&code=510300&cursor=not-a-cursor`,
        `/api/v1/etf/kline?limit=10&code=510300&cursor=${Buffer.from('{"v":[1],"h":"x"}').toString('base64url')}`,
        `/api/v1/etf/kline?limit=10&code=510300&cursor=%2B%2B`,
      ]) {
        const res = await get(h.app, url);
        assert.equal(res.statusCode, 400, url);
        assert.equal(json(res).code, 4001, url);
      }
      const ok = await get(h.app, `/api/v1/etf/kline?limit=10&code=510300&cursor=${cursor}`);
      assert.equal(ok.statusCode, 200);
    });
  });
}
