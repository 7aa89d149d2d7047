import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends, get, json, push, startApp, type Harness } from '../helpers/harness.js';
import { batch, plainBar } from '../helpers/batches.js';

/**
 * GET /api/v1/quality/{dataset} on every backend, against a hand-made SSE calendar: Mon
 * 2024-04-29 … Fri 2024-05-10, with the Labour Day holidays May 1–3 closed (open days: 04-29,
 * 04-30, 05-06, 05-07, 05-08, 05-09, 05-10). Code GOOD has every open day; GAPS misses 05-07 and
 * 05-08 and has a bad bar (low > high) on 05-06 and zero volume on 05-09; OLD stopped on 05-08
 * (stale: others have the latest open day 05-10). A bar on a closed day (SAT, 05-04) is no gap.
 */

const OPEN = [
  '2024-04-29',
  '2024-04-30',
  '2024-05-06',
  '2024-05-07',
  '2024-05-08',
  '2024-05-09',
  '2024-05-10',
];

function calendar(exchange: string): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (let t = Date.parse('2024-04-29T00:00:00Z'); t <= Date.parse('2024-05-12T00:00:00Z'); t += 86_400_000) {
    const date = new Date(t).toISOString().slice(0, 10);
    rows.push({ exchange, date, is_open: OPEN.includes(date) ? 1 : 0, source: 'test' });
  }
  return rows;
}

const bar = plainBar;

type QRow = Record<string, unknown>;

