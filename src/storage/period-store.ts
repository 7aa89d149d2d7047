import type { Catalog, Dataset } from '../catalog/catalog.js';
import { periodColumns, periodKey, periodRowsSql } from './bars-sql.js';
import type { Tx } from './db.js';
import {
  PERIOD_INTERVAL,
  PERIOD_KEY,
  STORED_INTERVALS,
  periodShape,
  periodTable,
  periodTableName,
  sumStates,
  type StoredInterval,
} from './periods.js';
import { REV_OP } from '../model/revisions.js';
import { createTableStatements, ident, q, raw, sql, uniqueIndexName, type Dialect, type Sql } from './sql.js';
import type { Step } from './step.js';

/**
 * The stored period bars (periods.ts) kept current: the batch transaction and a revert write
 * the (group, interval, period) rows their changed rows fall in, each either computed again
 * from its daily rows by the on-demand pages' SQL (bars-sql.ts periodRowsSql), or, when the only
 * change is one day after the period's last, folded from the stored row and that day as the
 * engine's aggregates would fold it (appendedColumns); migrate builds them for a dataset that
 * has none or has them under another shape.
 */

type Daily = NonNullable<Dataset['daily']>;

/** The stored columns written besides the interval: the key, periodColumns, the sums' states. */
function writtenColumns(daily: Daily, dialect: Dialect): string[] {
  const states = dialect.fold.compensatedSum ? sumStates(daily).flatMap((s) => [s.sum, s.err]) : [];
  return [PERIOD_KEY, ...periodColumns(daily), ...states];
}

/**
 * periodRowsSql with the sums' states (where kept): known for a period of one bar (the sum of
 * one value is that value, or 0 with no error term when it is NULL: sumStep's state after it),
 * else NULL, so that a day appended to it later has the period computed again.
 */
function computedRowsSql(daily: Daily, interval: StoredInterval, input: Sql, dialect: Dialect): Sql {
  const rows = periodRowsSql(daily, interval, input, dialect);
  if (!dialect.fold.compensatedSum) return rows;
  const one = (expr: string): string => `CASE WHEN "r0"."bar_count" = 1 THEN ${expr} END`;
  const states = sumStates(daily).flatMap((s) => [
    `${one(`COALESCE("r0".${q(s.field.name)}, 0.0)`)} AS ${q(s.sum)}`,
    `${one('0.0')} AS ${q(s.err)}`,
  ]);
  return sql`SELECT "r0".*, ${raw(states.join(', '))} FROM (${rows}) AS "r0"`;
}

function insertSql(d: Dataset, rows: Sql, tx: Tx, upsert: boolean, interval: StoredInterval, cte?: Sql): Sql {
  const daily = d.daily;
  if (!daily) throw new Error('periods of a non-daily dataset');
  const names = [PERIOD_INTERVAL, ...writtenColumns(daily, tx.dialect)];
  const key = new Set(periodTable(d)?.primaryKey ?? []);
  // SQLite's upsert after INSERT … SELECT needs a WHERE in the SELECT (its parsing ambiguity).
  const conflict = upsert
    ? ` WHERE TRUE ON CONFLICT (${[...key].map(q).join(', ')}) DO UPDATE SET ${names
        .filter((c) => !key.has(c))
        .map((c) => `${q(c)} = excluded.${q(c)}`)
        .join(', ')}`
    : '';
  return sql`INSERT INTO ${ident(periodTableName(d))} (${raw(names.map(q).join(', '))}) ${cte ?? raw('')}SELECT ${raw(
    `'${interval}'`,
  )}, "r".* FROM (${rows}) AS "r"${raw(conflict)}`;
}

/**
 * The first day of a stored interval's period and the first day after it, as SQL over its key
 * (bars-sql.ts periodKey: a week's Monday, a month's YYYY-MM; a month's bound is `YYYY-MM-32`:
 * after every date of the month, before the next month's first).
 */
function periodBounds(
  interval: StoredInterval,
  key: string,
  dialect: Dialect,
): Record<'start' | 'after', string> {
  return interval === '1w'
    ? { start: key, after: dialect.weekAfter(key) }
    : { start: `${key} || '-01'`, after: `${key} || '-32'` };
}

/** Values this large may overflow a sum's fold: such a period is computed again instead. */
const FOLD_BOUND = '1e300';

/**
 * "The touched period `k` (one changed row, on its date `k`.date) only appends a day to stored
 * period `p`": after its last bar, and every kept sum state and the row's summed values
 * (`k`._big: any of them not) known and far from overflowing. The changed row is then new (a row of the period's days
 * is on or before its last) and no other row of the period changed.
 */
function appends(daily: Daily, dialect: Dialect): string {
  const date = q(daily.date.name);
  const terms = [`"k"."_n" = 1`, `"p".${date} < "k".${date}`];
  if (dialect.fold.compensatedSum) {
    terms.push(`"k"."_big" = 0`);
    for (const s of sumStates(daily)) {
      terms.push(`abs("p".${q(s.sum)}) < ${FOLD_BOUND}`, `abs("p".${q(s.err)}) < ${FOLD_BOUND}`);
    }
  }
  return terms.join(' AND ');
}

