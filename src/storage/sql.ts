import type { FieldType } from '../catalog/types.js';
import type { Dataset } from '../catalog/catalog.js';
import type { QueryPlan, Value } from './store.js';
import type { TableSpec } from './schema.js';
import { ROW_JSON_COLUMN } from './row-json.js';

/**
 * Every difference between the SQL dialects lives here; the statements themselves are built
 * once from the catalog by the functions below. Identifiers are always quoted and come only
 * from the catalog; values are always bound parameters.
 */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  columnType(t: FieldType): string;
  /** Bound parameter number n (1-based). */
  param(n: number): string;
  /** "a differs from b" treating NULL as a value. */
  differs(a: string, b: string): string;
  /** Table options appended after the column list. */
  tableSuffix: string;
  /** "col contains needle" as a plain substring test (needle already lower-cased). */
  contains(col: string, needle: string): string;
  /** Suffix of a nullable index column, so the index serves ORDER BY's NULLS FIRST (asc). */
  indexNullsFirst: string;
}

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
  contains: (col, needle) => `instr(mds_lower(${col}), ${needle}) > 0`,
  indexNullsFirst: '',
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
  contains: (col, needle) => `strpos(lower(${col} COLLATE "default"), ${needle}) > 0`,
  indexNullsFirst: ' NULLS FIRST',
};

export function q(id: string): string {
  // Identifiers come from the catalog (checked against /^[a-z][a-z0-9_]*$/ at boot); quoting
  // keeps words such as "window" or "change" usable as column names.
  return `"${id}"`;
}

export interface Statement {
  sql: string;
  params: Value[];
}

class Params {
  readonly values: Value[] = [];
  constructor(readonly dialect: Dialect) {}
  add(v: Value): string {
    this.values.push(v);
    return this.dialect.param(this.values.length);
  }
}

function whereClause(plan: QueryPlan, p: Params): string {
  if (plan.where.length === 0) return '';
  const parts = plan.where.map((c) => {
    const col = q(c.field.name);
    switch (c.op) {
      case 'eq':
        return `${col} = ${p.add(c.value)}`;
      case 'gte':
        return `${col} >= ${p.add(c.value)}`;
      case 'lte':
        return `${col} <= ${p.add(c.value)}`;
      case 'like':
        // strpos/instr on lower(): a plain substring test, so % and _ in the value are literal.
        return p.dialect.contains(col, p.add(typeof c.value === 'string' ? c.value.toLowerCase() : c.value));
    }
  });
  return ` WHERE ${parts.join(' AND ')}`;
}

/** A nullable column's NULLs sort as the smallest value on both dialects (SQLite's own rule). */
function orderTerm(o: QueryPlan['orderBy'][number]): string {
  const nullable = !o.field.required && !o.field.serverSet;
  const dir = o.dir === 'asc' ? 'ASC' : 'DESC';
  return `${q(o.field.name)} ${dir}${nullable ? (o.dir === 'asc' ? ' NULLS FIRST' : ' NULLS LAST') : ''}`;
}

/**
 * "The row comes after `plan.after` in `plan.orderBy`", expanded into nested ORs so mixed
 * asc/desc orders work on both dialects (a row-value comparison cannot mix directions), with
 * a redundant leading bound so an index on the first sort column is range-scanned.
 */
function keysetPredicate(plan: QueryPlan, p: Params): string | null {
  const after = plan.after;
  if (!after) return null;
  const build = (i: number): string => {
    const o = plan.orderBy[i];
    if (!o) return 'FALSE';
    const col = q(o.field.name);
    const v = after[i] ?? null;
    const nullable = !o.field.required && !o.field.serverSet;
    let beyond: string;
    if (v === null) beyond = o.dir === 'asc' ? `${col} IS NOT NULL` : 'FALSE';
    else if (o.dir === 'asc') beyond = `${col} > ${p.add(v)}`;
    else beyond = nullable ? `(${col} < ${p.add(v)} OR ${col} IS NULL)` : `${col} < ${p.add(v)}`;
    if (i === plan.orderBy.length - 1) return beyond;
    const same = v === null ? `${col} IS NULL` : `${col} = ${p.add(v)}`;
    return `(${beyond} OR (${same} AND ${build(i + 1)}))`;
  };
  const first = plan.orderBy[0];
  const v0 = after[0] ?? null;
  let lead = '';
  if (first && v0 !== null && (first.field.required || first.field.serverSet)) {
    lead = `${q(first.field.name)} ${first.dir === 'asc' ? '>=' : '<='} ${p.add(v0)} AND `;
  }
  return `${lead}${build(0)}`;
}