for (const backend of await backends()) {
  describe(`quality report (${backend})`, () => {
    let h: Harness;
    const report = async (path: string): Promise<{ data: QRow[]; meta: Record<string, unknown> }> => {
      const res = await get(h.app, path);
      assert.equal(res.statusCode, 200, res.body);
      return json(res) as unknown as { data: QRow[]; meta: Record<string, unknown> };
    };

    before(async () => {
      h = await startApp(backend);
      const rows = [
        ...OPEN.map((d) => bar('GOOD', d)),
        ...OPEN.filter((d) => d !== '2024-05-07' && d !== '2024-05-08').map((d) =>
          bar('GAPS', d, {
            ...(d === '2024-05-06' ? { low: 12 } : {}),
            ...(d === '2024-05-09' ? { volume: 0 } : {}),
          }),
        ),
        ...OPEN.filter((d) => d <= '2024-05-08').map((d) => bar('OLD', d)),
        bar('SAT', '2024-04-30'),
        bar('SAT', '2024-05-04'),
        bar('SAT', '2024-05-06'),
      ];
      for (const b of [batch('etf_daily', rows), batch('trade_calendar', calendar('SSE'))]) {
        const res = await push(h.app, b);
        assert.equal(res.statusCode, 200, res.body);
      }
    });
    after(async () => h?.close());

    test('missing days against the calendar with holidays, bad bars, zero volume, stale codes', async () => {
      const body = await report('/api/v1/quality/etf_daily');
      assert.equal(body.meta.total, 4);
      assert.equal(body.meta.exchange, 'SSE');
      const [first, ...rest] = body.data;
      assert.deepEqual(first, {
        code: 'GAPS',
        first_date: '2024-04-29',
        last_date: '2024-05-10',
        bars: 5,
        expected: 7,
        missing: 2,
        missing_dates: ['2024-05-07', '2024-05-08'],
        stale: false,
        ohlc_violations: 1,
        ohlc_violation_dates: ['2024-05-06'],
        zero_volume_days: 1,
        off_calendar_dates: [],
        zero_volume_dates: ['2024-05-09'],
        suspended_dates: [],
        jumps: [],
        // plainBar's bars are all alike: 04-29 and 04-30 are; 05-06's low differs.
        identical_runs: [{ from: '2024-04-29', to: '2024-04-30', bars: 2, source: 'test' }],
        pre_close_mismatches: [],
        unjudged: [],
      });
      assert.deepEqual(body.meta.calendar, { from: '2024-04-29', to: '2024-05-12' });
      const by = new Map(rest.map((r) => [r.code, r]));
      assert.deepEqual(
        [by.get('GOOD')?.missing, by.get('GOOD')?.expected, by.get('GOOD')?.stale],
        [0, 7, false],
      );
      assert.deepEqual(
        [by.get('OLD')?.last_date, by.get('OLD')?.stale, by.get('OLD')?.missing],
        ['2024-05-08', true, 0],
      );
      // SAT: 04-30, 05-04 (closed) and 05-06: the holidays between are no gap; 05-04 is listed.
      assert.deepEqual([by.get('SAT')?.bars, by.get('SAT')?.expected, by.get('SAT')?.missing], [3, 2, 0]);
      assert.deepEqual(by.get('SAT')?.off_calendar_dates, ['2024-05-04']);
      assert.equal(body.meta.jump_pct, 20);
    });

    test('a code, a window, sorting and paging', async () => {
      const one = await report('/api/v1/quality/etf_daily?code=GAPS&date_from=2024-05-08');
      assert.deepEqual(
        one.data.map((r) => [r.first_date, r.expected, r.missing, r.missing_dates]),
        [['2024-05-09', 2, 0, []]],
      );
      const sorted = await report('/api/v1/quality/etf_daily?sort=code&order=asc&limit=2&offset=1');
      assert.deepEqual(
        sorted.data.map((r) => r.code),
        ['GOOD', 'OLD'],
      );
      assert.equal(sorted.meta.has_more, true);
      const stale = await report('/api/v1/quality/etf_daily?date_to=2024-05-08&sort=code');
      assert.deepEqual(
        stale.data.map((r) => [r.code, r.stale]),
        [
          ['GAPS', true],
          ['GOOD', false],
          ['OLD', false],
          ['SAT', true],
        ],
        'judged by the window: its latest open day is 05-08',
      );
    });

    test('the report is cached per dataset version and recomputed after a batch', async () => {
      const before = await report('/api/v1/quality/etf_daily?code=GAPS');
      assert.equal(before.data[0]?.missing, 2);
      const res = await push(h.app, batch('etf_daily', [bar('GAPS', '2024-05-07')]));
      assert.equal(res.statusCode, 200, res.body);
      const afterBatch = await report('/api/v1/quality/etf_daily?code=GAPS');
      assert.deepEqual(afterBatch.data[0]?.missing_dates, ['2024-05-08']);
    });

    test('errors: an exchange without a calendar, a dataset without a report, bad parameters', async () => {
      const noCal = await get(h.app, '/api/v1/quality/etf_daily?exchange=NYSE');
      assert.equal(noCal.statusCode, 400);
      assert.equal(json(noCal).code, 4001);
      assert.match(String(json(noCal).message), /NYSE.*stored: SSE/);
      const none = await get(h.app, '/api/v1/quality/etf_basic');
      assert.equal(none.statusCode, 404);
      assert.equal(json(none).code, 4041);
      for (const q of [
        'sort=nope',
        'limit=0',
        'date_from=2024-13-01',
        'bogus=1',
        'order=up',
        'jump_pct=0',
        'jump_pct=-5',
        'jump_pct=abc',
        'jump_pct=1001',
      ]) {
        const bad = await get(h.app, `/api/v1/quality/etf_daily?${q}`);
        assert.equal(bad.statusCode, 400, q);
        assert.equal(json(bad).code, 4001, q);
      }
      const anon = await h.app.inject({ method: 'GET', url: '/api/v1/quality/etf_daily' });
      assert.equal(anon.statusCode, 401);
    });

    test("says which days of a code's span the stored calendar cannot judge", async () => {
      const days = ['2024-04-25', '2024-04-26', ...OPEN, '2024-05-13', '2024-05-14'];
      const res = await push(
        h.app,
        batch(
          'etf_daily',
          days.map((d) => bar('LONG', d)),
        ),
      );
      assert.equal(res.statusCode, 200, res.body);
      for (const path of [
        '/api/v1/quality/etf_daily?code=LONG',
        '/api/v1/quality/etf_daily?code=LONG&date_from=20240401',
      ]) {
        const [row] = (await report(path)).data;
        assert.deepEqual(
          [row?.expected, row?.missing, row?.unjudged],
          [
            7,
            0,
            [
              { from: '2024-04-25', to: '2024-04-28' },
              { from: '2024-05-13', to: '2024-05-14' },
            ],
          ],
          path,
        );
      }
    });
  });
}
