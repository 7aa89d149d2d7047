import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CATALOG } from '../../src/catalog/catalog.js';
import { QUALITY_SORTS } from '../../src/model/quality-rules.js';
import { QualityService } from '../../src/query/quality-service.js';
import { createStore } from '../../src/storage/create-store.js';
import type { QualityQuery } from '../../src/storage/store.js';
import { batch, plainBar } from '../helpers/batches.js';
import { backends, push, runSql, startApp, type Harness } from '../helpers/harness.js';

/**
 * The quality report read from the per-code summaries the batch transaction keeps must be the
 * report computed from the rows, on both backends, after every step of a sequence: bars before
 * any calendar, the calendar, appends, updates, a code's last day pushed again and deleted, a
 * full snapshot deleting rows (and a code's only one), a calendar change, a revert; and on a
 * database upgraded from before the summaries.
 */

const TODAY = '2024-07-01';
const CALENDAR_FROM = '2024-01-01';
const CALENDAR_TO = '2024-06-30';

function days(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}
const weekday = (date: string): boolean => ![0, 6].includes(new Date(`${date}T00:00:00Z`).getUTCDay());
// Labour Day holidays, closed.
const HOLIDAYS = new Set(['2024-05-01', '2024-05-02', '2024-05-03']);
const OPEN = days(CALENDAR_FROM, CALENDAR_TO).filter((d) => weekday(d) && !HOLIDAYS.has(d));

function calendar(exchange: string, closed: ReadonlySet<string> = HOLIDAYS): Record<string, unknown>[] {
  return days(CALENDAR_FROM, CALENDAR_TO).map((date) => ({
    exchange,
    date,
    is_open: weekday(date) && !closed.has(date) ? 1 : 0,
    source: 'test',
  }));
}

const bar = plainBar;

/** A full snapshot of source "test" on `day` holding only `code`'s bar: the day's other bars go. */
const fullSnapshot = (code: string, day: string) =>
  batch('etf_daily', [bar(code, day)], { snapshotType: 'full_snapshot', businessDate: day, source: 'test' });

/** Codes of every kind the report tells apart. */
function firstBars(): Record<string, unknown>[] {
  const may = OPEN.filter((d) => d >= '2024-04-29' && d <= '2024-05-10');
  return [
    ...may.map((d) => bar('GOOD', d)),
    // Gaps, a bad bar (low > high), zero volume.
    ...may
      .filter((d) => d !== '2024-05-07' && d !== '2024-05-08')
      .map((d) =>
        bar('GAPS', d, {
          ...(d === '2024-05-06' ? { low: 12 } : {}),
          ...(d === '2024-05-09' ? { volume: 0 } : {}),
        }),
      ),
    ...may.filter((d) => d <= '2024-05-08').map((d) => bar('OLD', d)),
    // A bar on a Saturday and on a holiday: counted, no gap.
    bar('SAT', '2024-04-30'),
    bar('SAT', '2024-05-04'),
    bar('SAT', '2024-05-02'),
    bar('SAT', '2024-05-06'),
    // More than 50 missing days, more than 50 bad bars.
    bar('SPARSE', '2024-01-02'),
    bar('SPARSE', '2024-06-28'),
    ...OPEN.slice(0, 60).map((d) => bar('BAD', d, { close: 20 })),
    // The only bar of a code, on a day a full snapshot will prune.
    bar('ONE', '2024-05-06'),
  ];
}

type Service = QualityService;

/** Every sort and order, a page inside the report, one code, another exchange, a window. */
const REQUESTS: Record<string, string>[] = [
  ...QUALITY_SORTS.flatMap((sort): Record<string, string>[] => [
    { sort, limit: '1000' },
    { sort, order: 'asc', limit: '1000' },
    { sort, order: 'desc', limit: '3', offset: '2' },
  ]),
  {},
  { code: 'GAPS' },
  { code: 'SPARSE', sort: 'code' },
  { code: 'NONE' },
];

