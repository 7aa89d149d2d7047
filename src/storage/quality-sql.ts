import type { Dataset, DailySeries } from '../catalog/catalog.js';
import { VERDICT_FIELDS, type KeptVerdict, type QualitySort } from '../model/quality-rules.js';
import { revisionTableName } from './revision-schema.js';
import { REV_OP } from '../model/revisions.js';
import { ident, join, q, raw, replacedBy, sql, type Sql } from './sql.js';
import type { QualityQuery } from './store.js';

/**
 * The statements of the data-quality report (GET /api/v1/quality/{dataset}): aggregates per
 * code computed by the database, so only one row per code (and the rare bad bars) reach the
 * rules that judge them against the calendar (model/quality-rules.ts); and those of the per-code
 * summaries that keep the judged rows (quality-summary.ts, tables in internal-tables.ts).
 */

function daily(d: Dataset): DailySeries {
  if (!d.daily) throw new Error(`${d.name} is not a daily series`);
  return d.daily;
}

/** `prefix` + a column (`c.`, or '' for none). */
const column = (prefix: string, f: { name: string }): string => `${prefix}${q(f.name)}`;

/** "The bar is suspended" (its flag is 1), over columns named with `prefix`; null: no flag. */
function suspendedBar(s: DailySeries, prefix = ''): string | null {
  const f = s.bar?.suspended;
  return f ? `${column(prefix, f)} = 1` : null;
}

/**
 * "The bar has zero volume and is not suspended" (a suspended day is reported as such, not as a
 * zero-volume day), over columns named with `prefix`; null: the dataset has no volume.
 */
function zeroVolumeBar(s: DailySeries, prefix = ''): string | null {
  const v = s.bar?.volume;
  if (!v) return null;
  const suspended = suspendedBar(s, prefix);
  return `${column(prefix, v)} = 0${suspended ? ` AND NOT (COALESCE(${suspended}, FALSE))` : ''}`;
}

/**
 * The rows of some codes only (those a batch touched): all their rows, or (`after`) only those
 * from the last date of the code's summary on. null: every code's.
 */
export type RowScope = { codes: readonly string[]; after: boolean } | null;

/**
 * A list padded to a power-of-two length by repeating its last element (same meaning in an IN
 * list), so that statements over lists of any length take few shapes (SQLite prepares each once).
 */
function padded(xs: readonly string[]): Sql {
  let n = 1;
  while (n < xs.length) n *= 2;
  const out = Array.from({ length: n }, (_, i) => xs[Math.min(i, xs.length - 1)] as string);
  return join(out.map((x) => sql`${x}`));
}

/**
 * The relation a statement reads the daily rows from, under the dataset's name: the table, or,
 * only the rows from each code's summary's last date on (the key index finds them).
 */
function source(qq: QualityQuery, scope: RowScope): Sql {
  if (!scope?.after) return ident(qq.dataset.name);
  const s = daily(qq.dataset);
  const b = s.bar;
  const cols = [
    s.code,
    s.date,
    ...(b ? [b.open, b.high, b.low, b.close, ...(b.volume ? [b.volume] : [])] : []),
  ];
  const list = raw(cols.map((f) => `t.${q(f.name)}`).join(', '));
  return sql`(SELECT ${list} FROM ${ident(qq.dataset.name)} AS t JOIN mds_quality_codes AS s ON s.code = t.${ident(s.code.name)} AND t.${ident(s.date.name)} >= s.last_date
    WHERE s.dataset = ${qq.dataset.name} AND s.exchange = ${qq.exchange} AND s.code IN (${padded(scope.codes)})) AS ${ident(qq.dataset.name)}`;
}

/** The report's filters on the daily rows: one code, the date window, the scope's codes. */
function conditions(qq: QualityQuery, scope: RowScope): Sql[] {
  const s = daily(qq.dataset);
  const out: Sql[] = scope && !scope.after ? [sql`${ident(s.code.name)} IN (${padded(scope.codes)})`] : [];
  if (qq.code !== null) out.push(sql`${ident(s.code.name)} = ${qq.code}`);
  if (qq.dateFrom !== null) out.push(sql`${ident(s.date.name)} >= ${qq.dateFrom}`);
  if (qq.dateTo !== null) out.push(sql`${ident(s.date.name)} <= ${qq.dateTo}`);
  return out;
}

const where = (parts: Sql[]): Sql => (parts.length ? sql` WHERE ${join(parts, ' AND ')}` : raw(''));

