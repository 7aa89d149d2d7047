// Adjusted prices as a user reads them (docs/bars-and-quality.md): a bar whose factor ratio is 1
// is answered as stored on every path (in the process, in SQL, resampled, exported, minute
// bars), and `adjust_anchor=end` under `source_priority` anchors the one series the answer forms
// at its last bar (daily and minute). Both backends, over HTTP.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { adjFactor, batch, type Data } from '../helpers/batches.js';
import { dayBars } from '../helpers/minute-bars.js';

const KLINE = '/api/v1/etf/kline';
const MINUTE = '/api/v1/stock/minute';
/** 1.901 × 1.1 ÷ 1.1 is 1.9010000000000002 in doubles. */
const F = 1.1;
/** The minute bars' factor: some of their prices × it ÷ it are not the price either. */
const FM = 0.813;

const bar = (symbol: string, date: string, close: number, source: string): Data => ({
  symbol,
  date,
  open: close,
  high: close,
  low: close,
  close,
  pre_close: close - 0.01,
  change: 0.01,
  pct_chg: 0.5,
  volume: 1000,
  amount: 1000 * close,
  source,
  updated_at: `${date}T08:00:00Z`,
});

// Code ONE: every bar's factor is the latest (ratio 1 under the default anchor).
const ONE = ['2024-05-06', '2024-05-07', '2024-05-08', '2024-05-09', '2024-05-10'].map((d, i) =>
  bar('ONE', d, [1.901, 2.03, 3.57, 1.13, 2.21][i] as number, 'test'),
);
// Code R: days from b, then from a, a 2:1 split (factor 1 → 2) after b's last bar.
const R = [
  bar('R', '2024-05-06', 10, 'b'),
  bar('R', '2024-05-07', 10.3, 'b'),
  bar('R', '2024-05-08', 5.2, 'a'),
  bar('R', '2024-05-09', 5.3, 'a'),
];

