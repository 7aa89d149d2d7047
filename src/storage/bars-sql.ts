import type { Field } from '../catalog/catalog.js';
import type { Aggregation } from '../catalog/types.js';
import {
  countSql,
  ident,
  join,
  keysetPredicate,
  orderTerm,
  planSource,
  planTable,
  q,
  raw,
  selectParts,
  sql,
  validAt,
  whereConditions,
  type Dialect,
  type SelectParts,
  type Sql,
} from './sql.js';
import {
  PERIOD_INTERVAL,
  PERIOD_KEY,
  PERIODS,
  isStoredInterval,
  periodTableName,
  type StoredInterval,
} from './periods.js';
import { dayAfter, dayBefore, isCalendarDate } from '../model/days.js';
import {
  ANCHOR_END,
  allowedValues,
  mergedSource as mergedSourceOf,
  type BarsPlan,
  type QueryPlan,
} from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import {
  adjustedChange,
  adjustedPrice,
  anchorFactor,
  factorOn,
  factorSource,
  pagesBeforeAdjusting,
  recomputedChange,
  type Arithmetic,
  type FactorLookup,
} from '../model/adjustment.js';

/**
 * Adjusted and resampled daily bars (`adjust`, `interval`) as one SELECT over a derived table
 * whose columns carry the dataset's own column names, so the outer page (order, keyset, limit)
 * and the count are the dataset's usual ones. Everything here is read from the catalog's
 * `daily` declaration: which fields are prices, how each field aggregates. Plain SQL that both
 * dialects run alike (window functions, correlated subqueries), except two Dialect hooks:
 * `weekStart` and `subqueryFence`.
 */

/** The period of a date column: the key every bar of one week, month, quarter or year shares. */
export function periodKey(
  interval: NonNullable<BarsPlan['interval']>,
  col: string,
  dialect: Dialect,
): string {
  switch (interval) {
    case '1w':
      return dialect.weekStart(col);
    case '1M':
      return `substr(${col}, 1, 7)`;
    case '1Q':
      return `substr(${col}, 1, 4) || '-Q' || ((CAST(substr(${col}, 6, 2) AS INTEGER) + 2) / 3)`;
    case '1Y':
      return `substr(${col}, 1, 4)`;
  }
}

/** SQL text for adjustment.ts's arithmetic: each operation parenthesised, so it nests as written. */
const SQL_ARITHMETIC: Arithmetic<string> = {
  times: (a, b) => `(${a} * ${b})`,
  over: (a, b) => `(${a} / ${b})`,
  minus: (a, b) => `(${a} - ${b})`,
  ifNull: (test, then, otherwise) => `CASE WHEN ${test} IS NULL THEN ${then} ELSE ${otherwise} END`,
  // NULL = NULL is not true: a null operand takes `otherwise`, as ifEqual says.
  ifEqual: (a, b, then, otherwise) => `CASE WHEN ${a} = ${b} THEN ${then} ELSE ${otherwise} END`,
};

/** The factor table of an adjusted plan, as known at its `as_of` (docs/point-in-time.md), aliased `alias`. */
function factorRows(plan: QueryPlan, alias: string): { table: Sql; known: Sql } {
  const adjust = plan.bars?.adjust;
  if (!adjust) throw new Error('factorRows without adjust');
  return {
    table: planSource({ ...plan, dataset: adjust.factors }),
    known:
      plan.asOf !== undefined ? sql` AND ${validAt(`"${alias}".`, adjust.factors.name, plan.asOf)}` : raw(''),
  };
}

/**
 * The factor source of bar `"t"` of code `of` (adjustment.ts factorSource): the constant given,
 * the bar's source when the factors have it for the code, the code's only factor source, NULL.
 */
