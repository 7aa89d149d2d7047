import type { FieldType } from '../catalog/types.js';
import type { Dataset, Field } from '../catalog/catalog.js';
import type { Condition, QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import type { TableSpec } from './schema.js';
import { ROW_JSON_COLUMN } from '../model/row-json.js';
import { revisionTable, revisionTableName } from './revision-schema.js';
import { boundedRead } from './bounded-read.js';
import { REV_BATCH, REV_FROM, REV_OP, REV_TO } from '../model/revisions.js';

/**
 * The shared statement builder. Statements are written once, as fragments (`sql` below), and
 * compiled by a dialect: every difference between SQLite and PostgreSQL is a small hook of
 * `Dialect` (placeholder, column types, NULL-safe comparison, substring test, page-plus-count).
 * Identifiers are always quoted and come only from the catalog or this folder; values are always
 * bound parameters.
 */

/** A piece of SQL text with its bound values, compiled to a dialect's placeholders by `compile`. */
export interface Sql {
  readonly chunks: readonly (string | { readonly value: Value })[];
}

/** A compiled statement. */
export interface Statement {
  sql: string;
  params: Value[];
}

const isSql = (x: Value | Sql): x is Sql => typeof x === 'object' && x !== null;

/** sql`… ${value} … ${fragment} …`: values become parameters, fragments are spliced. */
export function sql(strings: TemplateStringsArray, ...args: (Value | Sql)[]): Sql {
  const chunks: Sql['chunks'][number][] = [];
  strings.forEach((s, i) => {
    if (s) chunks.push(s);
    if (i >= args.length) return;
    const a = args[i] as Value | Sql;
    if (isSql(a)) chunks.push(...a.chunks);
    else chunks.push({ value: a });
  });
  return { chunks };
}

/** Trusted SQL text (built in this folder from catalog names). */
export const raw = (text: string): Sql => ({ chunks: [text] });

export function q(id: string): string {
  // Identifiers come from the catalog (checked against /^[a-z][a-z0-9_]*$/ at boot); quoting
  // keeps words such as "window" or "change" usable as column names.
  return `"${id}"`;
}

/** A quoted identifier as a fragment. */
export const ident = (id: string): Sql => raw(q(id));

export function join(items: readonly Sql[], sep = ', '): Sql {
  const chunks: Sql['chunks'][number][] = [];
  items.forEach((it, i) => {
    if (i > 0) chunks.push(sep);
    chunks.push(...it.chunks);
  });
  return { chunks };
}

export function compile(s: Sql, dialect: Dialect): Statement {
  let text = '';
  const params: Value[] = [];
  for (const c of s.chunks) {
    if (typeof c === 'string') text += c;
    else {
      params.push(c.value);
      text += dialect.param(params.length);
    }
  }
  return { sql: text, params };
}

/** A SELECT in parts, so a dialect can add to it (the page's total) without editing SQL text. */
export interface SelectParts {
  columns: Sql[];
  from: Sql;
  where: Sql | null;
  orderBy: Sql;
  /** LIMIT … OFFSET …, or null for every row. */
  page: Sql | null;
  /** SELECT DISTINCT. */
  distinct?: boolean;
}

export function renderSelect(p: SelectParts): Sql {
  return sql`SELECT ${raw(p.distinct ? 'DISTINCT ' : '')}${join(p.columns)} FROM ${p.from}${p.where ? sql` WHERE ${p.where}` : raw('')} ORDER BY ${p.orderBy}${p.page ?? raw('')}`;
}

/** The name of the total column a dialect's page-plus-count adds ("__total": no catalog field starts with `_`). */
export const TOTAL_COLUMN = '__total';

/** Every difference between the SQL dialects. */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  columnType(t: FieldType): string;
  /** Bound parameter number n (1-based). */
  param(n: number): string;
  /** "a differs from b" treating NULL as a value. */
  differs(a: string, b: string): string;
  /** Table options appended after the column list. */
  tableSuffix: string;
  /** The table option that stores rows in primary key order (TableSpec.clustered); '' if none. */
  clustered: string;
  /**
   * Statements that leave room on each page for updated rows (TableSpec.fillfactor), run on every
   * migrate so a table created before applies them too (its new pages); none where the engine
   * has no such option.
   */
  fillfactor(table: string, percent: number): string[];
  /** "col contains needle" as a plain substring test (needle already lower-cased). */
  contains(col: Sql, needle: Sql): Sql;
  /** Suffix of a nullable index column, so the index serves ORDER BY's NULLS FIRST (asc). */
  indexNullsFirst: string;
  /**
   * The page and its total in ONE statement (one snapshot, one round trip), the total in column
   * TOTAL_COLUMN of every row; null when the dialect reads them separately.
   */
  pageWithTotal: ((page: SelectParts, count: Sql) => Sql) | null;
  /** Lists every (table_name, column_name) of the schema. */
  listColumns: string;
  /** The Monday (YYYY-MM-DD) of the ISO week of a date column (bars-sql.ts: `interval=1w`). */
  weekStart(col: string): string;
  /** The Monday after the ISO week of a date column: the next week's weekStart. */
  weekAfter(col: string): string;
  /** Appended to a subquery so the planner keeps it as written: evaluated once per row, not inlined. */
  subqueryFence: string;
  /** The physical row id column (retention deletes in bounded steps by it; deep pages: selectParts). */
  rowId: string;
  /**
   * Appended to a table in FROM so its rows are found through the unique key index `index`:
   * SQLite, before it has statistics, ties it with another index on as many equality terms
   * (a join probing one code's dates then read the dates of every code of its source).
   */
  byIndex(index: string): string;
  /**
   * A join to the rows of `table` AS `alias` that `on` selects, each row of the FROM item before
   * it probing the table's key index `index`: SQLite a join held to that index (byIndex);
   * PostgreSQL a fenced LATERAL subquery, which cannot become a hash join over the whole table
   * (a batch's changes can be estimated at any size).
   */
  probeJoin(table: string, alias: string, index: string | null, on: string): string;
  /**
   * How the engine's aggregates fold a value into their state, in the rows' order (stored
   * periods add a day to a period by the same fold, period-store.ts): `sum()` of doubles
   * compensated (Kahan–Babuška–Neumaier: a running sum and an error term, the result their sum)
   * or plain addition; `max()`/`min()` keeping the earlier value on a tie, or taking the later.
   */
  fold: { compensatedSum: boolean; tieKeepsEarlier: boolean };
}

