// Issue 30: the minute datasets' quality report (GET /api/v1/quality/stock_minute): each day's
// bars resampled to 1d against the daily dataset of the same source, the days one side lacks,
// minutes missing inside a session, impossible bars; paged by code; on both backends
// (docs/minute-bars.md "Quality report").
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { backends, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { batch } from '../helpers/batches.js';
import { CATALOG, type Dataset } from '../../src/catalog/catalog.js';
import { MinuteQualityService } from '../../src/query/minute-quality.js';
import { dayBars, endpointReads, expectParameterErrors } from '../helpers/minute-bars.js';
import { ROOT } from '../helpers/repo-root.js';

const REPORT = '/api/v1/quality/stock_minute';
const D1 = '2024-03-01';
const D2 = '2024-03-04';
const D3 = '2024-03-05';

type Bar = ReturnType<typeof dayBars>[number];

/** The daily bar the day's minutes resample to (test/query/minute-bars.test.ts checks 1d equals it). */
function dailyOf(bars: readonly Bar[]): Json {
  const first = bars[0] as Bar;
  return {
    symbol: first.symbol,
    date: first.date,
    open: first.open,
    high: Math.max(...bars.map((b) => b.high)),
    low: Math.min(...bars.map((b) => b.low)),
    close: (bars[bars.length - 1] as Bar).close,
    volume: bars.reduce((s, b) => s + b.volume, 0),
    amount: Number(bars.reduce((s, b) => s + b.amount, 0).toFixed(2)),
    source: first.source,
  };
}

/** Each verdict's count and list, as a clean code has them. */
const VERDICTS = {
  mismatched_days: 'mismatches',
  no_daily: 'no_daily_dates',
  no_minutes: 'no_minute_dates',
  gap_days: 'gaps',
  ohlc_violations: 'ohlc_violation_times',
};
const EMPTY = Object.fromEntries(
  Object.entries(VERDICTS).flatMap(([count, list]) => [
    [count, 0],
    [list, []],
  ]),
);

/** A row's verdicts (what the report judged), without the span it covers. */
function verdicts(row: Json | undefined): Json {
  return Object.fromEntries(Object.keys(EMPTY).map((k) => [k, row?.[k]]));
}

for (const backend of await backends()) {
  describe(`minute quality report (${backend})`, { timeout: 180_000 }, () => {
    let h: Harness;
    const { page, rows } = endpointReads(() => h.app, REPORT);
    const pushed = async (body: unknown): Promise<void> => {
      const res = await push(h.app, body);
      assert.equal(res.statusCode, 200, res.body);
    };

    before(async () => {
      h = await startApp(backend);
    });
    after(async () => {
      await h.close();
    });

    it('minutes equal to the daily bars of their source: nothing reported', async () => {
      const days = [dayBars('600000', D1), dayBars('600000', D2)];
      await pushed(batch('stock_minute', days.flat()));
      await pushed(batch('stock_daily', days.map(dailyOf)));
      const [row] = await rows('code=600000.SH');
      assert.equal(row?.code, '600000');
      assert.equal(row?.first_date, D1);
      assert.equal(row?.last_date, D2);
      assert.equal(row?.days, 2);
      assert.equal(row?.bars, 480);
      assert.equal(row?.compared_days, 2);
      assert.deepEqual(verdicts(row), EMPTY);
    });

    it('a daily bar that differs is listed per field, beyond the tolerance only', async () => {
      const bars = dayBars('600010', D1);
      const daily = dailyOf(bars);
      await pushed(batch('stock_minute', bars));
      // close one fen off, volume one share off, amount within half a yuan (equal), high within 0.0005.
      await pushed(
        batch('stock_daily', [
          {
            ...daily,
            close: Number(daily.close) + 0.01,
            volume: Number(daily.volume) + 1,
            amount: Number(daily.amount) + 0.3,
            high: Number(daily.high) + 0.0004,
          },
        ]),
      );
      const body = await page('code=600010');
      assert.deepEqual((body.meta as Json).tolerance, { price: 0.0005, volume: 0.5, amount: 0.5 });
      assert.equal((body.meta as Json).daily, 'stock_daily');
      const [row] = body.data as Json[];
      assert.equal(row?.compared_days, 1);
      assert.equal(row?.mismatched_days, 1);
      const close = (bars[239] as Bar).close;
      assert.deepEqual(row?.mismatches, [
        { date: D1, source: 'eastmoney', field: 'close', minutes: close, daily: close + 0.01 },
        {
          date: D1,
          source: 'eastmoney',
          field: 'volume',
          minutes: Number(daily.volume),
          daily: Number(daily.volume) + 1,
        },
      ]);
    });

    it('days with minutes but no daily bar of their source, and traded daily bars without minutes', async () => {
      const d1 = dayBars('600020', D1);
      const d3 = dayBars('600020', D3);
      await pushed(batch('stock_minute', [...d1, ...d3]));
      // D2 traded without minutes; D3's daily bar comes from another source only; a daily bar
      // before the minutes' first day is not expected to have them; a suspended day (volume 0) neither.
      await pushed(
        batch('stock_daily', [
          dailyOf(d1),
          { ...dailyOf(dayBars('600020', D2)) },
          { ...dailyOf(d3), source: 'tushare' },
          { ...dailyOf(dayBars('600020', '2024-02-29')) },
        ]),
      );
      await pushed(batch('stock_minute', dayBars('600021', D1)));
      await pushed(batch('stock_minute', dayBars('600021', D3)));
      await pushed(
        batch('stock_daily', [
          dailyOf(dayBars('600021', D1)),
          { ...dailyOf(dayBars('600021', D2)), volume: 0 },
        ]),
      );
      await pushed(batch('stock_daily', [dailyOf(dayBars('600021', D3))]));
      const [a] = await rows('code=600020');
      assert.equal(a?.compared_days, 1);
      assert.equal(a?.no_daily, 1);
      assert.deepEqual(a?.no_daily_dates, [{ date: D3, source: 'eastmoney' }]);
      assert.equal(a?.no_minutes, 1);
      assert.deepEqual(a?.no_minute_dates, [{ date: D2, source: 'eastmoney' }]);
      const [b] = await rows('code=600021');
      assert.deepEqual(verdicts(b), EMPTY);
    });

    it('minutes missing inside a session are a gap; a half day is not; impossible bars are listed', async () => {
      const full = dayBars('600030', D1);
      const holed = full.filter((b) => !b.time.includes('T10:00') && !b.time.includes('T14:00'));
      const half = dayBars('600030', D2).slice(0, 120);
      const bad = dayBars('600030', D3).map((b) =>
        b.time.endsWith('T13:05:00+08:00') ? { ...b, low: b.high + 1 } : b,
      );
      await pushed(batch('stock_minute', [...holed, ...half, ...bad]));
      const [row] = await rows('code=600030');
      assert.equal(row?.gap_days, 1);
      assert.deepEqual(row?.gaps, [{ date: D1, source: 'eastmoney', bars: 238, expected: 240 }]);
      assert.equal(row?.ohlc_violations, 1);
      assert.deepEqual(row?.ohlc_violation_times, [{ time: `${D3}T13:05:00+08:00`, source: 'eastmoney' }]);
      // No daily bars for this code: every day is listed as without one.
      assert.equal(row?.no_daily, 3);
    });

    it('paged by code, in either order; source and the date window narrow it', async () => {
      const all = await page('limit=1000');
      const codes = (all.data as Json[]).map((r) => r.code);
      assert.deepEqual(codes, [...codes].sort());
      assert.equal((all.meta as Json).total, codes.length);
      const second = await page('limit=1&offset=1');
      assert.deepEqual(
        (second.data as Json[]).map((r) => r.code),
        [codes[1]],
      );
      assert.equal((second.meta as Json).has_more, true);
      const desc = await rows('order=desc&limit=2');
      assert.deepEqual(
        desc.map((r) => r.code),
        [...codes].reverse().slice(0, 2),
      );
      const [d2] = await rows(`code=600020&date_from=${D2}&date_to=${D3}`);
      assert.equal(d2?.first_date, D3);
      assert.equal(d2?.no_minutes, 0); // D2's daily bar lies before the window's first minute day
      assert.deepEqual(await rows('code=600020&source=tushare'), []);
    });

    it('a batch into either dataset is seen by the next report', async () => {
      const before = await rows('code=600010');
      assert.equal(before[0]?.mismatched_days, 1);
      await pushed(batch('stock_daily', [dailyOf(dayBars('600010', D1))]));
      const [row] = await rows('code=600010');
      assert.deepEqual(verdicts(row), EMPTY);
    });

    it("a batch landing between the report's reads: the page is wholly before it or wholly after", async () => {
      const [d1, d3] = [dayBars('600040', D1), dayBars('600040', D3)];
      await pushed(batch('stock_minute', [...d1, ...d3]));
      await pushed(batch('stock_daily', [dailyOf(d1), dailyOf(d3)]));
      const beforeRows = await rows('code=600040');
      // The report's service over the same store, with a batch (a day inside the code's span,
      // no daily bar) pushed as soon as its first read of rows has answered: a report read in
      // two snapshots judges a code's span (2 days) from before the batch with its blocks (3)
      // from after it.
      let armed = true;
      const datasets = new Proxy(h.store.datasets, {
        get(target, prop) {
          const v: unknown = Reflect.get(target, prop, target);
          if (typeof v !== 'function') return v;
          return async (...args: unknown[]) => {
            const r: unknown = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            if (armed && prop !== 'datasetVersion' && prop !== 'datasetState') {
              armed = false;
              await pushed(batch('stock_minute', dayBars('600040', D2)));
            }
            return r;
          };
        },
      });
      const service = new MinuteQualityService({ datasets }, CATALOG);
      const during = await service.report(CATALOG.byName.get('stock_minute') as Dataset, { code: '600040' });
      assert.equal(armed, false, 'the batch was pushed during the report');
      const afterRows = await rows('code=600040');
      assert.equal(afterRows[0]?.days, 3);
      assert.equal(beforeRows[0]?.days, 2);
      const seen = JSON.parse(JSON.stringify(during.rows)) as Json[];
      // One snapshot: the batch came after it, so the page is the one before.
      assert.deepEqual(seen, beforeRows);
    });

    it('errors: unknown or repeated parameters, a code list, bad dates and numbers', async () => {
      await expectParameterErrors(h.app, `${REPORT}?`, [
        ['jump_pct=5', 'jump_pct'],
        ['exchange=SSE', 'exchange'],
        ['code=600000,600010', 'code'],
        ['date_from=2024-02-30', 'date_from'],
        ['date_to=x', 'date_to'],
        ['limit=0', 'limit'],
        ['offset=-1', 'offset'],
        ['order=up', 'order'],
        ['source=a&source=b', 'source'],
      ]);
      const noKey = await get(h.app, REPORT, null);
      assert.equal(noKey.statusCode, 401);
      // The daily report's route still judges the daily datasets (here: no calendar stored) and refuses others.
      assert.equal(json(await get(h.app, '/api/v1/quality/stock_daily')).parameter, 'exchange');
      assert.equal(json(await get(h.app, '/api/v1/quality/adj_factor')).code, 4041);
    });

    it('docs/minute-bars.md: the quality report worked example, pushed and asked as written', async () => {
      const doc = fs.readFileSync(path.join(ROOT, 'docs', 'minute-bars.md'), 'utf8');
      const block = (name: string): unknown =>
        JSON.parse(new RegExp(`\`\`\`json ${name}\n([\\s\\S]*?)\`\`\``).exec(doc)?.[1] ?? 'null');
      await pushed(batch('stock_minute', block('minute-example-records') as Json[]));
      await pushed(batch('stock_daily', block('minute-quality-daily') as Json[]));
      const url = /`(GET \/api\/v1\/quality\/stock_minute\?[^`]+)`/.exec(doc)?.[1]?.slice(4) ?? '';
      const res = await get(h.app, url);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res).data, block('minute-quality-answer'));
    });
  });
}