for (const backend of await backends()) {
  describe(`adjusted series (${backend})`, { timeout: 120_000 }, () => {
    let h: Harness;
    const pushed = async (body: unknown): Promise<void> => {
      const res = await push(h.app, body);
      assert.equal(res.statusCode, 200, res.body);
    };
    const page = async (url: string): Promise<Json> => {
      const res = await get(h.app, url);
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const closes = async (url: string): Promise<unknown[]> =>
      ((await page(url)).data as Json[]).map((r) => r.close);

    before(async () => {
      h = await startApp(backend);
      await pushed(batch('etf_daily', ONE, { source: 'test' }));
      await pushed(batch('etf_daily', R.slice(0, 2), { source: 'b' }));
      await pushed(batch('etf_daily', R.slice(2), { source: 'a' }));
      const minute = [
        ...dayBars('600010', '2024-05-06', 10, 'b'),
        ...dayBars('600010', '2024-05-08', 5, 'a'),
        ...dayBars('600011', '2024-05-06', 10, 'test'),
      ];
      await pushed(batch('stock_minute', minute));
      await pushed(
        batch('adj_factor', [
          adjFactor('ONE', '2024-05-06', F),
          adjFactor('R', '2024-05-06', 1),
          adjFactor('R', '2024-05-08', 2),
          adjFactor('600010', '2024-05-06', 1),
          adjFactor('600010', '2024-05-08', 2),
          adjFactor('600011', '2024-05-06', FM),
        ]),
      );
    });
    after(async () => {
      await h.close();
    });

    it('factor ratio 1: qfq answers the stored prices on every path, not price × f ÷ f', async () => {
      // The test can fail: the arithmetic alone does not give the stored price back.
      assert.notEqual((1.901 * F) / F, 1.901);
      const stored = ONE.map((b) => b.close);
      const asc = `${KLINE}?code=ONE&adjust=qfq&sort=date&order=asc`;
      assert.deepEqual(await closes(asc), stored, 'in the process');
      assert.deepEqual(await closes(`${asc}&fields=date,close,change`), stored, 'a projection');
      const bySql = await page(`${KLINE}?code=ONE&adjust=qfq&sort=close&order=asc`);
      assert.deepEqual(
        (bySql.data as Json[]).map((r) => r.close),
        [...stored].sort((a, b) => (a as number) - (b as number)),
        'in SQL (a sort on a price)',
      );
      assert.ok((bySql.data as Json[]).every((r) => r.change === 0.01));
      for (const anchor of ['end', '2024-05-08']) {
        assert.deepEqual(await closes(`${asc}&adjust_anchor=${anchor}`), stored, anchor);
      }
      const week = (await page(`${KLINE}?code=ONE&adjust=qfq&interval=1w`)).data as Json[];
      assert.equal(week[0]?.open, 1.901);
      assert.equal(week[0]?.close, 2.21);
      const csv = await get(h.app, `${asc}&format=csv&fields=date,close`);
      assert.equal(csv.statusCode, 200);
      assert.deepEqual(
        csv.body.trim().split('\n').slice(1),
        ONE.map((b) => `${String(b.date)},${String(b.close)}`),
      );
      // hfq multiplies by the factor: not ratio 1, adjusted.
      assert.deepEqual(
        await closes(`${KLINE}?code=ONE&adjust=hfq&sort=date&order=asc`),
        stored.map((c) => (c as number) * F),
      );
      // Minute bars: the day's factor is the latest, so every bar as stored.
      const sent = dayBars('600011', '2024-05-06', 10, 'test');
      const minute = (await page(`${MINUTE}?code=600011&date=2024-05-06&adjust=qfq&limit=1000&order=asc`))
        .data as Json[];
      assert.equal(minute.length, 240);
      assert.ok(sent.some((b) => (b.close * FM) / FM !== b.close));
      assert.deepEqual(
        minute.map((r) => r.close),
        sent.map((b) => b.close),
      );
    });

    it('adjust_anchor=end with source_priority: one anchor per code, the series\u2019 last bar', async () => {
      const url = `${KLINE}?code=R&source_priority=b,a&adjust=qfq&adjust_anchor=end&sort=date&order=asc`;
      const body = await page(url);
      assert.deepEqual(
        (body.data as Json[]).map((r) => r.close),
        [5, 5.15, 5.2, 5.3],
      );
      const factors = ((body.meta as Json).adjust as Json).factors as Json[];
      assert.deepEqual(factors.map((f) => [f.source, f.anchor]).sort(), [
        ['a', '2024-05-09'],
        ['b', '2024-05-09'],
      ]);
      // The same numbers in SQL (a sort on a price) and resampled: one week, no fake fall.
      assert.deepEqual(
        ((await page(`${url.replace('sort=date', 'sort=close')}`)).data as Json[]).map((r) => r.close),
        [5, 5.15, 5.2, 5.3],
      );
      const week = (await page(`${url}&interval=1w`)).data as Json[];
      assert.equal(week.length, 1);
      assert.equal(week[0]?.open, 5);
      assert.equal(week[0]?.close, 5.3);
      // Without source_priority each source is its own series, anchored at its own last bar.
      const apart = (await page(`${KLINE}?code=R&adjust=qfq&adjust_anchor=end&sort=date&order=asc`))
        .data as Json[];
      assert.deepEqual(
        apart.map((r) => [r.source, r.close]),
        [
          ['b', 10],
          ['b', 10.3],
          ['a', 5.2],
          ['a', 5.3],
        ],
      );
    });

    it('minute bars: adjust_anchor=end with source_priority anchors the code at its last day', async () => {
      const b = dayBars('600010', '2024-05-06', 10, 'b');
      const a = dayBars('600010', '2024-05-08', 5, 'a');
      const url = `${MINUTE}?code=600010&source_priority=b,a&adjust=qfq&adjust_anchor=end&limit=1000&order=asc`;
      const got = (await page(url)).data as Json[];
      assert.equal(got.length, 480);
      // b's day (factor 1) ÷ the factor on a's day (2); a's day as stored (ratio 1).
      assert.deepEqual(
        got.slice(0, 240).map((r) => r.close),
        b.map((x) => x.close / 2),
      );
      assert.deepEqual(
        got.slice(240).map((r) => r.close),
        a.map((x) => x.close),
      );
    });
  });
}
