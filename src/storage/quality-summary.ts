import type { Catalog, Dataset } from '../catalog/catalog.js';
import {
  judgeCode,
  missingCount,
  priorToLastDay,
  type KeptVerdict,
  type Prior,
  type CodeVerdict,
  type QualityCodeSummary,
} from '../model/quality-rules.js';
import type { DbRow, Tx } from './db.js';
import {
  changedCodesSql,
  changedViolationsSql,
  codeDatesSql,
  deleteSummariesSql,
  insertSummariesSql,
  lockSummarySql,
  qualityOpenDaysSql,
  qualitySummarySql,
  qualityViolationsSql,
  setSummaryStateSql,
  summariesOfSql,
  summaryStateSql,
  touchedExchangesSql,
  type RowScope,
} from './quality-sql.js';
import type { Sql } from './sql.js';
import type { Step } from './step.js';
import type { QualityQuery } from './store.js';

/**
 * The quality report's rows, computed per code (written once for both backends, as steps), and
 * the per-code summaries that keep them: the batch transaction refreshes the codes a batch
 * touched, a calendar batch rebuilds the summaries of the datasets judged by the exchanges it
 * touched, migrate builds those missing. The unfiltered report (and one code's) is then a read
 * of one row per code (dataset-store.ts); a date window or another exchange is computed on
 * demand from the same steps.
 */

/** The rules' version the summaries follow: a release that changes the rules bumps it (rebuild). */
export const QUALITY_RULE = 3;
/**
 * Codes per statement when refreshing: the IN lists are padded to a power of two, and 8,192
 * stays far below either backend's limit of bound parameters (SQLite 32,766, PostgreSQL
 * 65,535), so a daily batch of one day of every code is judged in a handful of statements.
 */
const CHUNK = 8192;
/** Verdicts per INSERT (14 parameters each), in power-of-two counts. */
const INSERT_ROWS = 1024;

type Reader = Pick<Tx, 'rows'>;

/** A count column (NULL as 0; PostgreSQL's bigint counts come back as text). */
const num = (v: unknown): number => Number(v ?? 0);

/**
 * The verdict of every code the report's filters (and `scope`) select, with what its last date
 * added. `priors`: for codes whose selected bars are those from a prior's day on, the prior
 * verdict on the bars before it, extended. `open`: the calendar's open days (read when absent).
 */
export function* qualityVerdicts(
  r: Reader,
  qq: QualityQuery,
  scope: RowScope,
  priors: ReadonlyMap<string, Prior> | null = null,
  openDays: readonly string[] | null = null,
): Step<KeptVerdict[]> {
  const open = openDays ?? (yield* readOpenDays(r, qq));
  const codes: QualityCodeSummary[] = (yield* r.rows(qualitySummarySql(qq, scope))).map((x) => ({
    code: String(x.code),
    first_date: String(x.first_date),
    last_date: String(x.last_date),
    bars: num(x.bars),
    open_bars: num(x.open_bars),
    zero_volume_days: x.zero_volume_days === null ? null : num(x.zero_volume_days),
    last_zero: x.last_zero_date !== null && String(x.last_zero_date) === String(x.last_date),
  }));
  const violations = qualityViolationsSql(qq, scope);
  const bad = badDates(violations ? yield* r.rows(violations) : []);
  return yield* judged(r, qq, codes, bad, priors, open);
}

/** Bad bars' dates by code (rows of code and date, oldest first within a code). */
function badDates(rows: readonly DbRow[]): Map<string, string[]> {
  const bad = new Map<string, string[]>();
  for (const v of rows) {
    const code = String(v.code);
    const dates = bad.get(code);
    // Appended in place: a code may have thousands of bad bars.
    if (dates) dates.push(String(v.date));
    else bad.set(code, [String(v.date)]);
  }
  return bad;
}

/** The verdicts of codes' aggregates and bad bars, each extending its prior when it has one. */
function* judged(
  r: Reader,
  qq: QualityQuery,
  codes: readonly QualityCodeSummary[],
  bad: ReadonlyMap<string, string[]>,
  priors: ReadonlyMap<string, Prior> | null,
  open: readonly string[],
): Step<KeptVerdict[]> {
  const out: KeptVerdict[] = [];
  for (const c of codes) {
    const prior = priors?.get(c.code) ?? null;
    const dates = bad.get(c.code) ?? [];
    // Only a code with gaps has its dates read, to list the first missing ones.
    const have =
      missingCount(c, open, prior) > 0
        ? new Set(
            (yield* r.rows(codeDatesSql(qq.dataset, c.code, c.first_date, c.last_date))).map((x) =>
              String(x.date),
            ),
          )
        : null;
    out.push({
      verdict: judgeCode(c, open, dates, have, prior),
      lastZero: c.last_zero,
      lastBad: dates[dates.length - 1] === c.last_date,
    });
  }
  return out;
}