function factorSourceOf(plan: QueryPlan, of: Sql): Sql {
  const adjust = plan.bars?.adjust;
  const src = adjust?.factors.sourceField;
  if (!adjust || !src) throw new Error('factorSourceOf without factor sources');
  const { table, known } = factorRows(plan, 'y');
  const ofCode = sql`"y".${ident(adjust.factors.factors?.code.name ?? '')} = ${of}${known}`;
  const ySource = sql`"y".${ident(src.name)}`;
  const own = plan.dataset.sourceField;
  const barSource = own ? sql`"t".${ident(own.name)}` : null;
  return factorSource<Sql, Sql>({
    given: adjust.source === null ? null : sql`${adjust.source}`,
    own: barSource,
    ownHasFactors: (own) =>
      sql`EXISTS (SELECT 1 FROM ${table} AS "y" WHERE ${ofCode} AND ${ySource} = ${own})`,
    // On the stored factors: the least source if the greatest is the same one, two index seeks on
    // (code, source), where a count of distinct sources read every factor row of the code for
    // every bar (one factor row per day: bars × days). Over the history's union SQLite seeks
    // neither, and the ordered form cost far more than the count.
    only: () => {
      if (plan.asOf !== undefined || plan.trail)
        return sql`(SELECT CASE WHEN count(DISTINCT ${ySource}) = 1 THEN min(${ySource}) END FROM ${table} AS "y" WHERE ${ofCode})`;
      const z = factorRows(plan, 'z');
      const zSource = sql`"z".${ident(src.name)}`;
      const greatest = sql`(SELECT ${zSource} FROM ${z.table} AS "z" WHERE "z".${ident(
        adjust.factors.factors?.code.name ?? '',
      )} = ${of}${z.known} ORDER BY ${zSource} DESC LIMIT 1)`;
      return sql`(SELECT CASE WHEN ${ySource} = ${greatest} THEN ${ySource} END FROM ${table} AS "y" WHERE ${ofCode} ORDER BY ${ySource} ASC LIMIT 1)`;
    },
    when: (test, then, otherwise) => sql`CASE WHEN ${test} THEN ${then} ELSE ${otherwise} END`,
  });
}

/**
 * `adjust_anchor=end`: the date of the last bar of bar `"t"`'s series among the rows the plan's
 * filters select (not only its page): its code and source, or its code alone when
 * `source_priority` merges the sources into one series.
 */
function lastBarDate(plan: QueryPlan, dialect: Dialect): Sql {
  const daily = plan.dataset.daily;
  if (!daily) throw new Error('lastBarDate without daily');
  const conditions = whereConditions(plan, dialect);
  const own = mergedSource(plan) ? null : plan.dataset.sourceField;
  const same = [daily.code, ...(own ? [own] : [])].map((f) => sql`${ident(f.name)} = "t".${ident(f.name)}`);
  return sql`(SELECT max(${ident(daily.date.name)}) FROM ${planTable(plan)} WHERE ${join(
    conditions ? [conditions, ...same] : same,
    ' AND ',
  )})`;
}

/**
 * A code's factors as subqueries (adjustment.ts FactorLookup). `code`: the bar's code, or the
 * one code the plan filters on (each lookup is then the same for every row: evaluated once per
 * statement, not once per row).
 */
function factorLookup(plan: QueryPlan, code: Sql | null): FactorLookup<Sql, Sql> {
  const adjust = plan.bars?.adjust;
  const daily = plan.dataset.daily;
  if (!adjust || !daily) throw new Error('factorLookup without adjust');
  const fs = adjust.factors.factors;
  if (!fs) throw new Error(`${adjust.factors.name} declares no factors`);
  const src = adjust.factors.sourceField;
  const { table, known } = factorRows(plan, 'x');
  const of = code ?? sql`"t".${ident(daily.code.name)}`;
  // The bar's factor source, computed once per bar below it ("_s", barsSelectParts): evaluated
  // here, SQLite re-evaluated it for every factor row a lookup scanned (quadratic in a code's
  // factor rows over the history's union, with one factor row per day).
  const source = src ? sql` AND "x".${ident(src.name)} = "t"."_s"` : raw('');
  const date = ident(fs.date.name);
  const one = (cond: Sql, dir: 'ASC' | 'DESC'): Sql =>
    sql`(SELECT "x".${ident(fs.value.name)} FROM ${table} AS "x" WHERE "x".${ident(
      fs.code.name,
    )} = ${of}${source}${known}${cond} ORDER BY "x".${date} ${raw(dir)} LIMIT 1)`;
  return {
    onOrBefore: (d) => one(sql` AND "x".${date} <= ${d}`, 'DESC'),
    first: () => one(raw(''), 'ASC'),
    last: () => one(raw(''), 'DESC'),
    coalesce: (a, b) => sql`COALESCE(${a}, ${b})`,
  };
}

