import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { tableFromIPC } from 'apache-arrow';
import { parquetReadObjects } from 'hyparquet';
import { backends, get, json, push, startApp, type Harness } from '../helpers/harness.js';
import { adjFactor as factor, batch } from '../helpers/batches.js';

/**
 * adjust=qfq|hfq and interval=1w|1M|1Q|1Y, pinned to hand-computed examples on every backend
 * (docs/bars-and-quality.md shows the same numbers). Prices are chosen so that products and
 * quotients are exact in binary; where they are not, the expected value is written as the
 * same operations in the same order (price × f(d) / f(anchor)), so the comparison stays exact.
 *
 * Code A, source "test". Factors: 1 from 2024-04-26, 2 from 2024-05-06 (a 1:1 split, ex-date
 * on a bar date), 3 from 2024-05-29 (a dividend of 2 on a close of 6: 6 / (6 − 2) = 1.5; the
 * factor's date falls between the bars of 05-07 and 05-30). 2024-04-25 is before the first
 * factor: it uses the first (1). May 1–3 are holidays (no bars), and so is Friday 05-31, the
 * last day of May.
 */

const bar = (date: string, o: number, h: number, l: number, c: number, pc: number, volume: number) => ({
  symbol: 'A',
  date,
  open: o,
  high: h,
  low: l,
  close: c,
  pre_close: pc,
  change: c - pc,
  pct_chg: 1.5,
  volume,
  amount: volume * 10,
  source: 'test',
  updated_at: `${date}T08:30:00Z`,
});

const BARS = [
  bar('2024-04-25', 10, 11, 9, 10, 10, 100),
  bar('2024-04-26', 10, 12, 10, 12, 10, 200),
  bar('2024-04-29', 12, 12, 11, 11, 12, 100),
  bar('2024-04-30', 11, 11.5, 10.5, 11, 11, 100),
  bar('2024-05-06', 5.5, 6, 5.5, 6, 5.5, 400),
  bar('2024-05-07', 6, 6.5, 5.75, 6, 6, 300),
  bar('2024-05-30', 4.25, 4.75, 4, 4.5, 4, 200),
  bar('2024-06-03', 4.5, 5, 4.5, 5, 4.5, 100),
];
// Code B has no factors: returned as stored.
const B = { ...bar('2024-05-06', 7, 7, 7, 7, 7, 50), symbol: 'B' };

type Row = Record<string, number | string | null>;

/** A date column's value as YYYY-MM-DD, whichever way a columnar reader gives it. */
const day = (v: unknown): string =>
  v instanceof Date
    ? v.toISOString().slice(0, 10)
    : typeof v === 'number' || typeof v === 'bigint'
      ? new Date(Number(v)).toISOString().slice(0, 10)
      : String(v);
type Body = { data: Row[]; meta: Record<string, unknown> };