/** The name of a table's unique key index (TableSpec.unique). */
export const uniqueIndexName = (table: string): string => `uk_${table}`;

export const SQLITE: Dialect = {
  name: 'sqlite',
  columnType: (t) =>
    ({
      string: 'TEXT',
      number: 'REAL',
      integer: 'INTEGER',
      date: 'TEXT',
      timestamp: 'TEXT',
      flag: 'INTEGER',
    })[t],
  param: () => '?',
  differs: (a, b) => `${a} IS NOT ${b}`,
  tableSuffix: ' STRICT',
  clustered: ' WITHOUT ROWID',
  fillfactor: () => [],
  contains: (col, needle) => sql`instr(mds_lower(${col}), ${needle}) > 0`,
  indexNullsFirst: '',
  // better-sqlite3 runs in-process: a second statement costs no round trip, and a short page
  // needs no count at all (DatasetStore).
  pageWithTotal: null,
  listColumns: `SELECT m.name AS table_name, c.name AS column_name
    FROM sqlite_schema AS m JOIN pragma_table_info(m.name) AS c WHERE m.type = 'table'`,
  weekStart: (col) => `date(${col}, 'weekday 0', '-6 days')`,
  weekAfter: (col) => `date(${col}, 'weekday 0', '+1 day')`,
  // A subquery with OFFSET is not flattened into its parent (SQLite's rule); LIMIT -1: no limit.
  subqueryFence: ' LIMIT -1 OFFSET 0',
  rowId: 'rowid',
  byIndex: (index) => ` INDEXED BY ${q(index)}`,
  // index null: the table's primary key (a WITHOUT ROWID table has no other); CROSS JOIN keeps
  // the table the inner loop.
  probeJoin: (table, alias, index, on) =>
    index === null
      ? ` CROSS JOIN ${table} AS ${alias} ON ${on}`
      : ` JOIN ${table} AS ${alias} INDEXED BY ${q(index)} ON ${on}`,
  // func.c sumStep (since 3.43) and minmaxStep (replaces only a strictly greater or smaller value).
  fold: { compensatedSum: true, tieKeepsEarlier: true },
};

