import path from 'node:path';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { backends, get, json, push, startApp, type Harness } from '../helpers/harness.js';
import { adjFactor, batch, days } from '../helpers/batches.js';
import { ROOT } from '../helpers/repo-root.js';

/**
 * The quality report's bar-by-bar checks (issue 27 items 6 and 8) on every backend: bars on
 * closed days, zero-volume dates, jumps beyond `jump_pct` that no factor change explains, runs
 * of identical bars, and pushed pre_close values that are not the previous close times the
 * factor change. Code Q (source test) over two SSE weeks, 2024-05-06 … 05-17, weekends closed:
 *
 *   05-06 10     05-07 10.5 (pre 10 ✓)   05-08 14 (pre 10.4 ✗; +33.33 %)
 *   05-09 7, split: factor 1 → 2 (pre 7 ✓: 14 × 1/2; no jump)
 *   05-10 6.7, dividend: factor 2 → 2.1 (pre 7 ✗: 7 × 2/2.1 = 6.6667)
 *   Sat 05-11 a bar on a closed day   05-13, 05-14, 05-15 identical   05-16 volume 0
 *   05-17 3 (−55.88 %, no factor change)
 * and a second source b of Q: 05-06 10, 05-07 20 (+100 %, judged with test's factors, Q's only
 * factor source).
 */

const CAL = days('2024-05-06', 14);
const weekday = (d: string): boolean => ![0, 6].includes(new Date(`${d}T00:00:00Z`).getUTCDay());

type Bar = [date: string, close: number, volume: number, preClose: number | null];
const Q_BARS: Bar[] = [
  ['2024-05-06', 10, 100, null],
  ['2024-05-07', 10.5, 110, 10],
  ['2024-05-08', 14, 120, 10.4],
  ['2024-05-09', 7, 130, 7],
  ['2024-05-10', 6.7, 140, 7],
  ['2024-05-11', 6.7, 1, null],
  ['2024-05-13', 6.8, 150, null],
  ['2024-05-14', 6.8, 150, null],
  ['2024-05-15', 6.8, 150, null],
  ['2024-05-16', 6.8, 0, null],
  ['2024-05-17', 3, 10, null],
];

const bar = ([date, close, volume, preClose]: Bar, source: string): Record<string, unknown> => ({
  symbol: 'Q',
  date,
  open: close,
  high: close,
  low: close,
  close,
  volume,
  ...(preClose === null ? {} : { pre_close: preClose }),
  source,
  updated_at: `${date}T08:30:00Z`,
});

type Row = Record<string, unknown>;

/** docs/bars-and-quality.md's worked example of the checks: Q's row, as the page shows it. */
function documented(): Row {
  const doc = readFileSync(path.join(ROOT, 'docs', 'bars-and-quality.md'), 'utf8');
  const at = doc.indexOf('`GET /api/v1/quality/etf_daily?code=Q` answers');
  const m = /```json\n([\s\S]*?)\n```/.exec(doc.slice(at));
  assert.ok(at >= 0 && m, "the page's worked example of the checks");
  return JSON.parse(m[1]!) as Row;
}

for (const backend of await backends()) {
  describe(`quality report: bar-by-bar checks (${backend})`, () => {
    let h: Harness;
    const report = async (query: string): Promise<{ row: Row; meta: Row }> => {
      const res = await get(h.app, `/api/v1/quality/etf_daily?code=Q${query}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res) as { data: Row[]; meta: Row };
      assert.equal(body.data.length, 1);
      return { row: body.data[0]!, meta: body.meta };
    };

    before(async () => {
      h = await startApp(backend);
      for (const b of [
        batch(
          'trade_calendar',
          CAL.map((date) => ({ exchange: 'SSE', date, is_open: weekday(date) ? 1 : 0, source: 'test' })),
        ),
        batch('adj_factor', [
          adjFactor('Q', '2024-05-06', 1),
          adjFactor('Q', '2024-05-09', 2),
          adjFactor('Q', '2024-05-10', 2.1),
        ]),
        batch(
          'etf_daily',
          Q_BARS.map((b) => bar(b, 'test')),
          { source: 'test' },
        ),
        batch(
          'etf_daily',
          [bar(['2024-05-06', 10, 100, null], 'b'), bar(['2024-05-07', 20, 100, null], 'b')],
          { source: 'b' },
        ),
      ]) {
        const res = await push(h.app, b);
        assert.equal(res.statusCode, 200, res.body);
      }
    });
    after(async () => h?.close());

    test('every check, from the summaries (no window) and computed (a window)', async () => {
      const { row, meta } = await report('');
      assert.equal(meta.jump_pct, 20);
      const shown = documented();
      assert.deepEqual(
        Object.fromEntries(Object.keys(shown).map((k) => [k, row[k]])),
        shown,
        'the answer docs/bars-and-quality.md shows',
      );
      assert.deepEqual(row.off_calendar_dates, ['2024-05-11']);
      assert.deepEqual(row.zero_volume_dates, ['2024-05-16']);
      assert.deepEqual(row.jumps, [
        { date: '2024-05-07', pct: 100, source: 'b' },
        { date: '2024-05-08', pct: 33.33, source: 'test' },
        { date: '2024-05-17', pct: -55.88, source: 'test' },
      ]);
      assert.deepEqual(row.identical_runs, [
        { from: '2024-05-13', to: '2024-05-15', bars: 3, source: 'test' },
      ]);
      assert.deepEqual(row.pre_close_mismatches, [
        { date: '2024-05-08', pre_close: 10.4, expected: 10.5, source: 'test' },
        { date: '2024-05-10', pre_close: 7, expected: 6.6667, source: 'test' },
      ]);

      // A window: its first bar has no previous one in it, so it is not judged against one.
      const windowed = (await report('&date_from=2024-05-09')).row;
      assert.deepEqual(windowed.jumps, [{ date: '2024-05-17', pct: -55.88, source: 'test' }]);
      assert.deepEqual(
        (windowed.pre_close_mismatches as Row[]).map((m) => m.date),
        ['2024-05-10'],
      );
      assert.deepEqual(windowed.off_calendar_dates, ['2024-05-11']);
    });

    test('jump_pct sets the threshold', async () => {
      const { row, meta } = await report('&jump_pct=50');
      assert.equal(meta.jump_pct, 50);
      assert.deepEqual(
        (row.jumps as Row[]).map((j) => j.date),
        ['2024-05-07', '2024-05-17'],
      );
      assert.deepEqual((await report('&jump_pct=200')).row.jumps, []);
    });

    test('a batch that fixes the bars clears the checks (cached per version)', async () => {
      const fixed: Bar[] = [
        ['2024-05-08', 14, 120, 10.5],
        ['2024-05-10', 6.7, 140, 6.6667],
      ];
      const res = await push(
        h.app,
        batch(
          'etf_daily',
          fixed.map((b) => bar(b, 'test')),
          { source: 'test' },
        ),
      );
      assert.equal(res.statusCode, 200, res.body);
      const { row } = await report('');
      assert.deepEqual(row.pre_close_mismatches, []);
      // The jumps stay: the prices did not change.
      assert.equal((row.jumps as Row[]).length, 3);
      // A batch of factors is seen too (the report is cached per version of the factors as well).
      await push(h.app, batch('adj_factor', [adjFactor('Q', '2024-05-17', 0.9)]));
      assert.deepEqual(
        ((await report('')).row.jumps as Row[]).map((j) => [j.date, j.pct]),
        [
          ['2024-05-07', 100],
          ['2024-05-08', 33.33],
          ['2024-05-17', -81.09],
        ],
      );
    });
  });
}
