// Issue 30: adjust=qfq|hfq on the minute endpoints with the daily factors (adj_factor), on both
// backends. Every expected value is computed here from the bars and factors as sent (price × the
// factor in force on the bar's date ÷ the anchor's), not through the service's code.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { adjFactor, batch } from '../helpers/batches.js';
import { endpointReads, expectParameterErrors, dayBars } from '../helpers/minute-bars.js';

const MINUTE = '/api/v1/stock/minute';
const D1 = '2024-03-01';
const D2 = '2024-03-04';
const D3 = '2024-03-05';
const PRICES = ['open', 'high', 'low', 'close'] as const;

// 600000: an ex-date on D2 and a factor after the last bar (the latest, qfq's default anchor).
// 600001: no factors. 600002: factors from two sources, neither its bars' source.
const F600000: [string, number][] = [
  ['2024-02-20', 1.0],
  [D2, 1.25],
  ['2024-03-08', 1.5],
];
const factorOn = (date: string): number => {
  const inForce = F600000.filter(([d]) => d <= date);
  return (inForce[inForce.length - 1] ?? F600000[0])?.[1] as number;
};
const bars = [D1, D2, D3].flatMap((d) => [
  ...dayBars('600000', d),
  ...dayBars('600001', d),
  ...dayBars('600002', d),
]);
const raw = (code: string, time: string) => bars.find((b) => b.symbol === code && b.time === time);