// Text sorts and compares by code point (COLLATE "C"), as in SQLite, whatever the database's
// locale; lower() uses the database's ctype so non-ASCII letters fold as in JavaScript.
export const POSTGRES: Dialect = {
  name: 'postgres',
  columnType: (t) =>
    ({
      string: 'text COLLATE "C"',
      number: 'double precision',
      integer: 'bigint',
      date: 'text COLLATE "C"',
      timestamp: 'text COLLATE "C"',
      flag: 'smallint',
    })[t],
  param: (n) => `$${n}`,
  differs: (a, b) => `${a} IS DISTINCT FROM ${b}`,
  tableSuffix: '',
  clustered: '',
  fillfactor: (table, percent) => [`ALTER TABLE ${q(table)} SET (fillfactor = ${percent})`],
  contains: (col, needle) => sql`strpos(lower(${col} COLLATE "default"), ${needle}) > 0`,
  indexNullsFirst: ' NULLS FIRST',
  // The count is an uncorrelated scalar subquery: evaluated once, added to every row.
  pageWithTotal: (page, count) =>
    renderSelect({ ...page, columns: [...page.columns, sql`(${count}) AS ${ident(TOTAL_COLUMN)}`] }),
  listColumns: `SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = current_schema()`,
  weekStart: (col) => `to_char(date_trunc('week', (${col})::date), 'YYYY-MM-DD')`,
  weekAfter: (col) => `to_char(date_trunc('week', (${col})::date) + interval '7 days', 'YYYY-MM-DD')`,
  // OFFSET 0 keeps a subquery from being pulled up into its parent.
  subqueryFence: ' OFFSET 0',
  rowId: 'ctid',
  byIndex: () => '',
  probeJoin: (table, alias, _index, on) =>
    ` CROSS JOIN LATERAL (SELECT * FROM ${table} AS ${alias} WHERE ${on} OFFSET 0) AS ${alias}`,
  // sum(float8) is float8pl, max/min float8larger/smaller (the state kept only when strictly
  // greater or smaller than the new value).
  fold: { compensatedSum: false, tieKeepsEarlier: false },
};

/**
 * Knowledge time (docs/point-in-time.md, "When a change is known"). A change's rows carry its
 * stamp, taken when its transaction starts; the instant it became known (visible) is recorded
 * with the stamp in mds_changes as the last statement before COMMIT. Both are strictly
 * increasing per dataset, so "known at T" is "stamped at or before the stamp of the last change
 * known by T". Stamps older than the dataset's first recorded change (its baseline row) are
 * their own knowledge instant.
 */

/** The stamp of dataset `d`'s last change known at instant `at` (`at` itself before any record). */
export function knownStamp(d: string, at: string): Sql {
  return sql`COALESCE((SELECT k.valid_from FROM mds_changes AS k WHERE k.dataset = ${d} AND k.known_at <= ${at}
    ORDER BY k.known_at DESC LIMIT 1), ${at})`;
}

/** The stamp of the change of dataset `d` known at exactly `known` (a value a client was shown), else itself. */
export function stampOfKnown(d: string, known: Value): Sql {
  return sql`COALESCE((SELECT k.valid_from FROM mds_changes AS k WHERE k.dataset = ${d} AND k.known_at = ${known}), ${known})`;
}

/** "Stamp column `col` belongs to a change of `d` known at or after `at`" (the trail's `since`). */
function knownSince(d: string, col: Sql, at: string): Sql {
  // A change known at or after `at` may have been stamped before it (stamped at start, known at
  // commit): the first such change's stamp lowers the bound.
  return sql`(${col} >= ${at} OR ${col} >= (SELECT min(k.valid_from) FROM mds_changes AS k WHERE k.dataset = ${d} AND k.known_at >= ${at}))`;
}