for (const backend of await backends()) {
  describe(`quality summaries (${backend})`, () => {
    let h: Harness;
    let fromSummaries: Service;
    let fromRows: Service;
    const qq: QualityQuery = {
      dataset: CATALOG.byName.get('etf_daily')!,
      calendar: CATALOG.calendar!,
      exchange: 'SSE',
      code: null,
      dateFrom: null,
      dateTo: null,
    };

    /** Both services give the same answer (or the same error) to every request. */
    async function same(step: string): Promise<void> {
      for (const raw of REQUESTS) {
        const a = await fromSummaries.report('etf_daily', raw).catch((e: Error) => e.message);
        const b = await fromRows.report('etf_daily', raw).catch((e: Error) => e.message);
        assert.deepEqual(a, b, `${step}: ${JSON.stringify(raw)}`);
      }
      // The first service did read the summaries.
      const page = await h.store.datasets.qualitySummaryPage(qq, null, {
        sort: 'code',
        order: 'asc',
        limit: 1000,
        offset: 0,
      });
      assert.ok(page, `${step}: summaries kept`);
    }

    async function pushOk(body: Record<string, unknown>): Promise<void> {
      const res = await push(h.app, body);
      assert.equal(res.statusCode, 200, res.body);
    }

    before(async () => {
      h = await startApp(backend);
      fromSummaries = new QualityService(h.store, CATALOG, { today: () => TODAY });
      fromRows = new QualityService(h.store, CATALOG, { today: () => TODAY, summaries: false });
    });
    after(async () => h?.close());

    test('the same report from summaries and from rows after every kind of batch', async () => {
      await pushOk(batch('etf_daily', firstBars()));
      await same('bars before any calendar');
      assert.match(
        await fromSummaries.report('etf_daily', {}).then(
          () => 'answered',
          (e: Error) => e.message,
        ),
        /no trading calendar/,
      );

      await pushOk(batch('trade_calendar', [...calendar('SSE'), ...calendar('SZSE', new Set())]));
      await same('the calendar');
      const gaps = await fromSummaries.report('etf_daily', { code: 'GAPS' });
      assert.deepEqual(gaps.rows[0]?.missing_dates, ['2024-05-07', '2024-05-08']);
      const sparse = await fromSummaries.report('etf_daily', { code: 'SPARSE' });
      assert.equal(sparse.rows[0]?.missing_dates.length, 50);
      // 2024-01-02 … 06-28: every open day but 01-01, two of them with bars.
      assert.equal(sparse.rows[0]?.missing, OPEN.length - 3);

      // Bars after each code's last one (a summary extended from them alone): with gaps, a bad
      // bar, zero volume, a closed day; more bad bars past the 50 listed.
      await pushOk(
        batch('etf_daily', [
          ...OPEN.filter((d) => d > '2024-05-10' && d <= '2024-05-20').map((d) => bar('GOOD', d)),
          bar('GAPS', '2024-05-13', { low: 12 }),
          bar('GAPS', '2024-05-15', { volume: 0 }),
          bar('GAPS', '2024-05-17'),
          bar('SAT', '2024-05-11'),
          ...OPEN.slice(60, 63).map((d) => bar('BAD', d, { close: 20 })),
          // A code new in this batch, two sources of one day (counted once), a gap, zero volume.
          bar('TWO', '2024-05-13'),
          bar('TWO', '2024-05-13', { source: 'other', low: 12 }),
          bar('TWO', '2024-05-15', { source: 'other', volume: 0 }),
        ]),
      );
      await same('appends');
      const two = (await fromSummaries.report('etf_daily', { code: 'TWO' })).rows[0];
      assert.deepEqual(
        [two?.bars, two?.missing_dates, two?.ohlc_violation_dates, two?.zero_volume_days],
        [2, ['2024-05-14'], ['2024-05-13'], 1],
      );
      const appended = await fromSummaries.report('etf_daily', { code: 'GAPS' });
      assert.deepEqual(appended.rows[0]?.missing_dates, [
        '2024-05-07',
        '2024-05-08',
        '2024-05-14',
        '2024-05-16',
      ]);
      assert.deepEqual(appended.rows[0]?.ohlc_violation_dates, ['2024-05-06', '2024-05-13']);

      // Updates (a bad bar fixed, a gap filled), a second source of a code's last day, a new code.
      await pushOk(
        batch('etf_daily', [
          bar('GAPS', '2024-05-06'),
          bar('GAPS', '2024-05-07', { volume: 0 }),
          bar('OLD', '2024-05-08', { source: 'other' }),
          bar('NEW', '2024-06-28', { high: 1 }),
        ]),
      );
      await same('updates');

      // Older days corrected with every bar's verdicts kept (their summaries stand as they are),
      // then, in one batch, a bad bar and a zero-volume day of GAPS moved to other older days:
      // the same counts, other dates (judged again).
      await pushOk(
        batch('etf_daily', [
          bar('GOOD', '2024-04-30', { close: 10.5, volume: 999 }),
          bar('BAD', OPEN[3] as string, { close: 21 }),
          bar('GAPS', '2024-05-09', { volume: 0, close: 9.5 }),
        ]),
      );
      await same('older days corrected, verdicts kept');
      await pushOk(
        batch('etf_daily', [
          bar('GAPS', '2024-04-29', { low: 12 }),
          bar('GAPS', '2024-05-13'),
          bar('GAPS', '2024-05-09'),
          bar('GAPS', '2024-05-10', { volume: 0 }),
        ]),
      );
      await same('a bad bar and a zero-volume day moved');
      const moved = await fromSummaries.report('etf_daily', { code: 'GAPS' });
      assert.deepEqual(moved.rows[0]?.ohlc_violation_dates, ['2024-04-29']);

      // Each code's last day pushed again, changed (with an append for GAPS): GOOD's becomes a bad
      // zero-volume bar, BAD's a good one; then GOOD's is fixed, and a full snapshot of 05-20
      // without GOOD takes its last day away.
      await pushOk(
        batch('etf_daily', [
          bar('GOOD', '2024-05-20', { low: 12, volume: 0 }),
          bar('GAPS', '2024-05-17', { volume: 0 }),
          bar('GAPS', '2024-05-21'),
          bar('BAD', OPEN[62] as string),
          bar('SAT', '2024-05-11', { high: 1 }),
        ]),
      );
      await same('the last day again');
      const last = await fromSummaries.report('etf_daily', { code: 'GOOD' });
      assert.deepEqual(
        [last.rows[0]?.ohlc_violation_dates, last.rows[0]?.zero_volume_days],
        [['2024-05-20'], 1],
      );
      await pushOk(batch('etf_daily', [bar('GOOD', '2024-05-20')]));
      await same('the last day fixed');
      await pushOk(fullSnapshot('GAPS', '2024-05-20'));
      await same('the last day deleted');
      assert.equal(
        (await fromSummaries.report('etf_daily', { code: 'GOOD' })).rows[0]?.last_date,
        '2024-05-17',
      );

      // A full snapshot of 2024-05-06 from "test" keeping GOOD only: GAPS, OLD, SAT lose the
      // day, ONE its only bar.
      await pushOk(fullSnapshot('GOOD', '2024-05-06'));
      await same('a full snapshot');
      const one = await fromSummaries.report('etf_daily', { code: 'ONE' });
      assert.equal(one.total, 0);

      // The calendar closes a day and the SZSE calendar changes: summaries judged by SSE follow.
      await pushOk(batch('trade_calendar', calendar('SSE', new Set([...HOLIDAYS, '2024-05-09']))));
      await same('a calendar change');
      const good = await fromSummaries.report('etf_daily', { code: 'GOOD' });
      assert.equal(
        good.rows[0]?.expected,
        OPEN.filter((d) => d >= '2024-04-29' && d <= '2024-05-17').length - 1,
      );

      // A revert puts back what the snapshot deleted.
      const batches = await h.store.batches.listBatches({ dataset: 'etf_daily', limit: 1 });
      const snapshot = batches[0];
      assert.equal(snapshot?.pruned, 4);
      const reverted = await h.store.revisions.revertBatch(snapshot.batch_id, () => new Date().toISOString());
      assert.equal(reverted.kind, 'reverted');
      await same('a revert');
      assert.equal((await fromSummaries.report('etf_daily', { code: 'ONE' })).total, 1);
    });

    test('a database from before the summaries gets them built by migrate', async () => {
      // The summaries' tables and schema version gone, as before this release.
      const statements = [
        'DROP TABLE mds_quality_codes',
        'DROP TABLE mds_quality_state',
        'DELETE FROM mds_migrations WHERE version = 5',
      ];
      await runSql(h.databaseUrl, statements);
      const store = await createStore(h.databaseUrl, CATALOG);
      try {
        await store.migrate();
        fromSummaries = new QualityService(store, CATALOG, { today: () => TODAY });
        fromRows = new QualityService(store, CATALOG, { today: () => TODAY, summaries: false });
        await same('upgraded');
      } finally {
        await store.close();
      }
    });
  });
}