for (const backend of await backends()) {
  describe(`minute bars adjusted with the daily factors (${backend})`, { timeout: 180_000 }, () => {
    let h: Harness;
    const { page, rows, error } = endpointReads(() => h.app, MINUTE);
    /** Each bar of `got` against its bar as sent, its prices × its date's factor ÷ `anchor` (null: hfq). */
    const expectAdjusted = (got: Json[], anchor: number | null): void => {
      assert.ok(got.length > 0);
      for (const r of got) {
        const sent = raw(String(r.code), String(r.time));
        assert.ok(sent, String(r.time));
        const f = factorOn(String(r.date));
        for (const p of PRICES) {
          const v: number = sent[p] * f;
          assert.equal(r[p], anchor === null ? v : v / anchor, `${String(r.time)} ${p}`);
        }
        assert.equal(r.volume, sent.volume);
        assert.equal(r.amount, sent.amount);
      }
    };

    before(async () => {
      h = await startApp(backend);
      const factors = [
        ...F600000.map(([d, f]) => adjFactor('600000', d, f, 'eastmoney')),
        adjFactor('600002', '2024-02-20', 1.1, 'tushare'),
        adjFactor('600002', '2024-02-20', 1.2, 'other'),
      ];
      for (const b of [batch('stock_minute', bars), batch('adj_factor', factors)]) {
        const res = await push(h.app, b);
        assert.equal(res.statusCode, 200, res.body);
      }
    });
    after(async () => {
      await h.close();
    });

    it('hfq: every 1m bar × the factor in force on its date; volume and amount as stored', async () => {
      const got = await rows('code=600000&adjust=hfq&limit=1000');
      assert.equal(got.length, 720);
      expectAdjusted(got, null);
      // The ex-date shows: the same minute's close scaled by 1.0 before and 1.25 from D2 on.
      assert.equal(
        got.find((r) => r.time === `${D1}T15:00:00+08:00`)?.close,
        raw('600000', `${D1}T15:00:00+08:00`)?.close,
      );
    });

    it('qfq: ÷ the latest factor by default, the anchor date given, or each code’s last bar (end)', async () => {
      expectAdjusted(await rows('code=600000&adjust=qfq&limit=1000'), 1.5);
      expectAdjusted(await rows(`code=600000&adjust=qfq&adjust_anchor=${D1}&limit=1000`), 1.0);
      const end = await page(`code=600000&adjust=qfq&adjust_anchor=end&date_to=${D2}&limit=1000`);
      expectAdjusted(end.data as Json[], 1.25);
      // time_to bounds the window of `end` too: its last bar is on D1, factor 1.0.
      const t = encodeURIComponent(`${D1}T15:00:00+08:00`);
      expectAdjusted(await rows(`code=600000&adjust=qfq&adjust_anchor=end&time_to=${t}&limit=1000`), 1.0);
      const meta = (end.meta as Json).adjust as Json;
      assert.deepEqual(meta, {
        method: 'qfq',
        anchor: 'end',
        codes_without_factors: [],
        factors: [{ code: '600000', source: 'eastmoney', factor_source: 'eastmoney', anchor: D2 }],
      });
    });

    it('resampled bars equal the adjusted 1m bars resampled (5m, 1d)', async () => {
      for (const interval of ['5m', '1d']) {
        const got = await rows(`code=600000&adjust=qfq&interval=${interval}&limit=1000`);
        const mins = await rows('code=600000&adjust=qfq&limit=1000&sort=time&order=asc');
        for (const r of got) {
          const end = Date.parse(String(r.time));
          const span = interval === '1d' ? 24 * 60 : 5;
          const inside = mins.filter((m) => {
            const at = Date.parse(String(m.time));
            return m.date === r.date && at <= end && at > end - span * 60_000;
          });
          assert.ok(inside.length > 0);
          assert.equal(r.open, inside[0]?.open);
          assert.equal(r.close, inside[inside.length - 1]?.close);
          assert.equal(r.high, Math.max(...inside.map((m) => Number(m.high))));
          assert.equal(r.low, Math.min(...inside.map((m) => Number(m.low))));
        }
        assert.equal(got.length, interval === '1d' ? 3 : 3 * 48);
      }
    });

    it('sorts by the adjusted price; a code without factors stays as stored and is named', async () => {
      const got = await rows('code=600000&adjust=hfq&sort=close&order=desc&limit=1000');
      const closes = got.map((r) => Number(r.close));
      assert.deepEqual(
        closes,
        [...closes].sort((a, b) => b - a),
      );
      const none = await page(`code=600001&adjust=qfq&date=${D1}&limit=5`);
      for (const r of none.data as Json[]) assert.equal(r.close, raw('600001', String(r.time))?.close);
      const meta = (none.meta as Json).adjust as Json;
      assert.deepEqual(meta.codes_without_factors, ['600001']);
      assert.deepEqual(meta.factors, [
        { code: '600001', source: 'eastmoney', factor_source: null, anchor: null },
      ]);
    });

    it('exports are adjusted as the pages are (csv)', async () => {
      const res = await get(
        h.app,
        `${MINUTE}?code=600000&adjust=hfq&date=${D3}&format=csv&fields=time,date,code,close`,
      );
      assert.equal(res.statusCode, 200, res.body);
      const lines = res.body.trim().split('\n').slice(1);
      assert.equal(lines.length, 240);
      for (const line of lines) {
        const [time, date, code, close] = line.split(',');
        assert.equal(Number(close), (raw(String(code), String(time))?.close ?? NaN) * factorOn(String(date)));
      }
    });

    it('as_of: the factors known at that instant', async () => {
      await new Promise((r) => setTimeout(r, 5));
      const before = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      const res = await push(h.app, batch('adj_factor', [adjFactor('600000', D3, 2, 'eastmoney')]));
      assert.equal(res.statusCode, 200, res.body);
      const at = encodeURIComponent(`${D3}T10:00:00+08:00`);
      const q = `code=600000&adjust=hfq&time_from=${at}&time_to=${at}`;
      const sent = raw('600000', `${D3}T10:00:00+08:00`)?.close as number;
      assert.equal((await rows(q))[0]?.close, sent * 2);
      assert.equal((await rows(`${q}&as_of=${before}`))[0]?.close, sent * 1.25);
    });

    it('errors: 400 / 4001 naming the parameter, the ambiguous factor sources included', async () => {
      await expectParameterErrors(h.app, `${MINUTE}?code=600000&`, [
        ['adjust=pre', 'adjust'],
        [`adjust=hfq&adjust_anchor=${D1}`, 'adjust_anchor'],
        ['adjust=qfq&adjust_anchor=yesterday', 'adjust_anchor'],
        ['adjust_source=eastmoney', 'adjust_source'],
        ['adjust=qfq&adjust_source=nosuch', 'adjust_source'],
      ]);
      const two = await error('code=600002&adjust=qfq');
      assert.equal(two.parameter, 'adjust_source');
      assert.match(String(two.message), /several sources \(other, tushare\)/);
      const csv = await get(h.app, `${MINUTE}?code=600002&adjust=qfq&format=csv`);
      assert.equal(csv.statusCode, 400, csv.body);
      // With a source chosen: that source's factor.
      const chosen = await rows(`code=600002&adjust=hfq&adjust_source=other&date=${D1}&limit=1`);
      assert.equal(chosen[0]?.close, (raw('600002', String(chosen[0]?.time))?.close as number) * 1.2);
      // Indexes are not adjusted (as index_daily): the parameter is unknown there.
      const idx = await get(h.app, '/api/v1/index/minute?adjust=qfq');
      assert.equal(idx.statusCode, 400, idx.body);
      assert.equal(json(idx).parameter, 'adjust');
    });
  });
}