/**
 * "The revision (columns prefixed `alias`) of dataset `d` was the row at instant `at`": valid
 * then, as known then, and not a deletion. The revision indexes on (…, valid_from) bound the
 * first term; the rest is checked on the few revisions of each key.
 */
export function validAt(alias: string, d: string, at: string): Sql {
  const col = (c: string): Sql => raw(`${alias}${q(c)}`);
  const stamp = knownStamp(d, at);
  return sql`${col(REV_FROM)} <= ${stamp} AND (${col(REV_TO)} IS NULL OR ${col(REV_TO)} > ${stamp}) AND ${col(REV_OP)} <> 'delete'`;
}

/** Fields whose stored value is a change's stamp and whose answer is its knowledge instant. */
export function isKnownTimeField(f: Field): boolean {
  return f.name === REV_FROM || f.name === REV_TO || (f.serverSet && f.name === 'created_at');
}

/**
 * The whole history of a dataset as one table (parenthesised, no alias): the revision table's
 * rows (replaced versions, deletions) and the current rows, each its own open revision. The
 * filters of a plan reach into both arms, and each arm is read through its own indexes.
 */
export function historySource(d: Dataset): Sql {
  const names = revisionTable(d).columns.map((c) => q(c.name));
  const current = names.map((c) => (c === q(REV_TO) ? `NULL AS ${c}` : c));
  return raw(
    `(SELECT ${names.join(', ')} FROM ${q(revisionTableName(d))} UNION ALL SELECT ${current.join(', ')} FROM ${q(d.name)})`,
  );
}

/** What a plan reads, without an alias: the dataset's table, or its history for `as_of` and the trail. */
export function planSource(plan: QueryPlan): Sql {
  return plan.asOf !== undefined || plan.trail ? historySource(plan.dataset) : ident(plan.dataset.name);
}

/** planSource under the names statements use for it (the history as the revision table's name). */
export function planTable(plan: QueryPlan): Sql {
  return plan.asOf !== undefined || plan.trail
    ? sql`${historySource(plan.dataset)} AS ${ident(revisionTableName(plan.dataset))}`
    : ident(plan.dataset.name);
}

/**
 * `source_priority`: the row's source is listed, and no row with the same key but the source
 * (read as the plan reads: current, or as known at its as_of) has a source listed before it.
 * The other row is found through the key index.
 */
function firstSource(plan: QueryPlan, source: Field, order: readonly Value[]): Sql {
  const d = plan.dataset;
  const outer = q(plan.asOf !== undefined || plan.trail ? revisionTableName(d) : d.name);
  const rank = (alias: string): Sql =>
    sql`CASE ${raw(`${alias}.${q(source.name)}`)}${join(
      order.map((v, i) => sql` WHEN ${v} THEN ${raw(String(i))}`),
      '',
    )} END`;
  const same = d.key.filter((k) => k !== source).map((k) => raw(`"p".${q(k.name)} = ${outer}.${q(k.name)}`));
  const listed = join(order.map((v) => sql`${v}`));
  const known = plan.asOf !== undefined ? [validAt('"p".', d.name, plan.asOf)] : [];
  return sql`${ident(source.name)} IN (${listed}) AND NOT EXISTS (SELECT 1 FROM ${planSource(plan)} AS "p" WHERE ${join(
    [...same, sql`"p".${ident(source.name)} IN (${listed})`, sql`${rank('"p"')} < ${rank(outer)}`, ...known],
    ' AND ',
  )})`;
}

/**
 * `universe=`: a membership interval of the index holds the row's code on the row's date (read
 * as the plan reads: current, or as known at its as_of), found through the intervals' key index.
 */
