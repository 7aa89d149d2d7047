// latest_on=D over real HTTP on every backend, on the demo data (docs/universes.md): each code's
// (and source's) last row on or before D, equal to an independent reading of every row; stale_days
// from the stored calendar; max_stale_days; with universe= (the day's members) and adjust=.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, push, type Harness, type Json } from '../helpers/harness.js';
import { batch } from '../helpers/batches.js';
import { listeningDemoOn, queryCalls } from '../helpers/demo-seed.js';

const DEMO = { end: '2026-12-04', days: 250, seed: 42 };
const D = '2026-12-04';

for (const backend of await backends()) {
  describe(`latest_on (${backend})`, () => {
    let h: Harness;
    let base: string;
    let seededAt: string;
    let open: string[] = [];
    const { call, page, all } = queryCalls(() => base);
    /** Open SSE days after `date` up to `day`: stale_days counted independently. */
    const staleOf = (date: string, day = D): number => open.filter((o) => o > date && o <= day).length;
    const byCode = (rows: Json[]): Map<string, Json> => new Map(rows.map((r) => [String(r.code), r]));

    before(async () => {
      ({ h, base, seededAt } = await listeningDemoOn(backend, DEMO));
      open = (await all('/api/v1/market/trade-calendar?exchange=SSE&is_open=1&fields=date')).map((r) =>
        String(r.date),
      );
    });
    after(async () => h?.close());

    it("each code's last bar on or before the day, as every bar gives it, with stale_days", async () => {
      const got = await page(`/api/v1/stock/daily?latest_on=${D}`);
      const every = await all(`/api/v1/stock/daily?date_to=${D}&fields=code,date,close`);
      const last = new Map<string, string>();
      for (const r of every)
        if (String(r.date) > (last.get(String(r.code)) ?? '')) last.set(String(r.code), String(r.date));
      assert.deepEqual(
        got.data.map((r) => `${String(r.code)}|${String(r.date)}`).sort(),
        [...last].map(([c, d]) => `${c}|${d}`).sort(),
      );
      const rows = byCode(got.data);
      // The suspended code and the delisted ones are there, marked by their staleness.
      assert.equal(rows.get('600610')?.date, '2026-11-26');
      assert.equal(rows.get('600610')?.stale_days, staleOf('2026-11-26'));
      assert.equal(rows.get('600610')?.stale_days, 6);
      assert.equal(rows.get('600087')?.date, '2026-06-05');
      assert.equal(rows.get('600087')?.stale_days, staleOf('2026-06-05'));
      assert.equal(rows.get('600519')?.stale_days, 0);
      assert.deepEqual(got.meta.latest_on, {
        date: D,
        calendar: 'SSE',
        max_stale_days: null,
        stale_since: null,
        left_out: 0,
        warnings: [],
      });
    });

    it('an earlier day: the rows of that day, stale_days counted to it', async () => {
      const rows = byCode((await page('/api/v1/stock/daily?latest_on=2026-07-01')).data);
      assert.equal(rows.get('600087')?.date, '2026-06-05');
      assert.equal(rows.get('600087')?.stale_days, staleOf('2026-06-05', '2026-07-01'));
      assert.equal(rows.get('000018')?.stale_days, 0);
    });

    it('max_stale_days: the suspended and delisted codes left out, counted in meta', async () => {
      const got = await page(`/api/v1/stock/daily?latest_on=${D}&max_stale_days=3`);
      const codes = got.data.map((r) => String(r.code));
      for (const gone of ['600610', '600087', '000018']) assert.ok(!codes.includes(gone), gone);
      assert.equal(got.data.length, 11);
      assert.equal((got.meta.latest_on as Json).left_out, 3);
      assert.equal((got.meta.latest_on as Json).stale_since, open.filter((o) => o <= D).at(-4));
      const six = await page(`/api/v1/stock/daily?latest_on=${D}&max_stale_days=6`);
      assert.ok(
        six.data.some((r) => r.code === '600610'),
        'exactly 6 days stale is kept',
      );
    });

    it("with universe=: the day's members, each with its last bar; adjusted as the bar range gives it", async () => {
      const last = await page(`/api/v1/stock/daily?latest_on=${D}&universe=000300`);
      assert.equal(last.data.length, 10);
      const early = byCode((await page('/api/v1/stock/daily?latest_on=2026-03-02&universe=000300')).data);
      assert.ok(early.has('002594'));
      assert.ok(!early.has('600087'), 'left the index before that day');
      const adj = byCode((await page(`/api/v1/stock/daily?latest_on=${D}&universe=000300&adjust=qfq`)).data);
      const range = (await page(`/api/v1/stock/daily?code=002594&date=${D}&adjust=qfq`)).data[0];
      assert.equal(adj.get('002594')?.close, range?.close);
      assert.equal(adj.size, 10);
    });

    it('any dataset with a range field: the name in use on the day', async () => {
      const names = await page('/api/v1/stock/names?latest_on=2026-04-15&code=600610,601012');
      assert.deepEqual(names.data.map((r) => [r.code, r.name]).sort(), [
        ['600610', 'ST中毅'],
        ['601012', '隆基股份'],
      ]);
    });

    it('a day outside the stored calendar: stale_days null, said in meta', async () => {
      const got = await page('/api/v1/stock/daily?latest_on=2028-01-03&code=600519');
      assert.equal(got.data[0]?.stale_days, null);
      assert.match(
        String((got.meta.latest_on as { warnings: string[] }).warnings[0]),
        /outside the stored SSE calendar/,
      );
    });

    it('as_of: the cross-section as it stood before a later bar arrived', async () => {
      const bar = { symbol: '600610', date: '2026-12-03', close: 6.1, volume: 1000, source: 'demo' };
      const res = await push(h.app, batch('stock_daily', [bar]));
      assert.equal(res.statusCode, 200, res.body);
      const now = byCode((await page(`/api/v1/stock/daily?latest_on=${D}&code=600610`)).data);
      assert.deepEqual([now.get('600610')?.date, now.get('600610')?.stale_days], ['2026-12-03', 1]);
      const then = byCode(
        (await page(`/api/v1/stock/daily?latest_on=${D}&code=600610&as_of=${encodeURIComponent(seededAt)}`))
          .data,
      );
      assert.deepEqual([then.get('600610')?.date, then.get('600610')?.stale_days], ['2026-11-26', 6]);
    });

    it('bad input: 400 / 4001 naming the parameter', async () => {
      for (const [q, parameter] of [
        ['max_stale_days=3', 'max_stale_days'],
        ['latest_on=2026-02-30', 'latest_on'],
        [`latest_on=${D}&max_stale_days=-1`, 'max_stale_days'],
        [`latest_on=${D}&interval=1w`, 'latest_on'],
        [`latest_on=${D}&format=csv`, 'latest_on'],
        [`latest_on=${D}&source_priority=demo`, 'latest_on'],
      ] as const) {
        const res = await call(`/api/v1/stock/daily?${q}`);
        const body = (await res.json()) as Json;
        assert.equal(res.status, 400, `${q}: ${JSON.stringify(body)}`);
        assert.deepEqual([body.code, body.parameter], [4001, parameter], q);
      }
      assert.equal((await call('/api/v1/stock/spot?latest_on=2026-12-04')).status, 400, 'no range field');
    });
  });
}