/**
 * Each row field of the adjusted rows, over a subquery holding the stored columns plus `_f`
 * (the bar's factor) and `_a` (the anchor's, qfq): adjustment.ts's adjustedPrice and
 * adjustedChange as SQL. A row without a factor keeps its stored values.
 */
function adjustedColumns(plan: QueryPlan): string[] {
  const daily = plan.dataset.daily;
  const adjust = plan.bars?.adjust;
  if (!daily?.adjust || !adjust) throw new Error('adjustedColumns without adjust');
  const prices = new Set(daily.adjust.prices);
  const change = recomputedChange(plan);
  const m = SQL_ARITHMETIC;
  return plan.dataset.rowFields.map((f) => {
    const col = q(f.name);
    if (prices.has(f)) return `${adjustedPrice(m, adjust.method, col, '"_f"', '"_a"')} AS ${col}`;
    if (change?.change === f) {
      const [close, pre] = [q(change.close.name), q(change.pre.name)];
      return `${adjustedChange(m, adjust.method, col, close, pre, '"_f"', '"_a"')} AS ${col}`;
    }
    return col;
  });
}

const WINDOW_FN: Record<Aggregation, (col: string) => string> = {
  first: (c) => `first_value(${c}) OVER "w"`,
  // The period's row is its last bar (`_next` IS NULL below), so its own value is the last one.
  last: (c) => c,
  max: (c) => `max(${c}) OVER "w"`,
  min: (c) => `min(${c}) OVER "w"`,
  sum: (c) => `sum(${c}) OVER "w"`,
};

type Daily = NonNullable<QueryPlan['dataset']['daily']>;
type Interval = NonNullable<BarsPlan['interval']>;

/**
 * The columns of one period's row before the outer step, in order: the group, the last bar's
 * date, each aggregated field, `period_start`, `bar_count` and `_pre0` (the first bar's
 * pre-close). The stored periods (periods.ts) keep exactly these.
 */
export function periodColumns(daily: Daily): string[] {
  if (!daily.aggregate) throw new Error('periodColumns without aggregate');
  return [
    ...daily.group.map((f) => f.name),
    daily.date.name,
    ...[...daily.aggregate.keys()].map((f) => f.name),
    'period_start',
    'bar_count',
    ...(daily.bar?.preClose ? ['_pre0'] : []),
  ];
}

/**
 * Every daily row of `input` (the dataset's columns) with its period's aggregates over the
 * window "w" (group and period); the period's row is the one whose `_next` is NULL. The one
 * aggregation both the on-demand pages and the stored periods run, so they hold the same values
 * bit for bit on both backends (same rows, same order, same functions).
 */
function periodWindow(
  daily: Daily,
  interval: Interval,
  input: Sql,
  dialect: Dialect,
  merged: Field | null = null,
): Sql {
  if (!daily.aggregate || !daily.bar) throw new Error('resampled without aggregate');
  const bar = daily.bar;
  const group = groupColumns(daily, merged);
  const date = q(daily.date.name);
  const aggregated = [...daily.aggregate].map(([f, how]) => `${WINDOW_FN[how](q(f.name))} AS ${q(f.name)}`);
  // The period's source, when its bars may come from several: its last bar's, as its close.
  if (merged) aggregated.push(`${WINDOW_FN.last(q(merged.name))} AS ${q(merged.name)}`);
  // The period's row is the bar with no next one in "w" (lead() ignores the frame): every
  // function shares the one window, so the bars are sorted once (a row_number() in descending
  // date order sorted them a second time: about 30 % of a monthly page's SQL).
  const firstPre = bar.preClose ? [`first_value(${q(bar.preClose.name)}) OVER "w" AS "_pre0"`] : [];
  return sql`SELECT ${raw(
    `${group}, ${date}, ${aggregated.join(', ')}, min(${date}) OVER "w" AS "period_start", ` +
      `count(*) OVER "w" AS "bar_count", ${[...firstPre, `lead(${date}) OVER "w" AS "_next"`].join(', ')}`,
  )} FROM (SELECT "x0".*, ${raw(periodKey(interval, `"x0".${date}`, dialect))} AS "_p" FROM (${input}) AS "x0") AS "x" ${raw(
    `WINDOW "w" AS (PARTITION BY ${group}, "_p" ORDER BY ${date} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)`,
  )}`;
}

/**
 * The stored periods' rows (periods.ts) of the daily rows `input`: the period key, then
 * periodColumns, computed by the same window as the on-demand pages.
 */