function memberOf(plan: QueryPlan, c: Extract<Condition, { op: 'member' }>): Sql {
  const outer = q(
    plan.asOf !== undefined || plan.trail ? revisionTableName(plan.dataset) : plan.dataset.name,
  );
  const m = c.members;
  const col = (f: Field): Sql => raw(`"mm".${q(f.name)}`);
  const own = (f: Field): Sql => raw(`${outer}.${q(f.name)}`);
  const source = plan.asOf !== undefined ? historySource(m.dataset) : ident(m.dataset.name);
  const known = plan.asOf !== undefined ? [validAt('"mm".', m.dataset.name, plan.asOf)] : [];
  const day = c.on === undefined ? own(c.date) : sql`${c.on}`;
  return sql`EXISTS (SELECT 1 FROM ${source} AS "mm" WHERE ${join(
    [
      sql`${col(m.index)} = ${c.index}`,
      sql`${col(m.code)} = ${own(c.field)}`,
      sql`${col(m.from)} <= ${day}`,
      sql`(${col(m.to)} IS NULL OR ${col(m.to)} >= ${day})`,
      ...known,
    ],
    ' AND ',
  )})`;
}

/**
 * `latest_on`: the row is its group's latest on or before the day, among the rows the plan's
 * other conditions select. The groups are found by a skip scan of each group field's distinct
 * values (a recursive `min(x) … WHERE x > previous`, one index seek each), and each group's
 * latest date by one seek of the key index: a GROUP BY read every row of the table (6 s over
 * 3 million bars, against 14 ms). Its columns are unqualified, so they are the subquery's own. A
 * membership judged on the day is per group, so it is left to the outer rows.
 */
function latestOf(plan: QueryPlan, c: Extract<Condition, { op: 'latest' }>, dialect: Dialect): Sql {
  const others = plan.where.filter((x) => x.op !== 'latest' && x.op !== 'member');
  const source = planSource(plan);
  const range = ident(c.field.name);
  const inner = (eq: readonly Sql[]): Sql =>
    join(
      [
        ...eq,
        whereConditions(
          { ...plan, where: [...others, { field: c.field, op: 'lte', value: c.on }] },
          dialect,
        ) as Sql,
      ],
      ' AND ',
    );
  if (c.group.length === 0)
    return sql`${range} = (SELECT max(${range}) FROM ${source} AS "lt" WHERE ${inner([])})`;
  const g = c.group.map((f, i) => ({ col: ident(f.name), cte: raw(`"lg${i}"`) }));
  const steps = g.map(
    ({ col, cte }) =>
      sql`${cte}("_v") AS (SELECT min(${col}) FROM ${source} AS "ls" UNION ALL SELECT (SELECT min(${col}) FROM ${source} AS "ls" WHERE ${col} > ${cte}."_v") FROM ${cte} WHERE ${cte}."_v" IS NOT NULL)`,
  );
  const latest = sql`(SELECT max(${range}) FROM ${source} AS "lt" WHERE ${inner(
    g.map(({ col, cte }) => sql`${col} = ${cte}."_v"`),
  )})`;
  const groups = sql`WITH RECURSIVE ${join(steps)} SELECT ${join([...g.map(({ cte }) => sql`${cte}."_v"`), latest])} FROM ${join(
    g.map(({ cte }) => cte),
  )} WHERE ${join(
    g.map(({ cte }) => sql`${cte}."_v" IS NOT NULL`),
    ' AND ',
  )}`;
  return sql`(${join([...g.map(({ col }) => col), range])}) IN (${groups})`;
}

export function whereConditions(plan: QueryPlan, dialect: Dialect): Sql | null {
  const name = plan.dataset.name;
  const parts = plan.where.map((c) => {
    if (c.op === 'member') return memberOf(plan, c);
    if (c.op === 'latest') return latestOf(plan, c, dialect);
    const col = ident(c.field.name);
    // Bounds on a stamp are given as knowledge instants (the trail's since / until).
    const known =
      !('values' in c) && isKnownTimeField(c.field) && typeof c.value === 'string' ? c.value : null;
    switch (c.op) {
      case 'eq':
        return sql`${col} = ${known === null ? sql`${c.value}` : stampOfKnown(name, known)}`;
      case 'in':
        return sql`${col} IN (${join(c.values.map((v) => sql`${v}`))})`;
      case 'first':
        return firstSource(plan, c.field, c.values);
      case 'gte':
        return known === null ? sql`${col} >= ${c.value}` : knownSince(name, col, known);
      case 'lte':
        return sql`${col} <= ${known === null ? sql`${c.value}` : knownStamp(name, known)}`;
      case 'like':
        // strpos/instr on lower(): a plain substring test, so % and _ in the value are literal.
        return dialect.contains(col, sql`${typeof c.value === 'string' ? c.value.toLowerCase() : c.value}`);
    }
  });
  if (plan.asOf !== undefined) parts.push(validAt('', name, plan.asOf));
  if (parts.length === 0) return null;
  return join(parts, ' AND ');
}