/** The open days of the report's exchange, as a subquery of dates. */
function openDays(qq: QualityQuery): Sql {
  const c = qq.calendar.calendar;
  if (!c) throw new Error(`${qq.calendar.name} is not a calendar`);
  return sql`SELECT ${ident(c.date.name)} FROM ${ident(qq.calendar.name)} WHERE ${ident(c.exchange.name)} = ${qq.exchange} AND ${ident(c.isOpen.name)} = 1`;
}

/**
 * Per code: first and last date, distinct bar dates, those on open days of the calendar, and
 * days with zero volume. Several sources of one day count once.
 */
export function qualitySummarySql(qq: QualityQuery, scope: RowScope = null): Sql {
  const s = daily(qq.dataset);
  const code = ident(s.code.name);
  const date = ident(s.date.name);
  const isZero = zeroVolumeBar(s);
  const zeroDate = `CASE WHEN ${isZero} THEN ${q(s.date.name)} END`;
  const zero = isZero
    ? raw(`count(DISTINCT ${zeroDate}) AS zero_volume_days, max(${zeroDate}) AS last_zero_date`)
    : raw('CAST(NULL AS INTEGER) AS zero_volume_days, CAST(NULL AS TEXT) AS last_zero_date');
  return sql`SELECT ${code} AS code, min(${date}) AS first_date, max(${date}) AS last_date, count(DISTINCT ${date}) AS bars, count(DISTINCT CASE WHEN ${date} IN (${openDays(qq)}) THEN ${date} END) AS open_bars, ${zero} FROM ${source(qq, scope)}${where(conditions(qq, scope))} GROUP BY ${code}`;
}

/**
 * "The bar is impossible": low > high, open or close outside [low, high], negative volume.
 * `alias`: the row's table alias (SQL text), or none.
 */
function badBar(s: DailySeries, alias = ''): string | null {
  const b = s.bar;
  if (!b) return null;
  const col = (f: { name: string }): string => `${alias ? `${alias}.` : ''}${q(f.name)}`;
  const [o, h, l, c] = [b.open, b.high, b.low, b.close].map(col);
  const bad = [`${l} > ${h}`, `${o} < ${l}`, `${o} > ${h}`, `${c} < ${l}`, `${c} > ${h}`];
  if (b.volume) bad.push(`${col(b.volume)} < 0`);
  return `(${bad.join(' OR ')})`;
}

/** Impossible bars (badBar), per code and date. */
export function qualityViolationsSql(qq: QualityQuery, scope: RowScope = null): Sql | null {
  const s = daily(qq.dataset);
  const bad = badBar(s);
  if (!bad) return null;
  return sql`SELECT DISTINCT ${ident(s.code.name)} AS code, ${ident(s.date.name)} AS date FROM ${source(qq, scope)}${where(
    [...conditions(qq, scope), raw(bad)],
  )} ORDER BY code, date`;
}

/**
 * The codes of a batch's changes (`changed`, alias "c": its revisions), in one pass:
 * - `since`: its oldest changed date; `kept` = 1 when every changed bar replaced a bar of the
 *   same key with the same zero-volume and impossible-bar verdicts (a price or volume
 *   corrected): its dates, gaps, zero-volume days and bad bars are what they were, so its
 *   summary stands. An inserted or deleted bar, or a verdict that changed, does not count.
 * - `inserted` = 1 when every change is a new bar, and then the changed bars' own aggregates as
 *   qualitySummarySql computes them (`n_last`, `n_bars`, `n_open`, `n_zero`, `n_last_zero`): when
 *   they all fall after the summary's last date (or the code has none), they are all the bars
 *   the summary lacks, so it is extended from them without reading the dataset's rows.
 */
export function changedCodesSql(qq: QualityQuery, changed: Sql): Sql {
  const s = daily(qq.dataset);
  const flags = (a: string): string => {
    const bad = badBar(s, a);
    const isZero = zeroVolumeBar(s, `${a}.`);
    const zero = isZero ? `CASE WHEN ${isZero} THEN 1 ELSE 0 END` : '0';
    return `${bad ? `CASE WHEN ${bad} THEN 2 ELSE 0 END` : '0'} + ${zero}`;
  };
  const kept = `c.${q(REV_OP)} = 'update' AND p.${q(REV_OP)} IS NOT NULL AND ${flags('c')} = ${flags('p')}`;
  const date = `c.${q(s.date.name)}`;
  const isZero = zeroVolumeBar(s, 'c.');
  const zeroDate = `CASE WHEN ${isZero} THEN ${date} END`;
  const zero = isZero
    ? `count(DISTINCT ${zeroDate}) AS n_zero, max(${zeroDate}) AS n_last_zero`
    : 'CAST(NULL AS INTEGER) AS n_zero, CAST(NULL AS TEXT) AS n_last_zero';
  return sql`SELECT c.${ident(s.code.name)} AS code, min(${raw(date)}) AS since,
      CASE WHEN sum(CASE WHEN ${raw(kept)} THEN 0 ELSE 1 END) = 0 THEN 1 ELSE 0 END AS kept,
      CASE WHEN sum(CASE WHEN c.${ident(REV_OP)} = 'insert' THEN 0 ELSE 1 END) = 0 THEN 1 ELSE 0 END AS inserted,
      max(${raw(date)}) AS n_last, count(DISTINCT ${raw(date)}) AS n_bars,
      count(DISTINCT CASE WHEN ${raw(date)} IN (${openDays(qq)}) THEN ${raw(date)} END) AS n_open, ${raw(zero)}
    FROM ${changed} LEFT JOIN ${ident(revisionTableName(qq.dataset))} AS p ON ${raw(replacedBy(qq.dataset, 'p', 'c'))}
    GROUP BY c.${ident(s.code.name)}`;
}