/**
 * The stored row `p` with the one new day (`k`: its period and date, `t`: its row) appended, as
 * the engine's window aggregates
 * would have folded that day after the period's others (Dialect.fold): the same bits as the
 * period computed again. Columns in writtenColumns' order.
 */
function appendedColumns(daily: Daily, dialect: Dialect): string[] {
  const { compensatedSum, tieKeepsEarlier } = dialect.fold;
  const p = (c: string): string => `"p".${q(c)}`;
  const k = (c: string): string => `"k".${q(c)}`;
  // The new day's values: its row, read by its key (`t`).
  const v = (c: string): string => `"t".${q(c)}`;
  const states = new Map(sumStates(daily).map((s) => [s.field, s]));
  // A tie keeps the stored value (SQLite) or takes the new one (PostgreSQL); NULLs are skipped.
  const extreme = (f: string, op: '>' | '<'): string =>
    tieKeepsEarlier
      ? `CASE WHEN ${p(f)} IS NULL OR ${v(f)} ${op} ${p(f)} THEN ${v(f)} ELSE ${p(f)} END`
      : `CASE WHEN ${v(f)} IS NULL OR ${p(f)} ${op} ${v(f)} THEN ${p(f)} ELSE ${v(f)} END`;
  const plainSum = (f: string): string =>
    `CASE WHEN ${v(f)} IS NULL THEN ${p(f)} WHEN ${p(f)} IS NULL THEN ${v(f)} ELSE ${p(f)} + ${v(f)} END`;
  const folded: string[] = [];
  // sumStep's Kahan–Babuška–Neumaier step on (sum, err) with the new value r; the result sum + err.
  const step = (s: { sum: string; err: string }, r: string): { sum: string; err: string } => {
    const [sum, err] = [p(s.sum), p(s.err)];
    const t = `(${sum} + ${r})`;
    return {
      sum: t,
      err: `(${err} + CASE WHEN abs(${sum}) > abs(${r}) THEN (${sum} - ${t}) + ${r} ELSE (${r} - ${t}) + ${sum} END)`,
    };
  };
  const cols = [
    `"k".${q(PERIOD_KEY)}`,
    ...daily.group.map((g) => k(g.name)),
    k(daily.date.name),
    ...[...(daily.aggregate ?? [])].map(([field, how]) => {
      const f = field.name;
      const state = compensatedSum ? states.get(field) : undefined;
      if (how === 'first') return p(f);
      if (how === 'last') return v(f);
      if (how === 'max') return extreme(f, '>');
      if (how === 'min') return extreme(f, '<');
      if (!state) return plainSum(f);
      const next = step(state, v(f));
      const unless = (then: string, otherwise: string): string =>
        `CASE WHEN ${v(f)} IS NULL THEN ${then} ELSE ${otherwise} END`;
      folded.push(unless(p(state.sum), next.sum), unless(p(state.err), next.err));
      return unless(p(f), `${next.sum} + ${next.err}`);
    }),
    p('period_start'),
    `${p('bar_count')} + 1`,
    ...(daily.bar?.preClose ? [p('_pre0')] : []),
    ...folded,
  ];
  return cols;
}

/**
 * In a transaction that changed rows of `d` (after its revisions: the dataset's lock is held),
 * `changed` a relation of those rows with the dataset's columns and the revision op (alias `c`):
 * every stored period any of them falls in is written again, set-wise — per interval one
 * upsert of the period rows, and, only when the changes include deletions, one delete of those
 * periods first (a period whose last bar went has no row). However many periods a batch
 * touches: at most five statements. A period whose only change is one new day after its last
 * (the daily append) is folded from its stored row and that day (appendedColumns) without
 * reading its other days; every other one is computed again from its daily rows.
 */