export function periodRowsSql(daily: Daily, interval: Interval, input: Sql, dialect: Dialect): Sql {
  const cols = periodColumns(daily).map(q).join(', ');
  return sql`SELECT ${raw(`${periodKey(interval, q(daily.date.name), dialect)} AS ${q(PERIOD_KEY)}, ${cols}`)} FROM (${periodWindow(
    daily,
    interval,
    input,
    dialect,
  )}) AS "e" WHERE "_next" IS NULL`;
}

/**
 * The answer's rows from period rows (`periods`, periodColumns plus `_next`, filtered by
 * `where`): pre-close = the previous period's close (the first bar's pre-close for the first
 * period), change and percent change recomputed from them.
 */
function outerStep(daily: Daily, periods: Sql, where: string, merged: Field | null = null): Sql {
  const bar = daily.bar;
  if (!bar) throw new Error('resampled without bars');
  const group = groupColumns(daily, merged);
  const date = q(daily.date.name);
  const close = q(bar.close.name);
  const prev = `COALESCE(lag(${close}) OVER (PARTITION BY ${group} ORDER BY ${date}), "_pre0")`;
  const derived = new Map<Field, string>();
  if (bar.preClose) {
    derived.set(bar.preClose, prev);
    if (bar.change) derived.set(bar.change, `${close} - ${prev}`);
    if (bar.pctChg) derived.set(bar.pctChg, `(${close} - ${prev}) / NULLIF(${prev}, 0) * 100`);
  } else {
    for (const f of [bar.change, bar.pctChg]) if (f) derived.set(f, 'NULL');
  }
  const cols = daily.resampledFields.map((f) => {
    const expr = derived.get(f);
    return expr === undefined ? q(f.name) : `${expr} AS ${q(f.name)}`;
  });
  return sql`SELECT ${raw(cols.join(', '))} FROM (${periods}) AS "r"${raw(where)}`;
}

/**
 * Rows of `input` (the dataset's columns) grouped per code, the rest of the key but the date,
 * and period: each field by its declared aggregation, the date the last bar's, `period_start`
 * the first bar's, `bar_count`, and pre-close = the previous period's close (the first bar's
 * pre-close for the first period), change and percent change recomputed from them.
 */
function resampled(plan: QueryPlan, input: Sql, dialect: Dialect): Sql {
  const daily = plan.dataset.daily;
  const interval = plan.bars?.interval;
  if (!daily?.aggregate || !interval) throw new Error('resampled without aggregate');
  const merged = mergedSource(plan);
  return outerStep(
    daily,
    periodWindow(daily, interval, input, dialect, merged),
    ' WHERE "_next" IS NULL',
    merged,
  );
}

/**
 * With source precedence (`source_priority`) a code's rows are one series, each day's from the
 * first listed source that has it: the source field groups no periods (the period's is its last
 * bar's). null: every source is its own series.
 */
function mergedSource(plan: QueryPlan): Field | null {
  return mergedSourceOf(plan.where);
}

/** The columns a period groups by: the key but the date (and the merged source). */
function groupColumns(daily: Daily, merged: Field | null): string {
  return daily.group
    .filter((f) => f !== merged)
    .map((f) => q(f.name))
    .join(', ');
}

/**
 * A resampled plan answerable from the stored periods (periods.ts): interval 1w or 1M, filtered
 * by one code and a date range only (no adjust, no as_of). `low`…`high` (high exclusive, null:
 * unbounded) are the keys of the periods lying wholly inside the range, read from the stored
 * periods; `edges` the date ranges [from, to] of the partial periods at either end, computed
 * from the daily rows. null: the plan keeps the on-demand path.
 */
interface StoredWindow {
  interval: StoredInterval;
  code: Value;
  low: string | null;
  high: string | null;
  edges: { from: string; to: string }[];
}

