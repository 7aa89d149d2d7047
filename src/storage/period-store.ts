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
  type StoredInterval,
} from './periods.js';
import { REV_OP } from '../model/revisions.js';
import { createTableStatements, ident, q, raw, sql, uniqueIndexName, type Dialect, type Sql } from './sql.js';
import type { Step } from './step.js';

/**
 * The stored period bars (periods.ts) kept current: the batch transaction and a revert
 * recompute the (group, interval, period) rows their changed rows fall in, from the daily rows,
 * by the on-demand pages' SQL (bars-sql.ts periodRowsSql); migrate builds them for a dataset
 * that has none or has them under another shape.
 */
function insertSql(d: Dataset, interval: StoredInterval, input: Sql, tx: Tx, upsert = false): Sql {
  const daily = d.daily;
  if (!daily) throw new Error('periods of a non-daily dataset');
  const names = [PERIOD_INTERVAL, PERIOD_KEY, ...periodColumns(daily)];
  const key = new Set(periodTable(d)?.primaryKey ?? []);
  // SQLite's upsert after INSERT … SELECT needs a WHERE in the SELECT (its parsing ambiguity).
  const conflict = upsert
    ? ` WHERE TRUE ON CONFLICT (${[...key].map(q).join(', ')}) DO UPDATE SET ${names
        .filter((c) => !key.has(c))
        .map((c) => `${q(c)} = excluded.${q(c)}`)
        .join(', ')}`
    : '';
  return sql`INSERT INTO ${ident(periodTableName(d))} (${raw(names.map(q).join(', '))}) SELECT ${raw(`'${interval}'`)}, "r".* FROM (${periodRowsSql(
    daily,
    interval,
    input,
    tx.dialect,
  )}) AS "r"${raw(conflict)}`;
}

/**
 * A stored interval's period of a date column, as SQL: its key (bars-sql.ts periodKey), its
 * first day, and the first day after it (a month's bound is `YYYY-MM-32`: after every date of
 * the month, before the next month's first).
 */
function periodBounds(
  interval: StoredInterval,
  col: string,
  dialect: Dialect,
): Record<'key' | 'start' | 'after', string> {
  const key = periodKey(interval, col, dialect);
  return interval === '1w'
    ? { key, start: key, after: dialect.weekAfter(col) }
    : { key, start: `${key} || '-01'`, after: `${key} || '-32'` };
}

/**
 * In a transaction that changed rows of `d` (after its revisions: the dataset's lock is held),
 * `changed` a relation of those rows with the dataset's columns and the revision op (alias `c`):
 * every stored period any of them falls in is computed again from the daily rows, set-wise —
 * per interval one statement recomputes every touched period (an upsert of the period rows)
 * and, only when the changes include deletions, one deletes them first (a period whose last bar
 * went has no row). However many periods a batch touches: at most five statements.
 */
export function* refreshPeriods(tx: Tx, d: Dataset, changed: Sql): Step<void> {
  const daily = d.daily;
  if (!daily?.aggregate) return;
  const table = ident(periodTableName(d));
  const group = daily.group.map((f) => q(f.name));
  const date = q(daily.date.name);
  const [deletion] = yield* tx.rows(
    sql`SELECT 1 AS x FROM ${changed} WHERE c.${ident(REV_OP)} = 'delete' LIMIT 1`,
  );
  for (const interval of STORED_INTERVALS) {
    const p = periodBounds(interval, `c.${date}`, tx.dialect);
    // The periods the changes fall in, each with its date bounds.
    const touched = sql`(SELECT DISTINCT ${raw(
      [
        ...group.map((g) => `c.${g}`),
        `${p.key} AS "period"`,
        `${p.start} AS "start"`,
        `${p.after} AS "after"`,
      ].join(', '),
    )} FROM ${changed}) AS "k"`;
    if (deletion) {
      const cols = [...group, q(PERIOD_KEY)];
      yield* tx.run(
        sql`DELETE FROM ${table} WHERE ${ident(PERIOD_INTERVAL)} = ${interval} AND (${raw(cols.join(', '))}) IN (SELECT ${raw(
          cols.map((c) => `"k".${c}`).join(', '),
        )} FROM ${touched})`,
      );
    }
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
    const input = sql`SELECT ${raw(d.rowFields.map((f) => `"t".${q(f.name)}`).join(', '))} FROM ${touched}${raw(
      tx.dialect.probeJoin(q(d.name), '"t"', uniqueIndexName(d.name), on.join(' AND ')),
    )}`;
    yield* tx.run(insertSql(d, interval, input, tx, true));
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
      yield* tx.run(insertSql(d, interval, sql`SELECT ${rowCols} FROM ${ident(d.name)}`, tx));
    }
    yield* tx.run(
      sql`INSERT INTO mds_period_state (dataset, shape) VALUES (${d.name}, ${shape})
         ON CONFLICT (dataset) DO UPDATE SET shape = excluded.shape`,
    );
  }
}