/** A nullable column's NULLs sort as the smallest value on both dialects (SQLite's own rule). */
export function orderTerm(o: QueryPlan['orderBy'][number]): string {
  const nullable = !o.field.required && !o.field.serverSet;
  const dir = o.dir === 'asc' ? 'ASC' : 'DESC';
  return `${q(o.field.name)} ${dir}${nullable ? (o.dir === 'asc' ? ' NULLS FIRST' : ' NULLS LAST') : ''}`;
}

/**
 * "The row comes after `plan.after` in `plan.orderBy`", expanded into nested ORs so mixed
 * asc/desc orders work on both dialects (a row-value comparison cannot mix directions), with
 * a redundant leading bound so an index on the first sort column is range-scanned.
 */
export function keysetPredicate(plan: QueryPlan): Sql | null {
  const after = plan.after;
  if (!after) return null;
  const build = (i: number): Sql => {
    const o = plan.orderBy[i];
    if (!o) return raw('FALSE');
    const col = ident(o.field.name);
    const given = after[i] ?? null;
    // A cursor holds what the client was shown: a knowledge instant, compared as its stamp.
    const v: Value | Sql =
      given !== null && isKnownTimeField(o.field) ? stampOfKnown(plan.dataset.name, given) : given;
    const nullable = !o.field.required && !o.field.serverSet;
    let beyond: Sql;
    if (v === null) beyond = o.dir === 'asc' ? sql`${col} IS NOT NULL` : raw('FALSE');
    else if (o.dir === 'asc') beyond = sql`${col} > ${v}`;
    else beyond = nullable ? sql`(${col} < ${v} OR ${col} IS NULL)` : sql`${col} < ${v}`;
    if (i === plan.orderBy.length - 1) return beyond;
    const same = v === null ? sql`${col} IS NULL` : sql`${col} = ${v}`;
    return sql`(${beyond} OR (${same} AND ${build(i + 1)}))`;
  };
  const first = plan.orderBy[0];
  const v0 = after[0] ?? null;
  if (first && v0 !== null && (first.field.required || first.field.serverSet)) {
    const bound = isKnownTimeField(first.field) ? stampOfKnown(plan.dataset.name, v0) : sql`${v0}`;
    return sql`${ident(first.field.name)} ${raw(first.dir === 'asc' ? '>=' : '<=')} ${bound} AND ${build(0)}`;
  }
  return build(0);
}

/**
 * Each whole row's response JSON (row-json.ts): the stored text completed with created_at, an
 * ISO timestamp written by the service (nothing in it needs escaping).
 */
export const ROW_JSON_SELECT = `${q(ROW_JSON_COLUMN)} || ',"created_at":"' || ${q('created_at')} || '"}' AS "j"`;