function storedWindow(plan: QueryPlan): StoredWindow | null {
  const bars = plan.bars;
  const daily = plan.dataset.daily;
  const interval = bars?.interval ?? null;
  if (!bars || !daily?.aggregate || !isStoredInterval(interval) || bars.computed) return null;
  if (bars.adjust || plan.asOf !== undefined || plan.trail || plan.distinct) return null;
  let code: Value | undefined;
  let from: string | undefined;
  let to: string | undefined;
  for (const c of plan.where) {
    if (c.field === daily.code && c.op === 'eq' && code === undefined && c.value !== null) code = c.value;
    else if (c.field === daily.date && c.op === 'gte' && from === undefined && isCalendarDate(c.value))
      from = c.value;
    else if (c.field === daily.date && c.op === 'lte' && to === undefined && isCalendarDate(c.value))
      to = c.value;
    else return null;
  }
  if (code === undefined) return null;
  const m = PERIODS[interval];
  // The first period starting on or after `from`; the first one ending after `to` (exclusive).
  const low = from === undefined ? null : m.start(m.key(from)) === from ? m.key(from) : m.next(m.key(from));
  const high = to === undefined ? null : m.key(dayAfter(to));
  if (low !== null && high !== null && low >= high) return null;
  const edges: StoredWindow['edges'] = [];
  if (from !== undefined && low !== null && from < m.start(low)) {
    edges.push({ from, to: dayBefore(m.start(low)) });
  }
  if (to !== undefined && high !== null && m.start(high) <= to) edges.push({ from: m.start(high), to });
  return { interval, code, low, high, edges };
}

/** The stored periods of the window's code wholly inside its range. */
function storedPeriodsWhere(plan: QueryPlan, w: StoredWindow): Sql {
  const daily = plan.dataset.daily;
  if (!daily) throw new Error('stored periods of a non-daily dataset');
  const key = ident(PERIOD_KEY);
  return sql`${ident(PERIOD_INTERVAL)} = ${w.interval} AND ${ident(daily.code.name)} = ${w.code}${
    w.low === null ? raw('') : sql` AND ${key} >= ${w.low}`
  }${w.high === null ? raw('') : sql` AND ${key} < ${w.high}`}`;
}

/** The window's daily rows of the edge periods (null: none). */
function edgeRowsWhere(plan: QueryPlan, w: StoredWindow): Sql | null {
  const daily = plan.dataset.daily;
  if (!daily || w.edges.length === 0) return null;
  const date = ident(daily.date.name);
  const ranges = w.edges.map((e) => sql`(${date} >= ${e.from} AND ${date} <= ${e.to})`);
  return sql`${ident(daily.code.name)} = ${w.code} AND (${join(ranges, ' OR ')})`;
}

/**
 * The periods of a stored window: the stored ones UNION ALL the edge ones computed from their
 * daily rows by the same window (each edge period's rows are exactly those the on-demand page
 * reads for it), then the on-demand pages' outer step.
 */
function storedResampled(plan: QueryPlan, w: StoredWindow, dialect: Dialect): Sql {
  const daily = plan.dataset.daily;
  if (!daily) throw new Error('stored periods of a non-daily dataset');
  const cols = periodColumns(daily).map(q).join(', ');
  const stored = sql`SELECT ${raw(cols)}, NULL AS "_next" FROM ${ident(periodTableName(plan.dataset))} WHERE ${storedPeriodsWhere(
    plan,
    w,
  )}`;
  const edges = edgeRowsWhere(plan, w);
  if (!edges) return outerStep(daily, stored, '');
  const rowCols = raw(plan.dataset.rowFields.map((f) => q(f.name)).join(', '));
  const input = sql`SELECT ${rowCols} FROM ${ident(plan.dataset.name)} WHERE ${edges}`;
  const edge = sql`SELECT ${raw(cols)}, "_next" FROM (${periodWindow(daily, w.interval, input, dialect)}) AS "e" WHERE "_next" IS NULL`;
  return outerStep(daily, sql`${stored} UNION ALL ${edge}`, '');
}

/**
 * A bars plan's SELECT: the stored rows, filtered (and paged first when the order depends on no
 * adjusted value), wrapped into a derived table with the dataset's column names by adjusting
 * and resampling; the outer SELECT orders, continues after the cursor and pages it.
 */
