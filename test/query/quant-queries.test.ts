// Issue 27, items 1–2: many codes in one request, and codes and dates as users write them
// (Tushare's 510300.SH and 20240101, AKShare's sh510300), over real HTTP on every backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { CATALOG } from '../../src/catalog/catalog.js';
import { normalizeCode } from '../../src/query/codes.js';
import { backends, push, QUERY_KEY, startApp, type Harness, type Json } from '../helpers/harness.js';
import { adjFactor, batch, days, etfBar } from '../helpers/batches.js';
import { sampleRow } from '../helpers/sample-rows.js';

const CODES = ['510300', '510500', '159915'];
const DATES = days('2024-01-01', 10);

describe('code spellings (codes.ts)', () => {
  it('takes the exchange-marked forms of a 6-digit CN code; changes nothing else', () => {
    for (const s of ['510300', '510300.SH', '510300.sh', 'sh510300', 'SH510300', 'sh.510300', '510300.SZ'])
      assert.equal(normalizeCode('cn', s), '510300', s);
    for (const s of ['510300.XSHG', '510300.SS', 'bj430047'.replace('430047', '510300')])
      assert.equal(normalizeCode('cn', s), '510300', s);
    for (const s of ['00700', '00700.HK', 'USDCNY', '5103000.SH', 'sh51030', 'SH', '510300.SHX'])
      assert.equal(normalizeCode('cn', s), s, s);
    for (const s of ['BRK.B', 'sh510300', '510300.SH']) assert.equal(normalizeCode('us', s), s, s);
  });
});

