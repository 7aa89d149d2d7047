import type { Catalog, Dataset } from '../catalog/catalog.js';
import { periodColumns, periodRowsSql } from './bars-sql.js';
import type { Tx } from './db.js';
import {
  PERIOD_INTERVAL,
  PERIOD_KEY,
  PERIODS,
  STORED_INTERVALS,
  periodShape,
  periodTable,
  periodTableName,
  type StoredInterval,
} from './periods.js';
import { createTableStatements, ident, join, q, raw, sql, uniqueIndexName, type Sql } from './sql.js';
import type { Step } from './step.js';
import type { Value } from './store.js';

/**
 * The stored period bars (periods.ts) kept current: the batch transaction and a revert
 * recompute the (group, interval, period) rows their changed rows fall in, from the daily rows,
 * by the on-demand pages' SQL (bars-sql.ts periodRowsSql); migrate builds them for a dataset
 * that has none or has them under another shape.
 */

/** Ranges of consecutive periods per statement (bounded parameter lists). */
const CHUNK = 100;

const asValue = (v: unknown): Value =>
  v === null || v === undefined ? null : typeof v === 'number' ? v : String(v);

/** Consecutive periods of one group: keys `first`…`last`. */
interface Range {
  group: Value[];
  first: string;
  last: string;
}

function insertSql(d: Dataset, interval: StoredInterval, input: Sql, tx: Tx): Sql {
  const daily = d.daily;
  if (!daily) throw new Error('periods of a non-daily dataset');
  const cols = [PERIOD_INTERVAL, PERIOD_KEY, ...periodColumns(daily)].map(q).join(', ');
  return sql`INSERT INTO ${ident(periodTableName(d))} (${raw(cols)}) SELECT ${raw(`'${interval}'`)}, "r".* FROM (${periodRowsSql(
    daily,
    interval,
    input,
    tx.dialect,
  )}) AS "r"`;
}

/**
 * In a transaction that changed rows of `d` (after its revisions: the dataset's lock is held),
 * `changed` a relation of those rows with the dataset's columns: every stored period any of them
 * falls in is deleted and computed again from the daily rows (none when its last bar went).
 */
export function* refreshPeriods(tx: Tx, d: Dataset, changed: Sql): Step<void> {
  const daily = d.daily;
  if (!daily?.aggregate) return;
  const keyCols = [...daily.group, daily.date];
  const touched = yield* tx.rows(
    sql`SELECT DISTINCT ${raw(keyCols.map((f) => q(f.name)).join(', '))} FROM ${changed}`,
  );
  if (touched.length === 0) return;
  const table = ident(periodTableName(d));
  for (const interval of STORED_INTERVALS) {
    const ranges = periodRanges(
      interval,
      daily.group.length,
      touched.map((r) => keyCols.map((f) => asValue(r[f.name]))),
    );
    const m = PERIODS[interval];
    for (let i = 0; i < ranges.length; i += CHUNK) {
      const chunk = ranges.slice(i, i + CHUNK);
      // The ranges as a VALUES list joined to the tables: each range probes the key index (an
      // OR of ranges sharing a source was planned as one scan of every code's rows in the span).
      const g = daily.group.length;
      const k = (n: number): string => `"k"."column${n}"`;
      const values = sql`(VALUES ${join(
        chunk.map(
          (r) =>
            sql`(${join([
              ...r.group.map((v) => sql`${v}`),
              sql`${r.first}`,
              sql`${r.last}`,
              sql`${m.start(r.first)}`,
              sql`${m.start(m.next(r.last))}`,
            ])})`,
        ),
      )}) AS "k"`;
      const ofGroup = (alias: string): string =>
        daily.group.map((f, j) => `${alias}.${q(f.name)} = ${k(j + 1)}`).join(' AND ');
      const pk = [PERIOD_INTERVAL, ...daily.group.map((f) => f.name), PERIOD_KEY].map(q);
      yield* tx.run(
        sql`DELETE FROM ${table} WHERE (${raw(pk.join(', '))}) IN (SELECT ${raw(
          pk.map((c) => `"p".${c}`).join(', '),
        )} FROM ${values} JOIN ${table} AS "p" ON "p".${ident(PERIOD_INTERVAL)} = ${interval} AND ${raw(
          `${ofGroup('"p"')} AND "p".${q(PERIOD_KEY)} >= ${k(g + 1)} AND "p".${q(PERIOD_KEY)} <= ${k(g + 2)}`,
        )})`,
      );
      const date = `"t".${q(daily.date.name)}`;
      const input = sql`SELECT ${raw(d.rowFields.map((f) => `"t".${q(f.name)}`).join(', '))} FROM ${values} JOIN ${ident(
        d.name,
      )} AS "t"${raw(tx.dialect.byIndex(uniqueIndexName(d.name)))} ON ${raw(`${ofGroup('"t"')} AND ${date} >= ${k(g + 3)} AND ${date} < ${k(g + 4)}`)}`;
      yield* tx.run(insertSql(d, interval, input, tx));
    }
  }
}

/**
 * The periods of `interval` that rows (group values, then the date) fall in, as ranges of
 * consecutive periods per group.
 */
function periodRanges(interval: StoredInterval, groupSize: number, rows: Value[][]): Range[] {
  const m = PERIODS[interval];
  const byGroup = new Map<string, { group: Value[]; keys: Set<string> }>();
  for (const r of rows) {
    const group = r.slice(0, groupSize);
    const id = JSON.stringify(group);
    const g = byGroup.get(id) ?? { group, keys: new Set<string>() };
    g.keys.add(m.key(String(r[groupSize])));
    byGroup.set(id, g);
  }
  const out: Range[] = [];
  for (const { group, keys } of byGroup.values()) {
    let cur: Range | null = null;
    for (const k of [...keys].sort()) {
      if (cur && m.next(cur.last) === k) cur.last = k;
      else {
        cur = { group, first: k, last: k };
        out.push(cur);
      }
    }
  }
  return out;
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