for (const backend of await backends()) {
  describe(`adjusted and resampled bars (${backend})`, () => {
    let h: Harness;
    const q = async (path: string): Promise<Body> => {
      const res = await get(h.app, path);
      assert.equal(res.statusCode, 200, res.body);
      return json(res) as unknown as Body;
    };
    const byDate = (rows: Row[]) => new Map(rows.map((r) => [String(r.date), r]));

    before(async () => {
      h = await startApp(backend);
      for (const b of [
        batch('etf_daily', [...BARS, B]),
        batch(
          'stock_daily',
          BARS.map(({ updated_at: _u, ...r }) => ({ ...r, symbol: '600000' })),
        ),
        batch('adj_factor', [
          factor('A', '2024-04-26', 1),
          factor('A', '2024-05-06', 2),
          factor('A', '2024-05-29', 3),
          factor('600000', '2024-05-06', 2),
        ]),
      ]) {
        const res = await push(h.app, b);
        assert.equal(res.statusCode, 200, res.body);
      }
    });
    after(async () => h?.close());

    test('hfq: price × f(d); before the first factor the first; pre_close times its own bar’s factor', async () => {
      const body = await q('/api/v1/etf/kline?code=A&adjust=hfq&limit=20');
      const r = byDate(body.data);
      assert.deepEqual(
        body.data.map((x) => x.close),
        [15, 13.5, 12, 12, 11, 11, 12, 10],
      );
      assert.equal(r.get('2024-04-25')?.close, 10, 'before the first factor: the first factor (1)');
      // Split ex-date: the exchange's pre_close (5.5) is already ex-rights: 5.5 × 2 = 11.
      assert.deepEqual(
        [r.get('2024-05-06')?.open, r.get('2024-05-06')?.high, r.get('2024-05-06')?.pre_close],
        [11, 12, 11],
      );
      assert.equal(r.get('2024-05-06')?.change, 1, 'change = adjusted close − adjusted pre_close');
      // The factor of 05-29 (between bars) applies to 05-30: 4.5 × 3, pre_close 4 × 3.
      assert.deepEqual([r.get('2024-05-30')?.close, r.get('2024-05-30')?.pre_close], [13.5, 12]);
      assert.equal(r.get('2024-05-30')?.change, 1.5);
      assert.equal(r.get('2024-05-30')?.pct_chg, 1.5, 'pct_chg as stored');
      assert.equal(r.get('2024-05-30')?.volume, 200, 'volume as stored');
      assert.deepEqual(body.meta.adjust, {
        method: 'hfq',
        anchor: null,
        codes_without_factors: [],
        factors: [{ code: 'A', source: 'test', factor_source: 'test', anchor: null }],
      });
    });

    test('qfq: price × f(d) / f(latest factor) by default, the same whatever the window', async () => {
      const all = byDate((await q('/api/v1/etf/kline?code=A&adjust=qfq&limit=20')).data);
      assert.equal(all.get('2024-04-25')?.close, (10 * 1) / 3);
      assert.equal(all.get('2024-05-06')?.close, (6 * 2) / 3);
      assert.equal(all.get('2024-05-06')?.pre_close, (5.5 * 2) / 3);
      assert.equal(all.get('2024-05-06')?.change, (6 * 2) / 3 - (5.5 * 2) / 3);
      assert.equal(all.get('2024-06-03')?.close, 5, 'bars after the latest factor: as stored');
      assert.equal(all.get('2024-05-30')?.change, 0.5);
      const window = byDate(
        (await q('/api/v1/etf/kline?code=A&adjust=qfq&date_from=2024-04-25&date_to=2024-05-06')).data,
      );
      assert.equal(window.get('2024-05-06')?.close, all.get('2024-05-06')?.close);
      assert.equal(window.get('2024-04-25')?.close, all.get('2024-04-25')?.close);
    });

    test('qfq with adjust_anchor: divided by the factor in force on the anchor', async () => {
      const body = await q('/api/v1/etf/kline?code=A&adjust=qfq&adjust_anchor=2024-05-06&limit=20');
      const r = byDate(body.data);
      assert.deepEqual(
        ['2024-04-25', '2024-05-06', '2024-05-30'].map((d) => r.get(d)?.close),
        [5, 6, 6.75],
      );
      assert.deepEqual(body.meta.adjust, {
        method: 'qfq',
        anchor: '2024-05-06',
        codes_without_factors: [],
        factors: [{ code: 'A', source: 'test', factor_source: 'test', anchor: '2024-05-06' }],
      });
    });

    test('qfq by default names the anchor it used: the latest factor date, which reproduces it', async () => {
      const body = await q('/api/v1/etf/kline?code=A&adjust=qfq&limit=20');
      const used = (body.meta.adjust as { factors: { anchor: string }[] }).factors;
      assert.deepEqual(used, [{ code: 'A', source: 'test', factor_source: 'test', anchor: '2024-05-29' }]);
      const again = await q(`/api/v1/etf/kline?code=A&adjust=qfq&limit=20&adjust_anchor=${used[0]?.anchor}`);
      assert.deepEqual(again.data, body.data);
    });

    test('adjust_anchor=end: each code anchored at its last bar in the window, which equals its raw price', async () => {
      for (const sort of ['', '&sort=close&order=desc']) {
        const body = await q(
          `/api/v1/etf/kline?code=A&adjust=qfq&adjust_anchor=end&date_to=2024-05-07&limit=20${sort}`,
        );
        const r = byDate(body.data);
        // The window's last bar (05-07, factor 2) is as stored; 04-25 (factor 1): 10 × 1 ÷ 2.
        assert.equal(r.get('2024-05-07')?.close, 6);
        assert.equal(r.get('2024-04-25')?.close, 5);
        assert.deepEqual((body.meta.adjust as { factors: unknown[] }).factors, [
          { code: 'A', source: 'test', factor_source: 'test', anchor: '2024-05-07' },
        ]);
      }
      // A page of the window, not the window: the anchor is still the window's last bar.
      const page = await q(
        '/api/v1/etf/kline?code=A&adjust=qfq&adjust_anchor=end&date_to=2024-05-07&sort=date&order=asc&limit=1',
      );
      assert.equal(page.data[0]?.close, 5);
      const bad = await get(h.app, '/api/v1/etf/kline?code=A&adjust=hfq&adjust_anchor=end');
      assert.equal(bad.statusCode, 400);
    });

    test('a code without factors is returned as stored, and meta.adjust names it', async () => {
      const body = await q('/api/v1/etf/kline?date=2024-05-06&adjust=qfq');
      const b = body.data.find((x) => x.code === 'B');
      assert.deepEqual([b?.open, b?.close, b?.change], [7, 7, 0]);
      assert.deepEqual((body.meta.adjust as { codes_without_factors: string[] }).codes_without_factors, [
        'B',
      ]);
    });

    test('sorting by a price under adjust orders by the adjusted value', async () => {
      const body = await q('/api/v1/etf/kline?code=A&adjust=hfq&sort=close&order=desc&limit=2');
      assert.deepEqual(
        body.data.map((x) => [x.date, x.close]),
        [
          ['2024-06-03', 15],
          ['2024-05-30', 13.5],
        ],
      );
      const next = await q(
        `/api/v1/etf/kline?code=A&adjust=hfq&sort=close&order=desc&limit=2&cursor=${String(body.meta.next_cursor)}`,
      );
      assert.deepEqual(
        next.data.map((x) => x.close),
        [12, 12],
      );
    });

    test('interval=1w: ISO weeks; a week spanning the May holidays; pre_close the previous week’s close', async () => {
      const body = await q('/api/v1/etf/kline?code=A&interval=1w&sort=date&order=asc');
      assert.equal(body.meta.total, 5);
      const [w17, w18, w19] = body.data;
      assert.deepEqual(w17, {
        ...w17,
        date: '2024-04-26',
        period_start: '2024-04-25',
        bar_count: 2,
        open: 10,
        high: 12,
        low: 9,
        close: 12,
        pre_close: 10,
        change: 2,
        pct_chg: 20,
        volume: 300,
        amount: 3000,
      });
      assert.deepEqual(
        [w18?.period_start, w18?.date, w18?.bar_count, w18?.open, w18?.low, w18?.close, w18?.pre_close],
        ['2024-04-29', '2024-04-30', 2, 12, 10.5, 11, 12],
      );
      assert.equal(w18?.change, -1);
      assert.equal(w18?.pct_chg, (-1 / 12) * 100);
      assert.deepEqual([w19?.open, w19?.high, w19?.close, w19?.pre_close], [5.5, 6.5, 6, 11]);
    });

    test('interval=1M: the date is the last bar’s, not a month end that was a holiday', async () => {
      const body = await q('/api/v1/etf/kline?code=A&interval=1M');
      assert.equal(body.meta.total, 3);
      assert.deepEqual(
        body.data.map((x) => [x.period_start, x.date, x.bar_count]),
        [
          ['2024-06-03', '2024-06-03', 1],
          ['2024-05-06', '2024-05-30', 3],
          ['2024-04-25', '2024-04-30', 4],
        ],
      );
      const may = body.data[1];
      assert.deepEqual([may?.open, may?.high, may?.low, may?.close, may?.pre_close], [5.5, 6.5, 4, 4.5, 11]);
    });

    test('adjusted, then resampled: hfq months', async () => {
      const body = await q('/api/v1/etf/kline?code=A&interval=1M&adjust=hfq&sort=date&order=asc');
      const [apr, may, jun] = body.data;
      assert.deepEqual([apr?.open, apr?.high, apr?.low, apr?.close, apr?.pre_close], [10, 12, 9, 11, 10]);
      assert.deepEqual(
        [may?.open, may?.high, may?.low, may?.close, may?.pre_close],
        [11, 14.25, 11, 13.5, 11],
      );
      assert.equal(may?.change, 2.5);
      assert.equal(may?.pct_chg, (2.5 / 11) * 100);
      assert.deepEqual([jun?.close, jun?.pre_close, jun?.change], [15, 13.5, 1.5]);
      assert.equal(jun?.pct_chg, ((15 - 13.5) / 13.5) * 100);
      assert.equal(may?.volume, 900);
    });

    test('quarters and years; paging, cursor and fields over periods', async () => {
      const qq = await q('/api/v1/etf/kline?code=A&interval=1Q');
      assert.deepEqual(
        qq.data.map((x) => [x.period_start, x.date, x.bar_count]),
        [['2024-04-25', '2024-06-03', 8]],
      );
      const y = await q('/api/v1/etf/kline?interval=1Y&sort=date&order=asc');
      assert.deepEqual(
        y.data.map((x) => [x.code, x.bar_count]),
        [
          ['B', 1],
          ['A', 8],
        ],
      );
      const p1 = await q('/api/v1/etf/kline?code=A&interval=1w&limit=2&fields=date,close');
      assert.equal(p1.meta.total, 5);
      assert.deepEqual(p1.data, [
        { date: '2024-06-03', close: 5 },
        { date: '2024-05-30', close: 4.5 },
      ]);
      const p2 = await q(
        `/api/v1/etf/kline?code=A&interval=1w&limit=2&fields=date,close&cursor=${String(p1.meta.next_cursor)}`,
      );
      assert.deepEqual(
        p2.data.map((x) => x.date),
        ['2024-05-07', '2024-04-30'],
      );
      const p3 = await q('/api/v1/etf/kline?code=A&interval=1w&limit=2&offset=4');
      assert.deepEqual([p3.data.length, p3.meta.has_more], [1, false]);
    });

    test('exports of adjusted and resampled rows: csv and ndjson', async () => {
      const csv = await get(
        h.app,
        '/api/v1/etf/kline?code=A&interval=1M&adjust=hfq&format=csv&fields=date,close,bar_count',
      );
      assert.equal(csv.statusCode, 200);
      assert.deepEqual(parse(csv.body, { columns: true }), [
        { date: '2024-06-03', close: '15', bar_count: '1' },
        { date: '2024-05-30', close: '13.5', bar_count: '3' },
        { date: '2024-04-30', close: '11', bar_count: '4' },
      ]);
      const nd = await get(
        h.app,
        '/api/v1/etf/kline?code=A&adjust=qfq&adjust_anchor=2024-05-06&format=ndjson',
      );
      const lines = nd.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Row);
      assert.equal(lines.find((l) => l.date === '2024-05-30')?.close, 6.75);
    });

    test('exports of adjusted and resampled rows: arrow and parquet', async () => {
      const url = '/api/v1/etf/kline?code=A&interval=1M&adjust=hfq&fields=date,close,bar_count,period_start';
      const arrow = await get(h.app, `${url}&format=arrow`);
      assert.equal(arrow.statusCode, 200);
      const table = tableFromIPC(arrow.rawPayload);
      assert.deepEqual(
        table.toArray().map((r: { toJSON(): Row }) => {
          const o = r.toJSON();
          return [day(o.date), o.close, Number(o.bar_count)];
        }),
        [
          ['2024-06-03', 15, 1],
          ['2024-05-30', 13.5, 3],
          ['2024-04-30', 11, 4],
        ],
      );
      const parquet = await get(h.app, `${url}&format=parquet`);
      assert.equal(parquet.statusCode, 200);
      const rows = await parquetReadObjects({ file: new Uint8Array(parquet.rawPayload).buffer });
      assert.deepEqual(
        rows.map((r) => [day(r.date), r.close, Number(r.bar_count), day(r.period_start)]),
        [
          ['2024-06-03', 15, 1, '2024-06-03'],
          ['2024-05-30', 13.5, 3, '2024-05-06'],
          ['2024-04-30', 11, 4, '2024-04-25'],
        ],
      );
    });

    test('stock_daily adjusts too; index_daily resamples but has no adjust', async () => {
      const s = await q('/api/v1/stock/daily?code=600000&adjust=hfq&date=2024-05-06');
      assert.equal(s.data[0]?.close, 12);
      const idx = await get(h.app, '/api/v1/index/price?adjust=qfq');
      assert.equal(idx.statusCode, 400);
      assert.equal(json(idx).code, 4001);
    });

    test('bad parameters are 400 / 4001', async () => {
      for (const path of [
        '/api/v1/etf/kline?adjust=yes',
        '/api/v1/etf/kline?interval=2w',
        '/api/v1/etf/kline?adjust=hfq&adjust_anchor=2024-05-06',
        '/api/v1/etf/kline?adjust=qfq&adjust_anchor=2024-02-30',
        '/api/v1/etf/kline?adjust_source=test',
        '/api/v1/etf/kline?fields=bar_count',
        '/api/v1/etf/nav?interval=1M',
      ]) {
        const res = await get(h.app, path);
        assert.equal(res.statusCode, 400, path);
        assert.equal(json(res).code, 4001, path);
      }
    });

    test('factors from several sources: the bars’ own first; else 400 / 4001 naming them, until adjust_source picks one', async () => {
      const res = await push(h.app, batch('adj_factor', [factor('A', '2024-05-06', 4, 'other')]));
      assert.equal(res.statusCode, 200, res.body);
      // A's bars are of source "test", which has factors for A: those adjust them.
      const own = await q('/api/v1/etf/kline?code=A&adjust=hfq&limit=20');
      assert.equal(byDate(own.data).get('2024-06-03')?.close, 15);
      // Bars of A from a source without factors: two factor sources, neither theirs.
      const third = await push(
        h.app,
        batch('etf_daily', [{ ...bar('2024-06-03', 5, 5, 5, 5, 5, 1), source: 'third' }], {
          source: 'third',
        }),
      );
      assert.equal(third.statusCode, 200, third.body);
      const bad = await get(h.app, '/api/v1/etf/kline?code=A&adjust=qfq');
      assert.equal(bad.statusCode, 400);
      assert.equal(json(bad).code, 4001);
      assert.match(String(json(bad).message), /other, test/);
      assert.match(String(json(bad).message), /third/);
      const csv = await get(h.app, '/api/v1/etf/kline?adjust=hfq&format=csv');
      assert.equal(csv.statusCode, 400, 'an export is refused before its first byte');
      // Only the codes (and sources) of the answer are judged.
      await q('/api/v1/etf/kline?code=A&source=test&adjust=qfq');
      await q('/api/v1/etf/kline?code=B&adjust=qfq');
      await q('/api/v1/stock/daily?adjust=qfq');
      const unknown = await get(h.app, '/api/v1/etf/kline?code=A&adjust=qfq&adjust_source=nope');
      assert.equal(unknown.statusCode, 400, 'an unknown adjust_source is refused');
      assert.deepEqual(json(unknown).allowed, ['other', 'test']);
      const picked = byDate(
        (await q('/api/v1/etf/kline?code=A&source=test&adjust=hfq&adjust_source=other')).data,
      );
      // Source "other" has one factor (4 from 05-06): earlier bars use it too.
      assert.equal(picked.get('2024-04-25')?.close, 40);
      assert.equal(picked.get('2024-06-03')?.close, 20);
    });
  });
}
