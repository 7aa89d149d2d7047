// The daily quality report as a user reads it (docs/bars-and-quality.md): `stale` judged against
// the calendar's latest open day whatever the other codes' bars (with `code=` too, and when every
// code stopped), `meta.calendar_ends_before` when the stored calendar ends before the range, and
// suspended days (stock_daily is_suspended = 1) reported as such, not as zero-volume days or
// identical runs. Both backends, over HTTP and MCP, from the summaries and from the rows.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { batch, plainBar } from '../helpers/batches.js';
import { call, serveMcp, structured, textOf } from '../helpers/mcp-client.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

// SSE, Mon 2024-05-06 … Sun 2024-05-12: open Monday to Friday.
const OPEN = ['2024-05-06', '2024-05-07', '2024-05-08', '2024-05-09', '2024-05-10'];
const calendar = [
  '2024-05-06',
  '2024-05-07',
  '2024-05-08',
  '2024-05-09',
  '2024-05-10',
  '2024-05-11',
  '2024-05-12',
].map((date) => ({ exchange: 'SSE', date, is_open: OPEN.includes(date) ? 1 : 0, source: 'test' }));

for (const backend of await backends()) {
  describe(`quality report: staleness, calendar end, suspensions (${backend})`, { timeout: 120_000 }, () => {
    let h: Harness;
    let mcp: { client: Client; close(): Promise<void> };
    const report = async (query: string): Promise<{ data: Json[]; meta: Json }> => {
      const res = await get(h.app, `/api/v1/quality/${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return json(res) as unknown as { data: Json[]; meta: Json };
    };
    const pushed = async (body: unknown): Promise<void> => {
      const res = await push(h.app, body);
      assert.equal(res.statusCode, 200, res.body);
    };

    before(async () => {
      h = await startApp(backend);
      await pushed(batch('trade_calendar', calendar, { source: 'test' }));
      // etf_daily: both codes stopped on 05-08, two open days before the calendar's last.
      const stopped = ['A', 'B'].flatMap((c) => OPEN.slice(0, 3).map((d) => plainBar(c, d)));
      await pushed(batch('etf_daily', stopped, { source: 'test' }));
      // stock_daily: S suspended 05-08 and 05-09 (volume 0, the last close repeated), trading
      // again on 05-10; Z a real zero-volume day on 05-09.
      // Prices move every trading day (no identical runs of their own); a halted day repeats
      // the close of 05-07 (10.05) with volume 0.
      const day = (code: string, date: string, extra: Json = {}): Json => {
        const p = 10 + OPEN.indexOf(date) / 20;
        return {
          ...plainBar(code, date),
          open: p,
          high: p + 1,
          low: p - 1,
          close: p,
          is_suspended: 0,
          ...extra,
        };
      };
      const halted = { open: 10.05, high: 10.05, low: 10.05, close: 10.05, volume: 0, is_suspended: 1 };
      await pushed(
        batch(
          'stock_daily',
          [
            ...OPEN.map((d) => day('600001', d, d === '2024-05-08' || d === '2024-05-09' ? halted : {})),
            ...OPEN.map((d) => day('600002', d, d === '2024-05-09' ? { volume: 0 } : {})),
          ],
          { source: 'test' },
        ),
      );
      mcp = await serveMcp(h);
    });
    after(async () => {
      await mcp.close();
    });

    it('every code stopped before the calendar\u2019s last open day: every code is stale, code= too', async () => {
      // The unfiltered report (the summaries), one code (the summaries), a window (the rows).
      for (const q of ['etf_daily?sort=code', 'etf_daily?sort=code&date_from=2024-05-01']) {
        const r = await report(q);
        assert.deepEqual(
          r.data.map((x) => [x.code, x.stale]),
          [
            ['A', true],
            ['B', true],
          ],
          q,
        );
      }
      assert.equal((await report('etf_daily?code=A')).data[0]?.stale, true);
      assert.equal((await report('etf_daily?code=510300.SH')).data.length, 0);
      // Judged by the window's end: 05-08 is its latest open day.
      assert.equal((await report('etf_daily?code=A&date_to=2024-05-08')).data[0]?.stale, false);
      const tool = structured(await call(mcp.client, 'quality_report', { dataset: 'etf_daily', code: 'A' }));
      assert.equal((tool.rows as Json[])[0]?.stale, true);
    });

    it('a calendar that ends before the range says so in meta; one that covers it says nothing', async () => {
      const today = new Date().toISOString().slice(0, 10);
      const r = await report('etf_daily');
      const note = r.meta.calendar_ends_before as Json;
      assert.equal(note.calendar_to, '2024-05-12');
      assert.equal(note.range_end, today);
      assert.match(String(note.message), /the stored SSE calendar ends on 2024-05-12, before /);
      const within = await report('etf_daily?date_to=2024-05-10');
      assert.equal(within.meta.calendar_ends_before, undefined);
      assert.equal(
        (await report('etf_daily?date_to=20240601')).meta.calendar_ends_before !== undefined,
        true,
      );
      const tool = await call(mcp.client, 'quality_report', { dataset: 'etf_daily' });
      assert.match(textOf(tool), /calendar ends on 2024-05-12, before/);
    });

    it('suspended days are listed as suspended: not zero-volume days, not an identical run', async () => {
      for (const q of ['stock_daily?sort=code', 'stock_daily?sort=code&date_from=2024-05-01']) {
        const [s, z] = (await report(q)).data;
        assert.equal(s?.code, '600001', q);
        assert.deepEqual(s?.suspended_dates, ['2024-05-08', '2024-05-09'], q);
        assert.equal(s?.zero_volume_days, 0, q);
        assert.deepEqual(s?.zero_volume_dates, [], q);
        assert.deepEqual(s?.identical_runs, [], q);
        assert.equal(s?.stale, false, q);
        // A real zero-volume day stays one.
        assert.deepEqual(z?.suspended_dates, [], q);
        assert.equal(z?.zero_volume_days, 1, q);
        assert.deepEqual(z?.zero_volume_dates, ['2024-05-09'], q);
      }
      // A later batch lifting the flag (a correction) makes it a zero-volume day again.
      await pushed(
        batch(
          'stock_daily',
          [
            {
              ...plainBar('600001', '2024-05-09'),
              open: 10,
              high: 10,
              low: 10,
              close: 10,
              volume: 0,
              is_suspended: 0,
            },
          ],
          {
            source: 'test',
          },
        ),
      );
      const [s] = (await report('stock_daily?code=600001')).data;
      assert.deepEqual(s?.suspended_dates, ['2024-05-08']);
      assert.equal(s?.zero_volume_days, 1);
      assert.deepEqual(s?.zero_volume_dates, ['2024-05-09']);
    });
  });
}