/**
 * Each whole row's response JSON (row-json.ts): the stored text completed with created_at, an
 * ISO timestamp written by the service (nothing in it needs escaping).
 */
const ROW_JSON_SELECT = `${q(ROW_JSON_COLUMN)} || ',"created_at":"' || ${q('created_at')} || '"}' AS "j"`;

/** The page's rows; `json`: one column "j", each whole row's response JSON (plan.select ignored). */
export function selectStatement(plan: QueryPlan, dialect: Dialect, paged = true, json = false): Statement {
  const p = new Params(dialect);
  const cols = json
    ? [ROW_JSON_SELECT]
    : plan.select.map((f) => (f.name === f.apiName ? q(f.name) : `${q(f.name)} AS ${q(f.apiName)}`));
  const order = plan.orderBy.map(orderTerm).join(', ');
  let where = whereClause(plan, p);
  const keyset = keysetPredicate(plan, p);
  if (keyset) where = where ? `${where} AND (${keyset})` : ` WHERE ${keyset}`;
  let sql = `SELECT ${cols.join(', ')} FROM ${q(plan.dataset.name)}${where} ORDER BY ${order}`;
  if (paged) sql += ` LIMIT ${p.add(plan.limit)} OFFSET ${p.add(plan.offset)}`;
  return { sql, params: p.values };
}

export function countStatement(plan: QueryPlan, dialect: Dialect): Statement {
  const p = new Params(dialect);
  return {
    sql: `SELECT count(*) AS n FROM ${q(plan.dataset.name)}${whereClause(plan, p)}`,
    params: p.values,
  };
}

export function createTableStatements(spec: TableSpec, dialect: Dialect): string[] {
  const cols = spec.columns.map(
    (c) => `${q(c.name)} ${dialect.columnType(c.type)}${c.notNull ? ' NOT NULL' : ''}`,
  );
  const nullable = new Set(spec.columns.filter((c) => !c.notNull).map((c) => c.name));
  const ixCol = (c: string): string => `${q(c)}${nullable.has(c) ? dialect.indexNullsFirst : ''}`;
  return [
    `CREATE TABLE IF NOT EXISTS ${q(spec.name)} (${cols.join(', ')})${dialect.tableSuffix}`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${q(`uk_${spec.name}`)} ON ${q(spec.name)} (${spec.unique
      .map((c) => (spec.uniqueDesc.includes(c) ? `${q(c)} DESC` : q(c)))
      .join(', ')})`,
    // The key index of earlier development builds, before it followed the sort order.
    `DROP INDEX IF EXISTS ${q(`ux_${spec.name}`)}`,
    ...spec.indexes.flatMap((i) => [
      `CREATE INDEX IF NOT EXISTS ${q(i.name)} ON ${q(spec.name)} (${i.columns
        .map((c) => (i.desc?.includes(c) ? `${q(c)} DESC` : ixCol(c)))
        .join(', ')})`,
      ...(i.replaces ?? []).map((old) => `DROP INDEX IF EXISTS ${q(old)}`),
    ]),
  ];
}

/** Columns an upsert writes, in order: every ingest field, the row's JSON, then created_at. */
export function upsertColumns(d: Dataset): string[] {
  return [...d.fields.map((f) => f.name), ROW_JSON_COLUMN, 'created_at'];
}

/**
 * The ON CONFLICT tail shared by both dialects: update every non-key column except
 * created_at, but only when something differs, so an identical row is left alone (and
 * counted as a duplicate). `given` is the SQL for "the client sent updated_at".
 */
export function upsertConflictClause(d: Dataset, dialect: Dialect, target: string, given: string): string {
  const keys = new Set(d.key.map((k) => k.name));
  const updatable = d.fields.filter((f) => !keys.has(f.name));
  const compared = updatable.filter((f) => f.name !== 'updated_at');
  const set = [...updatable.map((f) => f.name), ROW_JSON_COLUMN]
    .map((c) => `${q(c)} = excluded.${q(c)}`)
    .join(', ');
  const changed = compared.map((f) => dialect.differs(`${target}.${q(f.name)}`, `excluded.${q(f.name)}`));
  changed.push(
    `(${given} AND ${dialect.differs(`${target}.${q('updated_at')}`, `excluded.${q('updated_at')}`)})`,
  );
  return `ON CONFLICT (${d.key.map((k) => q(k.name)).join(', ')}) DO UPDATE SET ${set} WHERE ${changed.join(' OR ')}`;
}