for (const backend of await backends()) {
  describe(`many codes, code spellings and YYYYMMDD dates over HTTP (${backend})`, () => {
    let h: Harness;
    let base: string;
    const fetchPath = (path: string): Promise<Response> =>
      fetch(`${base}${path}`, { headers: { 'q-api-key': QUERY_KEY } });
    const body = async (path: string): Promise<{ data: Json[]; meta: Json }> => {
      const res = await fetchPath(path);
      const text = await res.text();
      assert.equal(res.status, 200, `${path}: ${text}`);
      return JSON.parse(text) as { data: Json[]; meta: Json };
    };
    const rowsOf = async (path: string): Promise<Json[]> => (await body(path)).data;
    const keys = (rows: Json[]) => rows.map((r) => `${String(r.code)}|${String(r.date)}`);

    before(async () => {
      h = await startApp(backend);
      await h.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
      const bars = CODES.flatMap((c, i) => DATES.map((d, j) => etfBar(c, d, { close: 10 * (i + 1) + j })));
      const res = await push(h.app, batch('etf_daily', bars));
      assert.equal(res.statusCode, 200, res.body);
      const f = await push(
        h.app,
        batch('adj_factor', [adjFactor('510300', '2024-01-01', 1), adjFactor('510300', '2024-01-06', 2)]),
      );
      assert.equal(f.statusCode, 200, f.body);
      const calendar = DATES.map((date) => ({ exchange: 'SSE', date, is_open: 1, source: 'sse' }));
      const c = await push(h.app, batch('trade_calendar', calendar));
      assert.equal(c.statusCode, 200, c.body);
      const us = CATALOG.byName.get('us_companies');
      assert.ok(us);
      const brk = { ...sampleRow(us, 1), ticker: 'BRK.B' };
      const u = await push(h.app, batch('us_companies', [brk, { ...sampleRow(us, 2), ticker: 'SH510300' }]));
      assert.equal(u.statusCode, 200, u.body);
    });
    after(() => h.close());

    it('a comma list and repeated parameters return the rows of every code, meta.total exact', async () => {
      const comma = await body('/api/v1/etf/kline?code=510300,510500&limit=1000');
      assert.equal(comma.data.length, 20);
      assert.equal(comma.meta.total, 20);
      assert.deepEqual(new Set(comma.data.map((r) => r.code)), new Set(['510300', '510500']));
      const repeated = await body('/api/v1/etf/kline?code=510300&code=510500&limit=1000');
      assert.deepEqual(keys(repeated.data), keys(comma.data));
      // Spaces after commas, a value twice, and a list mixing both forms: the same rows.
      const mixed = await body('/api/v1/etf/kline?code=510300,%20510500&code=510300&limit=1000');
      assert.deepEqual(keys(mixed.data), keys(comma.data));
      assert.equal((await body('/api/v1/etf/kline?code=510300,999999')).meta.total, 10);
    });

    it('pages and cursors walk a list of codes with no row twice or missing', async () => {
      const all = await rowsOf(`/api/v1/etf/kline?code=${CODES.join(',')}&sort=code&limit=1000`);
      assert.equal(all.length, 30);
      const byOffset: Json[] = [];
      for (let offset = 0; offset < 30; offset += 7) {
        byOffset.push(
          ...(await rowsOf(`/api/v1/etf/kline?code=${CODES.join(',')}&sort=code&limit=7&offset=${offset}`)),
        );
      }
      assert.deepEqual(keys(byOffset), keys(all));
      const byCursor: Json[] = [];
      let cursor: string | null = null;
      do {
        const page = await body(
          `/api/v1/etf/kline?code=${CODES.join(',')}&sort=code&limit=7${cursor ? `&cursor=${cursor}` : ''}`,
        );
        byCursor.push(...page.data);
        cursor = (page.meta.next_cursor as string | null | undefined) ?? null;
      } while (cursor);
      assert.deepEqual(keys(byCursor), keys(all));
      // A cursor is bound to its list: reused with another list it is refused.
      const first = await body(`/api/v1/etf/kline?code=510300,510500&limit=5`);
      const foreign = await fetchPath(
        `/api/v1/etf/kline?code=510300,159915&limit=5&cursor=${String(first.meta.next_cursor)}`,
      );
      assert.equal(foreign.status, 400);
    });

    it('exports, adjust, interval and as_of take a list', async () => {
      const csv = await (await fetchPath('/api/v1/etf/kline?code=510300,510500&format=csv')).text();
      assert.equal(csv.trim().split('\n').length, 1 + 20);
      const qfq = await rowsOf(
        '/api/v1/etf/kline?code=510300,510500&adjust=hfq&limit=1000&sort=date&order=asc',
      );
      const hfq300 = qfq.filter((r) => r.code === '510300');
      // 510300's factor doubles on 2024-01-06; 510500 has no factors (prices as stored).
      assert.equal(hfq300.find((r) => r.date === '2024-01-06')?.close, 2 * 15);
      assert.equal(qfq.find((r) => r.code === '510500' && r.date === '2024-01-06')?.close, 25);
      const weekly = await body('/api/v1/etf/kline?code=510300,510500&interval=1w&limit=1000');
      assert.equal(weekly.meta.total, weekly.data.length);
      assert.deepEqual(new Set(weekly.data.map((r) => r.code)), new Set(['510300', '510500']));
      const single = await body('/api/v1/etf/kline?code=510300&interval=1w&limit=1000');
      assert.equal(weekly.data.length, 2 * single.data.length);
      const now = new Date().toISOString();
      const asOf = await body(`/api/v1/etf/kline?code=510300,510500&as_of=${now}&limit=1000`);
      assert.equal(asOf.meta.total, 20);
    });

    it('at most 1000 values: beyond, 400 / 4001 naming the parameter and the maximum', async () => {
      const many = Array.from({ length: 1000 }, (_, i) => String(510000 + i));
      assert.equal((await body(`/api/v1/etf/kline?code=${many.join(',')}&limit=1000`)).meta.total, 20);
      const res = await fetchPath(`/api/v1/etf/kline?code=${[...many, '159915'].join(',')}`);
      assert.equal(res.status, 400);
      const err = (await res.json()) as Json;
      assert.equal(err.code, 4001);
      assert.match(String(err.message), /code takes at most 1000 values \(got 1001\)/);
      const empty = await fetchPath('/api/v1/etf/kline?code=510300,,510500');
      assert.equal(empty.status, 400);
    });

    it('CN codes as Tushare, AKShare, Wind and Yahoo write them; US tickers as written', async () => {
      const plain = keys(await rowsOf('/api/v1/etf/kline?code=510300&limit=1000'));
      assert.equal(plain.length, 10);
      for (const spelled of ['510300.SH', 'sh510300', 'SH510300', '510300.XSHG', '510300.SS']) {
        assert.deepEqual(keys(await rowsOf(`/api/v1/etf/kline?code=${spelled}&limit=1000`)), plain, spelled);
      }
      const list = await body('/api/v1/etf/kline?code=510300.SH,sz510500,159915.SZ&limit=1');
      assert.equal(list.meta.total, 30);
      assert.equal((await body('/api/v1/market/adj-factor?code=510300.SH')).meta.total, 2);
      const quality = await fetchPath('/api/v1/quality/etf_daily?code=sh510300&exchange=SSE');
      const q = (await quality.json()) as Json;
      if (quality.status === 200)
        assert.deepEqual(
          (q.data as Json[]).map((r) => r.code),
          ['510300'],
        );
      // US datasets are taken as written: BRK.B is a ticker, and SH510300 one too.
      assert.deepEqual(
        (await rowsOf('/api/v1/us/companies?ticker=BRK.B')).map((r) => r.ticker),
        ['BRK.B'],
      );
      assert.deepEqual(
        (await rowsOf('/api/v1/us/companies?ticker=SH510300')).map((r) => r.ticker),
        ['SH510300'],
      );
      assert.deepEqual(await rowsOf('/api/v1/us/companies?ticker=BRK'), []);
    });

    it('YYYYMMDD on every date parameter: date_from, date_to, exact dates, adjust_anchor', async () => {
      const dashed = await rowsOf('/api/v1/etf/kline?code=510300&date_from=2024-01-03&date_to=2024-01-05');
      const compact = await rowsOf('/api/v1/etf/kline?code=510300&date_from=20240103&date_to=20240105');
      assert.equal(dashed.length, 3);
      assert.deepEqual(compact, dashed);
      assert.deepEqual(
        keys(await rowsOf('/api/v1/etf/kline?code=510300&date=20240103,20240105&sort=date&order=asc')),
        ['510300|2024-01-03', '510300|2024-01-05'],
      );
      const anchored = await rowsOf(
        '/api/v1/etf/kline?code=510300&adjust=qfq&adjust_anchor=20240101&date=20240110',
      );
      assert.equal(anchored[0]?.close, 2 * 19);
      for (const bad of ['20240230', '2024011', '20241301']) {
        const res = await fetchPath(`/api/v1/etf/kline?date_from=${bad}`);
        assert.equal(res.status, 400, bad);
        assert.match(String(((await res.json()) as Json).message), /YYYY-MM-DD or YYYYMMDD/);
      }
    });
  });
}