function barsSelectParts(plan: QueryPlan, dialect: Dialect, paged: boolean): SelectParts {
  const bars = plan.bars;
  if (!bars) throw new Error('barsSelectParts without bars');
  const orderBy = raw(plan.orderBy.map(orderTerm).join(', '));
  const page = paged ? sql` LIMIT ${plan.limit} OFFSET ${plan.offset}` : null;
  const inner = pagesBeforeAdjusting(plan);
  const conditions = whereConditions(plan, dialect);
  const keyset = keysetPredicate(plan);
  const cols = raw(plan.dataset.rowFields.map((f) => q(f.name)).join(', '));
  let source: Sql;
  if (inner) {
    const where = conditions && keyset ? sql`${conditions} AND (${keyset})` : (conditions ?? keyset);
    source = sql`SELECT ${cols} FROM ${planTable(plan)}${where ? sql` WHERE ${where}` : raw('')} ORDER BY ${orderBy}${page ?? raw('')}`;
  } else {
    source = sql`SELECT ${cols} FROM ${planTable(plan)}${conditions ? sql` WHERE ${conditions}` : raw('')}`;
  }
  const daily = plan.dataset.daily;
  if (bars.adjust && daily) {
    const tcols = raw(plan.dataset.rowFields.map((f) => `"t".${q(f.name)}`).join(', '));
    const f = factorOn(factorLookup(plan, null), raw(`"t".${q(daily.date.name)}`));
    const anchor = bars.adjust.anchor;
    const codes = allowedValues(plan.where, daily.code);
    const code = codes?.length === 1 && codes[0] != null ? sql`${codes[0]}` : null;
    const anchorDate =
      anchor === null ? null : anchor === ANCHOR_END ? lastBarDate(plan, dialect) : sql`${anchor}`;
    const a =
      bars.adjust.method === 'qfq'
        ? sql`, ${anchorFactor(factorLookup(plan, code), anchorDate)} AS "_a"`
        : raw('');
    const fence = raw(dialect.subqueryFence);
    const sourced = bars.adjust.factors.sourceField
      ? sql`SELECT ${tcols}, ${factorSourceOf(plan, raw(`"t".${q(daily.code.name)}`))} AS "_s" FROM (${source}) AS "t"${fence}`
      : source;
    const withFactors = sql`SELECT ${tcols}, ${f} AS "_f"${a} FROM (${sourced}) AS "t"${fence}`;
    source = sql`SELECT ${raw(adjustedColumns(plan).join(', '))} FROM (${withFactors}) AS "m"`;
  }
  const stored = storedWindow(plan);
  if (stored) source = storedResampled(plan, stored, dialect);
  else if (bars.interval) source = resampled(plan, source, dialect);
  return {
    columns: plan.select.map((f) =>
      raw(f.name === f.apiName ? q(f.name) : `${q(f.name)} AS ${q(f.apiName)}`),
    ),
    from: sql`(${source}) AS "b"`,
    where: inner ? null : keyset,
    orderBy,
    page: inner ? null : page,
  };
}

/** Any plan's SELECT: the dataset's own (sql.ts) or, for `adjust`/`interval`, the bars one. */
export function planSelectParts(plan: QueryPlan, dialect: Dialect, paged = true, json = false): SelectParts {
  return plan.bars ? barsSelectParts(plan, dialect, paged) : selectParts(plan, dialect, paged, json);
}

/**
 * Any plan's count: a resampled plan counts its periods (its exact `meta.total`); an adjusted
 * one has as many rows as the stored ones.
 */
export function planCountSql(plan: QueryPlan, dialect: Dialect): Sql {
  const daily = plan.dataset.daily;
  const interval = plan.bars?.interval;
  if (!daily || !interval) return countSql(plan, dialect);
  const group = groupColumns(daily, mergedSource(plan));
  const stored = storedWindow(plan);
  if (stored) {
    // The stored periods counted through their key, plus the edge periods' distinct keys.
    const whole = sql`SELECT count(*) FROM ${ident(periodTableName(plan.dataset))} WHERE ${storedPeriodsWhere(plan, stored)}`;
    const edges = edgeRowsWhere(plan, stored);
    if (!edges) return sql`SELECT (${whole}) AS n`;
    return sql`SELECT (${whole}) + (SELECT count(*) FROM (SELECT DISTINCT ${raw(
      `${group}, ${periodKey(interval, q(daily.date.name), dialect)}`,
    )} AS "_p" FROM ${ident(plan.dataset.name)} WHERE ${edges}) AS "g") AS n`;
  }
  const where = whereConditions(plan, dialect);
  return sql`SELECT count(*) AS n FROM (SELECT DISTINCT ${raw(`${group}, ${periodKey(interval, q(daily.date.name), dialect)}`)} AS "_p" FROM ${planTable(
    plan,
  )}${where ? sql` WHERE ${where}` : raw('')}) AS "g"`;
}