function* readOpenDays(r: Reader, qq: QualityQuery): Step<string[]> {
  return (yield* r.rows(qualityOpenDaysSql(qq))).map((x) => String(x.date));
}

/** What the summaries of a daily dataset cover: every code, every date, its calendar. */
function summaryQuery(calendar: Dataset, d: Dataset): QualityQuery {
  return {
    dataset: d,
    calendar,
    exchange: d.daily?.calendar ?? '',
    code: null,
    dateFrom: null,
    dateTo: null,
  };
}

/**
 * Written (each replacing its code's summary) in statements of power-of-two row counts (at most
 * INSERT_ROWS): any number of verdicts takes few statement shapes, each prepared once by SQLite.
 */
function* insertVerdicts(tx: Tx, qq: QualityQuery, verdicts: readonly KeptVerdict[]): Step<void> {
  for (let i = 0; i < verdicts.length;) {
    let n = INSERT_ROWS;
    while (n > verdicts.length - i) n /= 2;
    yield* tx.run(insertSummariesSql(qq, verdicts.slice(i, i + n)));
    i += n;
  }
}

/** Every code's summary of a daily dataset computed afresh (its state row taken first: the lock). */
function* rebuild(tx: Tx, calendar: Dataset, d: Dataset): Step<void> {
  const qq = summaryQuery(calendar, d);
  yield* tx.run(setSummaryStateSql(qq, QUALITY_RULE));
  yield* tx.run(deleteSummariesSql(d, null));
  yield* insertVerdicts(tx, qq, yield* qualityVerdicts(tx, qq, null));
}

/**
 * In a transaction that changed rows of `d` (after its revisions: the dataset's lock is held),
 * `changed` being a relation of those rows with the dataset's columns (the batch's changes): a
 * daily dataset's summaries of the codes touched are computed again; a calendar's change
 * rebuilds the summaries of every daily dataset judged by an exchange it touched.
 */