export function* refreshPeriods(tx: Tx, d: Dataset, changed: Sql): Step<void> {
  const daily = d.daily;
  if (!daily?.aggregate) return;
  const dialect = tx.dialect;
  const name = q(periodTableName(d));
  const table = raw(name);
  const group = daily.group.map((f) => q(f.name));
  const date = q(daily.date.name);
  const [deletion] = yield* tx.rows(
    sql`SELECT 1 AS x FROM ${changed} WHERE c.${ident(REV_OP)} = 'delete' LIMIT 1`,
  );
  // 1 for a changed row with a summed value too large to fold (appends).
  const big = `CASE WHEN ${
    sumStates(daily)
      .map((st) => `abs(c.${q(st.field.name)}) >= ${FOLD_BOUND}`)
      .join(' OR ') || 'FALSE'
  } THEN 1 ELSE 0 END`;
  for (const interval of STORED_INTERVALS) {
    const key = periodKey(interval, `c.${date}`, dialect);
    const b = periodBounds(interval, `"k0".${q(PERIOD_KEY)}`, dialect);
    // The periods the changes fall in: how many changed rows, the last one's date, the date
    // bounds (from the key: once per period, not per row). Only the count and the date: a
    // period with one changed row has that row read by its key when folded (most have many).
    const touched = sql`SELECT "k0".*, ${raw(`${b.start} AS "start", ${b.after} AS "after"`)} FROM (SELECT ${raw(
      [
        ...group.map((g) => `c.${g}`),
        `${key} AS ${q(PERIOD_KEY)}`,
        `count(*) AS "_n"`,
        `max(c.${date}) AS ${date}`,
        ...(dialect.fold.compensatedSum ? [`max(${big}) AS "_big"`] : []),
      ].join(', '),
    )} FROM ${changed} GROUP BY ${raw([...group.map((g) => `c.${g}`), key].join(', '))}) AS "k0"`;
    const stored = (alias: string, of: string): string =>
      [
        `${alias}.${q(PERIOD_INTERVAL)} = '${interval}'`,
        `${alias}.${q(PERIOD_KEY)} = ${of}.${q(PERIOD_KEY)}`,
        ...group.map((g) => `${alias}.${g} = ${of}.${g}`),
      ].join(' AND ');
    if (deletion) {
      const cols = [...group, q(PERIOD_KEY)];
      yield* tx.run(
        sql`DELETE FROM ${table} WHERE ${ident(PERIOD_INTERVAL)} = ${interval} AND (${raw(cols.join(', '))}) IN (SELECT ${raw(
          cols.map((c) => `"k".${c}`).join(', '),
        )} FROM (${touched}) AS "k")`,
      );
    }
    // Whether each period is appended to (`_ok` = 1): one probe of its stored row by the key. A
    // batch with deletions has every period computed again (deleted first, above).
    const ok = deletion
      ? 'CAST(NULL AS INTEGER)'
      : `(SELECT 1 FROM ${name} AS "p" WHERE ${stored('"p"', '"k"')} AND ${appends(daily, dialect)} LIMIT 1)`;
    const cte = sql`WITH "k" AS MATERIALIZED (SELECT "k".*, ${raw(ok)} AS "_ok" FROM (${touched}) AS "k") `;
    // The code and the date range bound the probe of the key index; the rest of the group is
    // compared as a filter (IS TRUE keeps it out of any index condition): otherwise an index on
    // (source, date) looks as good as the key's to a planner without statistics, and reads every
    // code's rows of the period for each one.
    const [code, ...rest] = group;
    const on = [
      `"t".${code} = "k".${code}`,
      `"t".${date} >= "k"."start"`,
      `"t".${date} < "k"."after"`,
      ...rest.map((g) => `("t".${g} = "k".${g}) IS TRUE`),
    ];
    const input = sql`SELECT ${raw(d.rowFields.map((f) => `"t".${q(f.name)}`).join(', '))} FROM (SELECT * FROM "k" WHERE "_ok" IS NULL) AS "k"${raw(
      dialect.probeJoin(q(d.name), '"t"', uniqueIndexName(d.name), on.join(' AND ')),
    )}`;
    // A folded period's one changed row, read by its key: the code and the date bound the probe,
    // the rest of the group a filter (as above).
    const row = dialect.probeJoin(
      q(d.name),
      '"t"',
      uniqueIndexName(d.name),
      [
        `"t".${code} = "k".${code}`,
        `"t".${date} = "k".${date}`,
        ...rest.map((g) => `("t".${g} = "k".${g}) IS TRUE`),
      ].join(' AND '),
    );
    const appended = sql`SELECT ${raw(appendedColumns(daily, dialect).join(', '))} FROM (SELECT * FROM "k" WHERE "_ok" = 1) AS "k"${raw(
      row + dialect.probeJoin(name, '"p"', null, stored('"p"', '"k"')),
    )}`;
    const rows = sql`${computedRowsSql(daily, interval, input, dialect)} UNION ALL ${appended}`;
    yield* tx.run(insertSql(d, rows, tx, true, interval, cte));
  }
}

/**
 * migrate: every daily dataset with `aggregate` whose stored periods are missing or were
 * computed under another shape (periods.ts periodShape) gets them computed from all its rows.
 */
export function* buildMissingPeriods(tx: Tx, catalog: Catalog): Step<void> {
  for (const d of catalog.datasets) {
    const shape = periodShape(d);
    if (shape === null) continue;
    const [state] = yield* tx.rows(sql`SELECT shape FROM mds_period_state WHERE dataset = ${d.name}`);
    if (state && String(state.shape) === shape) continue;
    const spec = periodTable(d);
    if (!spec) continue;
    // Created afresh: a key or layout declared since they were built applies too.
    yield* tx.exec([`DROP TABLE IF EXISTS ${q(spec.name)}`, ...createTableStatements(spec, tx.dialect)]);
    const rowCols = raw(d.rowFields.map((f) => q(f.name)).join(', '));
    for (const interval of STORED_INTERVALS) {
      const rows = computedRowsSql(
        d.daily as Daily,
        interval,
        sql`SELECT ${rowCols} FROM ${ident(d.name)}`,
        tx.dialect,
      );
      yield* tx.run(insertSql(d, rows, tx, false, interval));
    }
    yield* tx.run(
      sql`INSERT INTO mds_period_state (dataset, shape) VALUES (${d.name}, ${shape})
         ON CONFLICT (dataset) DO UPDATE SET shape = excluded.shape`,
    );
  }
}