/** The impossible bars (badBar) among a batch's new and changed bars, per code and date. */
export function changedViolationsSql(qq: QualityQuery, changed: Sql): Sql | null {
  const s = daily(qq.dataset);
  const bad = badBar(s, 'c');
  if (!bad) return null;
  return sql`SELECT DISTINCT c.${ident(s.code.name)} AS code, c.${ident(s.date.name)} AS date FROM ${changed}
    WHERE c.${ident(REV_OP)} <> 'delete' AND ${raw(bad)} ORDER BY code, date`;
}

/** The open days of the exchange, oldest first. */
export function qualityOpenDaysSql(qq: QualityQuery): Sql {
  const c = qq.calendar.calendar;
  if (!c) throw new Error(`${qq.calendar.name} is not a calendar`);
  return sql`SELECT DISTINCT ${ident(c.date.name)} AS date FROM (${openDays(qq)}) AS "o" ORDER BY date`;
}

/** The latest open day of the exchange up to `until` (null: none). */
export function latestOpenDaySql(qq: QualityQuery, until: string): Sql {
  const c = qq.calendar.calendar;
  if (!c) throw new Error(`${qq.calendar.name} is not a calendar`);
  return sql`SELECT max(${ident(c.date.name)}) AS date FROM (${openDays(qq)}) AS "o" WHERE ${ident(c.date.name)} <= ${until}`;
}

/** The exchanges the calendar holds. */
export function calendarExchangesSql(calendar: Dataset): Sql {
  const c = calendar.calendar;
  if (!c) throw new Error(`${calendar.name} is not a calendar`);
  return sql`SELECT DISTINCT ${ident(c.exchange.name)} AS exchange FROM ${ident(calendar.name)} ORDER BY exchange`;
}

/** One code's distinct bar dates within [from, to]. */
export function codeDatesSql(d: Dataset, code: string, from: string, to: string): Sql {
  const s = daily(d);
  const date = ident(s.date.name);
  return sql`SELECT DISTINCT ${date} AS date FROM ${ident(d.name)} WHERE ${ident(s.code.name)} = ${code} AND ${date} >= ${from} AND ${date} <= ${to} ORDER BY date`;
}

/** The distinct exchanges of a relation holding the calendar's columns (a batch's changes). */
export function touchedExchangesSql(calendar: Dataset, changed: Sql): Sql {
  const c = calendar.calendar;
  if (!c) throw new Error(`${calendar.name} is not a calendar`);
  return sql`SELECT DISTINCT ${ident(c.exchange.name)} AS exchange FROM ${changed}`;
}

// The summaries: one row per dataset, exchange and code (mds_quality_codes) and, per dataset,
// the exchange they judge by and the rules' version they were built with (mds_quality_state).

/** The summaries' state of a dataset: the exchange and the rules' version (no row: not built). */
export function summaryStateSql(d: Dataset): Sql {
  return sql`SELECT exchange, rule FROM mds_quality_state WHERE dataset = ${d.name}`;
}

/**
 * Locks the state row of the dataset's summaries for this transaction (PostgreSQL: a row lock,
 * so two transactions refreshing one dataset's summaries do so one after the other); changes
 * nothing. 0 rows: the summaries of this exchange are not built.
 */
export function lockSummarySql(qq: QualityQuery): Sql {
  return sql`UPDATE mds_quality_state SET rule = rule WHERE dataset = ${qq.dataset.name} AND exchange = ${qq.exchange}`;
}