/** A plan's SELECT; `json`: one column "j", each whole row's response JSON (plan.select ignored). */
export function selectParts(plan: QueryPlan, dialect: Dialect, paged = true, json = false): SelectParts {
  const columns = json
    ? [raw(ROW_JSON_SELECT)]
    : plan.select.map((f) => raw(f.name === f.apiName ? q(f.name) : `${q(f.name)} AS ${q(f.apiName)}`));
  const conditions = whereConditions(plan, dialect);
  const keyset = keysetPredicate(plan);
  const from = planTable(plan);
  const where = conditions && keyset ? sql`${conditions} AND (${keyset})` : (conditions ?? keyset);
  const orderBy = raw(plan.orderBy.map(orderTerm).join(', '));
  const page = sql` LIMIT ${plan.limit} OFFSET ${plan.offset}`;
  // A later page that must be sorted (not one an index serves in its order: bounded-read.ts), of
  // a stored table (not a history view, which has no row id): its rows picked by row id
  // (Dialect.rowId) in a subquery that sorts the sort columns alone, then only those rows read.
  // Both sorters otherwise carry every candidate row whole, its JSON too: a page at offset
  // 150,000 of 200,000 rows sorted on an unindexed field took 2.2 s on SQLite, 0.4 s by rowid;
  // 0.40–0.70 s on PostgreSQL, 0.21–0.36 s by ctid (one statement, one snapshot: the ids are
  // those of the rows it sees; docs/performance.md "Deep sorted pages"). The order ends on the
  // key, so the subquery picks exactly the rows the whole statement would.
  if (
    paged &&
    plan.offset > 0 &&
    plan.distinct !== true &&
    plan.asOf === undefined &&
    !plan.trail &&
    !boundedRead(plan).page
  ) {
    const id = raw(dialect.rowId);
    const picked = renderSelect({ columns: [id], from, where, orderBy, page });
    return { columns, from, where: sql`${id} IN (${picked})`, orderBy, page: null, distinct: false };
  }
  return { columns, from, where, orderBy, page: paged ? page : null, distinct: plan.distinct === true };
}

/** The count of a plan's rows (its filters; not its keyset position). */
export function countSql(plan: QueryPlan, dialect: Dialect): Sql {
  const where = whereConditions(plan, dialect);
  return sql`SELECT count(*) AS n FROM ${planTable(plan)}${where ? sql` WHERE ${where}` : raw('')}`;
}

export function selectStatement(plan: QueryPlan, dialect: Dialect, paged = true, json = false): Statement {
  return compile(renderSelect(selectParts(plan, dialect, paged, json)), dialect);
}

export function countStatement(plan: QueryPlan, dialect: Dialect): Statement {
  return compile(countSql(plan, dialect), dialect);
}

export function createTableStatements(spec: TableSpec, dialect: Dialect): string[] {
  const cols = spec.columns.map(
    (c) =>
      `${q(c.name)} ${dialect.columnType(c.type)}${c.notNull ? ' NOT NULL' : ''}${c.unique ? ' UNIQUE' : ''}`,
  );
  if (spec.primaryKey) cols.push(`PRIMARY KEY (${spec.primaryKey.map(q).join(', ')})`);
  const nullable = new Set(spec.columns.filter((c) => !c.notNull).map((c) => c.name));
  const ixCol = (c: string): string => `${q(c)}${nullable.has(c) ? dialect.indexNullsFirst : ''}`;
  const unique =
    spec.unique.length === 0
      ? []
      : [
          `CREATE UNIQUE INDEX IF NOT EXISTS ${q(uniqueIndexName(spec.name))} ON ${q(spec.name)} (${spec.unique
            .map((c) => (spec.uniqueDesc.includes(c) ? `${q(c)} DESC` : q(c)))
            .join(', ')})`,
          // The key index of earlier development builds, before it followed the sort order.
          `DROP INDEX IF EXISTS ${q(`ux_${spec.name}`)}`,
        ];
  return [
    `CREATE TABLE IF NOT EXISTS ${q(spec.name)} (${cols.join(', ')})${[
      spec.strict === false ? '' : dialect.tableSuffix,
      spec.clustered ? dialect.clustered : '',
    ]
      .filter((o) => o !== '')
      .join(',')}`,
    ...(spec.fillfactor ? dialect.fillfactor(spec.name, spec.fillfactor) : []),
    ...unique,
    ...spec.indexes.flatMap((i) => [
      `CREATE ${i.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${q(i.name)} ON ${q(spec.name)} (${i.columns
        .map((c) => (i.desc?.includes(c) ? `${q(c)} DESC` : ixCol(c)))
        .join(', ')})${i.where ? ` WHERE ${i.where}` : ''}`,
      ...(i.replaces ?? []).map((old) => `DROP INDEX IF EXISTS ${q(old)}`),
    ]),
  ];
}

/** Columns a revision copies from its row: every field, the row's JSON, created_at. */
export function upsertColumns(d: Dataset): string[] {
  return [...d.fields.map((f) => f.name), ROW_JSON_COLUMN, 'created_at'];
}

