// Issue 25 item 7: source precedence. `source_priority=a,b` answers one row per key without its
// source, the first listed source's, with every filter, paging, total, cursor, fields, exports,
// as_of and adjust (each row with its own source's factors); MDS_SOURCE_PRIORITY sets a default.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { adjFactor, batch, etfBar, uniqueId } from '../helpers/batches.js';

const KLINE = '/api/v1/etf/kline';
const DAYS = ['2024-05-06', '2024-05-07', '2024-05-08'];

for (const backend of await backends()) {
  describe(`source_priority (${backend})`, { timeout: 120_000 }, () => {
    let h: Harness;
    const code = uniqueId('P').slice(-14);
    let beforeB = '';
    const page = async (query: string): Promise<Json> => {
      const res = await get(h.app, `${KLINE}?code=${code}&${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const pushed = async (dataset: string, rows: Json[], source: string): Promise<void> => {
      const res = await push(h.app, batch(dataset, rows, { source }));
      assert.equal(res.statusCode, 200, res.body);
    };

    before(async () => {
      h = await startApp(backend);
      // a: days 1-2; c: days 1-3; then b: days 2-3.
      await pushed(
        'etf_daily',
        DAYS.slice(0, 2).map((d) => etfBar(code, d, { source: 'a', close: 10 })),
        'a',
      );
      await pushed(
        'etf_daily',
        DAYS.map((d) => etfBar(code, d, { source: 'c', close: 30 })),
        'c',
      );
      await pushed('adj_factor', [adjFactor(code, DAYS[0] as string, 2, 'a')], 'a');
      await pushed('adj_factor', [adjFactor(code, DAYS[0] as string, 3, 'b')], 'b');
      await new Promise((r) => setTimeout(r, 3));
      beforeB = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 3));
      await pushed(
        'etf_daily',
        DAYS.slice(1).map((d) => etfBar(code, d, { source: 'b', close: 20 })),
        'b',
      );
    });
    after(async () => {
      await h.close();
    });

    const pairs = (rows: Json[]): string[] => rows.map((r) => `${String(r.date)}:${String(r.source)}`);
    const expected = [`${DAYS[0]}:a`, `${DAYS[1]}:b`, `${DAYS[2]}:b`];

    it('one row per key: the first listed source that has it; unlisted sources left out', async () => {
      const body = await page('source_priority=b,a&sort=date&order=asc');
      assert.deepEqual(pairs(body.data as Json[]), expected);
      assert.equal((body.meta as Json).total, 3);
      // Without it every source's row: duplicate dates.
      assert.equal(((await page('sort=date&order=asc')).data as Json[]).length, 7);
      const reversed = await page('source_priority=a,b,c&sort=date&order=asc');
      assert.deepEqual(pairs(reversed.data as Json[]), [`${DAYS[0]}:a`, `${DAYS[1]}:a`, `${DAYS[2]}:b`]);
    });

    it('paging, cursors, fields, exports and date filters', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const body = await page(
          `source_priority=b,a&sort=date&order=asc&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        seen.push(...pairs(body.data as Json[]));
        assert.equal((body.meta as Json).total, 3);
        cursor = (body.meta as Json).next_cursor as string | null;
      } while (cursor);
      assert.deepEqual(seen, expected);
      const second = await page('source_priority=b,a&sort=date&order=asc&limit=1&offset=1');
      assert.deepEqual(pairs(second.data as Json[]), [expected[1]]);
      const projected = await page('source_priority=b,a&sort=date&order=asc&fields=date,close');
      assert.deepEqual(
        (projected.data as Json[]).map((r) => [r.date, r.close]),
        [
          [DAYS[0], 10],
          [DAYS[1], 20],
          [DAYS[2], 20],
        ],
      );
      const csv = await get(
        h.app,
        `${KLINE}?code=${code}&source_priority=b,a&sort=date&order=asc&format=csv`,
      );
      assert.equal(csv.statusCode, 200);
      assert.equal(csv.body.trim().split('\n').length, 4);
      const windowed = await page(`source_priority=b,a&date_from=${DAYS[1]}&sort=date&order=asc`);
      assert.deepEqual(pairs(windowed.data as Json[]), expected.slice(1));
    });

    it('adjust: each row with its own source’s factors', async () => {
      const body = await page('source_priority=b,a&sort=date&order=asc&adjust=hfq');
      assert.deepEqual(
        (body.data as Json[]).map((r) => r.close),
        [20, 60, 60],
      );
      assert.deepEqual(((body.meta as Json).adjust as Json).factors, [
        { code, source: 'a', factor_source: 'a', anchor: null },
        { code, source: 'b', factor_source: 'b', anchor: null },
      ]);
      // The same through the SQL path (sorted by an adjusted price).
      const sorted = await page('source_priority=b,a&sort=close&order=asc&adjust=hfq');
      assert.deepEqual(
        (sorted.data as Json[]).map((r) => r.close),
        [20, 60, 60],
      );
    });

    it('as_of: precedence among the rows known then', async () => {
      const body = await page(`source_priority=b,a&sort=date&order=asc&as_of=${encodeURIComponent(beforeB)}`);
      assert.deepEqual(pairs(body.data as Json[]), [`${DAYS[0]}:a`, `${DAYS[1]}:a`]);
    });

    it('interval: the chosen daily rows of a code resampled as one series; the period’s source its last bar’s', async () => {
      const daily = (await page('source_priority=b,a&sort=date&order=asc')).data as Json[];
      const week = await page('source_priority=b,a&interval=1w');
      assert.equal((week.meta as Json).total, 1);
      const [row] = week.data as Json[];
      // Recomputed here from the daily rows precedence chose: a's 05-06, b's 05-07 and 05-08.
      const nums = (f: string): number[] => daily.map((r) => r[f] as number);
      assert.deepEqual(
        [row!.period_start, row!.date, row!.bar_count, row!.source, row!.open, row!.close],
        [DAYS[0], DAYS[2], 3, 'b', daily[0]!.open, daily[2]!.close],
      );
      assert.equal(row!.high, Math.max(...nums('high')));
      assert.equal(row!.low, Math.min(...nums('low')));
      assert.equal(
        row!.volume,
        nums('volume').reduce((a, b) => a + b, 0),
      );
      // Without precedence: one series per source.
      assert.deepEqual(
        ((await page('interval=1w&sort=source')).data as Json[]).map((r) => [r.source, r.bar_count]),
        [
          ['a', 2],
          ['b', 2],
          ['c', 3],
        ],
      );
      const ac = (await page('source_priority=a,c&interval=1M&fields=date,source,close,bar_count')).data;
      assert.deepEqual(ac, [{ date: DAYS[2], source: 'c', close: 30, bar_count: 3 }]);
      // adjust first, each row with its own source's factors (a ×2, b ×3), then resampled.
      const hfq = (await page('source_priority=b,a&interval=1w&adjust=hfq')).data as Json[];
      assert.deepEqual([hfq[0]!.close, hfq[0]!.high], [60, 9.5 * 3]);
      // as_of: precedence among the rows known then (b not yet).
      const then = await page(`source_priority=b,a&interval=1w&as_of=${encodeURIComponent(beforeB)}`);
      assert.deepEqual(
        (then.data as Json[]).map((r) => [r.source, r.bar_count, r.close]),
        [['a', 2, 10]],
      );
      const csv = await get(h.app, `${KLINE}?code=${code}&source_priority=b,a&interval=1w&format=csv`);
      assert.equal(csv.statusCode, 200);
      assert.equal(csv.body.trim().split('\n').length, 2);
    });

    it('MDS_SOURCE_PRIORITY: the default when a request ranks and picks no source', async () => {
      const other = await startApp(
        backend,
        { MDS_SOURCE_PRIORITY: 'etf_daily=b,a' },
        { databaseUrl: h.databaseUrl },
      );
      try {
        const d = await get(other.app, `${KLINE}?code=${code}&sort=date&order=asc`);
        assert.deepEqual(pairs(json(d).data as Json[]), expected);
        const w = await get(other.app, `${KLINE}?code=${code}&interval=1w`);
        assert.deepEqual(
          (json(w).data as Json[]).map((r) => [r.source, r.bar_count]),
          [['b', 3]],
          'the default applies to resampled bars too',
        );
        const c = await get(other.app, `${KLINE}?code=${code}&source=c`);
        assert.equal((json(c).data as Json[]).length, 3, 'source= picks a source: no default precedence');
      } finally {
        await other.app.close();
        await other.store.close();
      }
    });

    it('bad values are 400 / 4001', async () => {
      for (const q of ['source_priority=', 'source_priority=a,,b', 'source_priority=a,a']) {
        const res = await get(h.app, `${KLINE}?code=${code}&${q}`);
        assert.equal(res.statusCode, 400, q);
        assert.equal(json(res).code, 4001);
      }
    });
  });
}