export function setSummaryStateSql(qq: QualityQuery, rule: number): Sql {
  return sql`INSERT INTO mds_quality_state (dataset, exchange, rule) VALUES (${qq.dataset.name}, ${qq.exchange}, ${rule})
    ON CONFLICT (dataset) DO UPDATE SET exchange = excluded.exchange, rule = excluded.rule`;
}

/** The summaries of these codes. */
export function summariesOfSql(qq: QualityQuery, codes: readonly string[]): Sql {
  return sql`SELECT ${raw([...SUMMARY_COLUMNS, ...LAST_DAY_COLUMNS].join(', '))} FROM mds_quality_codes
    WHERE dataset = ${qq.dataset.name} AND exchange = ${qq.exchange} AND code IN (${padded(codes)})`;
}

/** Deletes the dataset's summaries: of these codes, or all (of every exchange). */
export function deleteSummariesSql(d: Dataset, codes: readonly string[] | null): Sql {
  const which = codes ? sql` AND code IN (${padded(codes)})` : raw('');
  return sql`DELETE FROM mds_quality_codes WHERE dataset = ${d.name}${which}`;
}

const SUMMARY_COLUMNS = VERDICT_FIELDS;
/** Besides the report's fields: what the last date's bars added (zero volume, a bad bar). */
const LAST_DAY_COLUMNS = ['last_zero', 'last_bad'] as const;

const SUMMARY_KEY = ['dataset', 'exchange', 'code'];
const UPSERT_SUMMARY = `ON CONFLICT (${SUMMARY_KEY.join(', ')}) DO UPDATE SET ${[
  ...SUMMARY_COLUMNS,
  ...LAST_DAY_COLUMNS,
]
  .filter((c) => !SUMMARY_KEY.includes(c))
  .map((c) => `${c} = excluded.${c}`)
  .join(', ')}`;

/**
 * Writes verdicts (the date lists as JSON arrays) with what their last date added, replacing a
 * code's stored summary. Its chunks are built directly: one row's values are 14 parameters.
 */
export function insertSummariesSql(qq: QualityQuery, kept: readonly KeptVerdict[]): Sql {
  const cols = [...SUMMARY_COLUMNS, ...LAST_DAY_COLUMNS].join(', ');
  const chunks: Sql['chunks'][number][] = [
    `INSERT INTO mds_quality_codes (dataset, exchange, ${cols}) VALUES `,
  ];
  kept.forEach(({ verdict: v, lastZero, lastBad }, i) => {
    chunks.push(i === 0 ? '(' : ', (', { value: qq.dataset.name }, ', ', { value: qq.exchange });
    for (const c of SUMMARY_COLUMNS) {
      const x = v[c];
      chunks.push(', ', { value: Array.isArray(x) ? JSON.stringify(x) : x });
    }
    chunks.push(', ', { value: lastZero ? 1 : 0 }, ', ', { value: lastBad ? 1 : 0 }, ')');
  });
  chunks.push(` ${UPSERT_SUMMARY}`);
  return { chunks };
}

/** The summaries a report reads: the dataset's, of its exchange, of one code when asked. */
function summaryWhere(qq: QualityQuery): Sql {
  const code = qq.code !== null ? sql` AND code = ${qq.code}` : raw('');
  return sql`WHERE dataset = ${qq.dataset.name} AND exchange = ${qq.exchange}${code}`;
}

/** How many codes. */
export function summaryTotalsSql(qq: QualityQuery): Sql {
  return sql`SELECT count(*) AS n FROM mds_quality_codes ${summaryWhere(qq)}`;
}

/**
 * A page of the report from the summaries, sorted as the report sorts (nulls first ascending,
 * ties by code ascending); `stale`: the last date before `staleBefore` (null: none is stale).
 */
