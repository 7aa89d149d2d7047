// Issue 30: the etf and index minute datasets read as stock_minute does (the index's volume and
// amount optional), and one code with bars from two sources, on both backends.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { batch } from '../helpers/batches.js';
import { dayBars, endpointReads } from '../helpers/minute-bars.js';

const D1 = '2024-03-01';

for (const backend of await backends()) {
  describe(`etf and index minute bars, two sources of one code (${backend})`, { timeout: 120_000 }, () => {
    let h: Harness;
    const etf = endpointReads(() => h.app, '/api/v1/etf/minute');
    const index = endpointReads(() => h.app, '/api/v1/index/minute');
    const stock = endpointReads(() => h.app, '/api/v1/stock/minute');
    const pushed = async (body: unknown): Promise<void> => {
      const res = await push(h.app, body);
      assert.equal(res.statusCode, 200, res.body);
    };
    const indexBars = dayBars('000300', D1, 3500).map(({ volume: _v, amount: _a, ...b }) => b);

    before(async () => {
      h = await startApp(backend);
      await pushed(batch('etf_minute', dayBars('510300', D1, 3.5)));
      await pushed(batch('index_minute', indexBars));
      await pushed(batch('stock_minute', dayBars('600060', D1, 10, 'a'), { source: 'a' }));
      await pushed(batch('stock_minute', dayBars('600060', D1, 20, 'b'), { source: 'b' }));
    });
    after(async () => {
      await h.close();
    });

    it('etf_minute: the bars as sent, by any code spelling, resampled by session', async () => {
      const got = await etf.rows('code=510300.SH&limit=1000&sort=time&order=asc');
      const sent = dayBars('510300', D1, 3.5);
      assert.deepEqual(
        got.map((r) => [r.code, r.time, r.open, r.high, r.low, r.close, r.volume, r.amount]),
        sent.map((b) => [b.symbol, b.time, b.open, b.high, b.low, b.close, b.volume, b.amount]),
      );
      const day = await etf.rows('code=510300&interval=1d');
      assert.equal(day.length, 1);
      assert.equal(day[0]?.time, `${D1}T15:00:00+08:00`);
      assert.equal(day[0]?.high, Math.max(...sent.map((b) => b.high)));
    });

    it('index_minute: index_code, no volume or amount (null, and summed as null at 60m)', async () => {
      const got = await index.rows('index_code=000300&limit=1000&sort=time&order=asc');
      assert.equal(got.length, 240);
      assert.deepEqual(
        got.map((r) => [r.index_code, r.time, r.close, r.volume, r.amount]),
        indexBars.map((b) => [b.symbol, b.time, b.close, null, null]),
      );
      const hours = await index.rows('index_code=000300&interval=60m&sort=time&order=asc');
      assert.deepEqual(
        hours.map((r) => [r.time, r.volume]),
        ['10:30', '11:30', '14:00', '15:00'].map((t) => [`${D1}T${t}:00+08:00`, null]),
      );
      assert.equal((await index.error('code=000300')).parameter, 'code');
    });

    it('two sources of one code: both kept, each its own bars, filtered and resampled apart', async () => {
      const both = await stock.page('code=600060&limit=2');
      assert.equal((both.meta as Json).total, 480);
      // Ties on time are ordered by code, then source.
      assert.deepEqual(
        (both.data as Json[]).map((r) => [r.time, r.source]),
        [
          [`${D1}T15:00:00+08:00`, 'a'],
          [`${D1}T15:00:00+08:00`, 'b'],
        ],
      );
      for (const [source, base] of [
        ['a', 10],
        ['b', 20],
      ] as const) {
        const got = await stock.rows(`code=600060&source=${source}&limit=1000&sort=time&order=asc`);
        assert.deepEqual(
          got.map((r) => r.close),
          dayBars('600060', D1, base, source).map((b) => b.close),
        );
      }
      const days = await stock.rows('code=600060&interval=1d');
      assert.deepEqual(
        days.map((r) => [r.source, r.close]),
        ['a', 'b'].map((s, i) => [s, dayBars('600060', D1, 10 * (i + 1), s).at(-1)?.close]),
      );
    });
  });
}