/**
 * Columns an upsert writes, in order: upsertColumns, then the row's revision stamp (the op is
 * 'insert' as written; the conflict clause makes it 'update'), its batch and its instant.
 */
export function upsertWriteColumns(d: Dataset): string[] {
  return [...upsertColumns(d), REV_OP, REV_BATCH, REV_FROM];
}

/**
 * "Stored row `target` differs from incoming row `incoming`" (SQL over both aliases): any
 * non-key field but updated_at. updated_at alone is no change, whoever filled it (a re-push of
 * the same values with a new push time is a duplicate; the stored updated_at stays).
 */
export function rowDiffers(d: Dataset, dialect: Dialect, target: string, incoming: string): string {
  const keys = new Set(d.key.map((k) => k.name));
  const compared = d.fields.filter((f) => !keys.has(f.name) && f.name !== 'updated_at');
  const changed = compared.map((f) => dialect.differs(`${target}.${q(f.name)}`, `${incoming}.${q(f.name)}`));
  return changed.length > 0 ? changed.join(' OR ') : 'FALSE';
}

/**
 * The ON CONFLICT tail shared by both dialects: update every non-key column except
 * created_at, and the revision stamp, but only when the row differs (rowDiffers).
 */
export function upsertConflictClause(d: Dataset, dialect: Dialect, target: string): string {
  const keys = new Set(d.key.map((k) => k.name));
  const updatable = d.fields.filter((f) => !keys.has(f.name));
  const set = [...updatable.map((f) => f.name), ROW_JSON_COLUMN, REV_BATCH, REV_FROM]
    .map((c) => `${q(c)} = excluded.${q(c)}`)
    .concat(`${q(REV_OP)} = 'update'`)
    .join(', ');
  return `ON CONFLICT (${d.key.map((k) => q(k.name)).join(', ')}) DO UPDATE SET ${set} WHERE ${rowDiffers(d, dialect, target, 'excluded')}`;
}

/**
 * The full-snapshot prune, one statement for both dialects: delete the partition's rows (of the
 * batch's source, when the dataset has one) whose key is not among the batch's keys, which the
 * dialect has put in table `keys` (PostgreSQL: its staging table; SQLite: a temporary key table).
 */
/**
 * The full-snapshot prune's condition on table alias `t`: the partition's rows (of the batch's
 * source, when the dataset has one) whose key is not among the batch's keys, which the dialect
 * has put in table `keys` (PostgreSQL: its staging table; SQLite: a temporary key table).
 */
export function pruneWhere(
  d: Dataset,
  prune: { partitionValue: string | null; source: string | null },
  keys: string,
): Sql {
  const where: Sql[] = [];
  if (d.partition) where.push(sql`t.${ident(d.partition.name)} = ${prune.partitionValue}`);
  if (d.sourceField) where.push(sql`t.${ident(d.sourceField.name)} = ${prune.source}`);
  const same = d.key.map((k) => `s.${q(k.name)} = t.${q(k.name)}`).join(' AND ');
  where.push(raw(`NOT EXISTS (SELECT 1 FROM ${keys} AS s WHERE ${same})`));
  return join(where, ' AND ');
}

/** The full-snapshot prune, one statement for both dialects (see pruneWhere). */
export function pruneSql(
  d: Dataset,
  prune: { partitionValue: string | null; source: string | null },
  keys: string,
): Sql {
  return sql`DELETE FROM ${ident(d.name)} AS t WHERE ${pruneWhere(d, prune, keys)}`;
}

/** "Rows `a` and `b` have the same key" (aliases as SQL text). */
export const keyMatch = (d: Dataset, a: string, b: string): string =>
  d.key.map((k) => `${a}.${q(k.name)} = ${b}.${q(k.name)}`).join(' AND ');

/** "Revision `p` is the one `r` replaced": same key, closed when `r` began. */
export const replacedBy = (d: Dataset, p: string, r: string): string =>
  `${keyMatch(d, p, r)} AND ${p}.${q(REV_TO)} = ${r}.${q(REV_FROM)}`;