export function summaryPageSql(
  qq: QualityQuery,
  staleBefore: string | null,
  page: { sort: QualitySort; order: 'asc' | 'desc'; limit: number; offset: number },
): Sql {
  const dir = page.order === 'asc' ? 'ASC NULLS FIRST' : 'DESC NULLS LAST';
  return sql`SELECT ${raw(SUMMARY_COLUMNS.join(', '))},
      CASE WHEN last_date < ${staleBefore} THEN 1 ELSE 0 END AS stale
    FROM mds_quality_codes ${summaryWhere(qq)}
    ORDER BY ${raw(`${page.sort} ${dir}`)}, code ASC LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/**
 * The bar-by-bar checks of some codes (a report's page), in one pass with each bar beside the
 * previous one of its series (code and source): the bars on closed days of the calendar, with
 * zero volume, identical to the previous bar, whose close moved more than `jumpPct` % from the
 * previous close, whose pre_close is not the previous close, or that follow a factor change
 * (`factors`: their jump and pre_close are judged against the factors, quality-rules.ts
 * judgeChecks). Only those bars are returned, ordered by code, source and date.
 */
export function qualityChecksSql(
  qq: QualityQuery,
  codes: readonly string[],
  factors: Dataset | null,
  jumpPct: number,
  tolerance: number,
): Sql | null {
  const s = daily(qq.dataset);
  const b = s.bar;
  const cal = qq.calendar.calendar;
  if (!b || !cal || codes.length === 0) return null;
  const col = (f: { name: string }): string => q(f.name);
  const lagOf = (c: string): string => `lag(${c}) OVER "w"`;
  const volume = b.volume ? col(b.volume) : null;
  const same = [b.open, b.high, b.low, b.close].map((f) => `${col(f)} = ${lagOf(col(f))}`);
  if (volume) same.push(`COALESCE(${volume}, -1) = COALESCE(${lagOf(volume)}, -1)`);
  // A suspended day repeats the last close by design: no part of an identical run.
  const suspended = suspendedBar(s);
  if (suspended) same.push(`NOT (COALESCE(${suspended}, FALSE))`);
  const zero = zeroVolumeBar(s);
  const source =
    qq.dataset.sourceField && s.group.includes(qq.dataset.sourceField) ? qq.dataset.sourceField : null;
  const closed = sql`SELECT ${ident(cal.date.name)} FROM ${ident(qq.calendar.name)} WHERE ${ident(cal.exchange.name)} = ${qq.exchange} AND ${ident(cal.isOpen.name)} = 0`;
  const inner = sql`SELECT ${raw(
    [
      `${col(s.code)} AS "code"`,
      `${source ? col(source) : 'CAST(NULL AS TEXT)'} AS "source"`,
      `${col(s.date)} AS "date"`,
      `${col(b.close)} * 1.0 AS "close"`,
      `${b.preClose ? `${col(b.preClose)} * 1.0` : 'CAST(NULL AS REAL)'} AS "pre_close"`,
      `CASE WHEN ${zero ?? 'FALSE'} THEN 1 ELSE 0 END AS "zero"`,
      `CASE WHEN ${suspended ?? 'FALSE'} THEN 1 ELSE 0 END AS "susp"`,
      `${lagOf(col(s.date))} AS "p_date"`,
      `${lagOf(col(b.close))} * 1.0 AS "p_close"`,
      `CASE WHEN ${same.join(' AND ')} THEN 1 ELSE 0 END AS "same"`,
    ].join(', '),
  )}, CASE WHEN ${ident(s.date.name)} IN (${closed}) THEN 1 ELSE 0 END AS "off"
    FROM ${ident(qq.dataset.name)}${where([sql`${ident(s.code.name)} IN (${padded(codes)})`, ...conditions(qq, null)])}
    WINDOW "w" AS (PARTITION BY ${raw(s.group.map(col).join(', '))} ORDER BY ${raw(col(s.date))})`;
  const fs = factors?.factors;
  const moved =
    fs && factors
      ? sql` OR EXISTS (SELECT 1 FROM ${ident(factors.name)} AS "f" WHERE "f".${ident(fs.code.name)} = "c"."code" AND "f".${ident(fs.date.name)} > "c"."p_date" AND "f".${ident(fs.date.name)} <= "c"."date")`
      : raw('');
  return sql`SELECT "code", "source", "date", "close", "pre_close", "p_date", "p_close", "same", "off", "zero", "susp"
    FROM (${inner}) AS "c"
    WHERE "off" = 1 OR "zero" = 1 OR "susp" = 1 OR "same" = 1
      OR abs("close" / NULLIF("p_close", 0) - 1) * 100 > ${jumpPct}
      OR ("pre_close" IS NOT NULL AND "p_close" IS NOT NULL AND abs("pre_close" - "p_close") > ${tolerance})${moved}
    ORDER BY "code", "source", "date"`;
}

/** The factors of some codes (every source), oldest first. */
export function checkFactorsSql(factors: Dataset, codes: readonly string[]): Sql | null {
  const fs = factors.factors;
  if (!fs || codes.length === 0) return null;
  const src = factors.sourceField ? ident(factors.sourceField.name) : raw('CAST(NULL AS TEXT)');
  return sql`SELECT ${ident(fs.code.name)} AS "code", ${src} AS "source", ${ident(fs.date.name)} AS "date", ${ident(fs.value.name)} AS "value"
    FROM ${ident(factors.name)} WHERE ${ident(fs.code.name)} IN (${padded(codes)}) ORDER BY "code", "source", "date"`;
}