export function* refreshQuality(tx: Tx, catalog: Catalog, d: Dataset, changed: Sql): Step<void> {
  const calendar = catalog.calendar;
  if (!calendar) return;
  if (d.name === calendar.name) {
    const touched = new Set(
      (yield* tx.rows(touchedExchangesSql(calendar, changed))).map((r) => String(r.exchange)),
    );
    for (const s of catalog.datasets) {
      if (s.daily && touched.has(s.daily.calendar)) yield* rebuild(tx, calendar, s);
    }
    return;
  }
  if (!d.daily) return;
  const qq = summaryQuery(calendar, d);
  // Not built for this exchange: the report is computed on demand until migrate builds them.
  if ((yield* tx.run(lockSummarySql(qq))) === 0) return;
  // A code whose changed bars each replaced one with the same verdicts (a correction of prices
  // or volumes) keeps its summary: judging its bars again would give the same one.
  const touched = (yield* tx.rows(changedCodesSql(qq, changed))).filter((r) => Number(r.kept) !== 1);
  if (touched.length === 0) return;
  const open = yield* readOpenDays(tx, qq);
  // Their stored summaries, by the key (a join of the touched codes with them was planned as a
  // scan of the summaries per code on PostgreSQL).
  const stored = new Map<string, KeptVerdict>();
  for (let i = 0; i < touched.length; i += CHUNK) {
    const codes = touched.slice(i, i + CHUNK).map((r) => String(r.code));
    for (const r of yield* tx.rows(summariesOfSql(qq, codes))) {
      stored.set(String(r.code), {
        verdict: verdictFromRow(r),
        lastZero: Number(r.last_zero) === 1,
        lastBad: Number(r.last_bad) === 1,
      });
    }
  }
  // A code whose changes are all new bars after its summary's last date (the daily append), or
  // all of a code new to the dataset (a backfill): those bars are all it lacks, so its summary
  // is extended by their aggregates, computed from the changes alone (the span starts after
  // the last date: `from` just above it), without reading the dataset's rows.
  const appended = touched.filter((r) => {
    const kept = stored.get(String(r.code));
    return Number(r.inserted) === 1 && (!kept || String(r.since) > kept.verdict.last_date);
  });
  const verdicts: KeptVerdict[] = [];
  if (appended.length > 0) {
    const violations = changedViolationsSql(qq, changed);
    const bad = badDates(violations ? yield* tx.rows(violations) : []);
    const priors = new Map<string, Prior>();
    const codes = appended.map((r): QualityCodeSummary => {
      const code = String(r.code);
      const kept = stored.get(code);
      if (kept) priors.set(code, { verdict: kept.verdict, from: `${kept.verdict.last_date}\u0000` });
      const last = String(r.n_last);
      return {
        code,
        first_date: String(r.since),
        last_date: last,
        bars: num(r.n_bars),
        open_bars: num(r.n_open),
        zero_volume_days: r.n_zero === null ? null : num(r.n_zero),
        last_zero: r.n_last_zero !== null && String(r.n_last_zero) === last,
      };
    });
    verdicts.push(...(yield* judged(tx, qq, codes, bad, priors, open)));
  }
  const done = new Set(appended.map((r) => String(r.code)));
  const rest = touched.filter((r) => !done.has(String(r.code)));
  for (let i = 0; i < rest.length; i += CHUNK) {
    const chunk = rest.slice(i, i + CHUNK).map((r) => ({ code: String(r.code), since: String(r.since) }));
    const codes = chunk.map((c) => c.code);
    // A code whose changed bars are all on or after its summary's last date (that day pushed
    // again, or changed with new days after it): its summary without that day, extended by its
    // bars from that day on, read through the key index. Any other change: the code's bars are
    // judged again.
    const priors = new Map<string, Prior>();
    for (const c of chunk) {
      const kept = stored.get(c.code);
      const prior = kept && c.since >= kept.verdict.last_date ? priorToLastDay(kept, open) : null;
      if (prior) priors.set(c.code, prior);
    }
    const extended =
      priors.size > 0
        ? yield* qualityVerdicts(tx, qq, { codes: [...priors.keys()], after: true }, priors, open)
        : [];
    const done = new Set(extended.map((k) => k.verdict.code));
    // Also a code with no bar left from that day on: its last date is now an earlier one.
    const again = codes.filter((c) => !done.has(c));
    const chunkVerdicts = [
      ...extended,
      ...(again.length > 0 ? yield* qualityVerdicts(tx, qq, { codes: again, after: false }, null, open) : []),
    ];
    // A code with no bar left has no verdict: its summary goes. The others' are replaced.
    const judgedCodes = new Set(chunkVerdicts.map((k) => k.verdict.code));
    const gone = codes.filter((c) => !judgedCodes.has(c));
    if (gone.length > 0) yield* tx.run(deleteSummariesSql(d, gone));
    verdicts.push(...chunkVerdicts);
  }
  yield* insertVerdicts(tx, qq, verdicts);
}

/** A summary row as the verdict it keeps. */
export function verdictFromRow(r: DbRow): CodeVerdict {
  const dates = (v: unknown): string[] => JSON.parse(String(v)) as string[];
  return {
    code: String(r.code),
    first_date: String(r.first_date),
    last_date: String(r.last_date),
    bars: num(r.bars),
    expected: num(r.expected),
    missing: num(r.missing),
    missing_dates: dates(r.missing_dates),
    ohlc_violations: num(r.ohlc_violations),
    ohlc_violation_dates: dates(r.ohlc_violation_dates),
    zero_volume_days: r.zero_volume_days === null ? null : num(r.zero_volume_days),
  };
}

/**
 * migrate: every daily dataset whose summaries are missing, judged by another exchange than its
 * calendar's now, or built under other rules, gets them built (an upgraded database: once).
 */
export function* buildMissingSummaries(tx: Tx, catalog: Catalog): Step<void> {
  const calendar = catalog.calendar;
  if (!calendar) return;
  for (const d of catalog.datasets) {
    if (!d.daily) continue;
    const [state] = yield* tx.rows(summaryStateSql(d));
    if (state && state.exchange === d.daily.calendar && Number(state.rule) === QUALITY_RULE) continue;
    yield* rebuild(tx, calendar, d);
  }
}
