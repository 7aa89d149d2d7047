import type { Catalog, Dataset, Field } from '../catalog/catalog.js';
import type { FieldType } from '../catalog/types.js';
import { ROW_JSON_COLUMN } from '../model/row-json.js';
import { REV_BATCH, REV_FROM, REV_OP } from '../model/revisions.js';

/**
 * Tables and indexes derived from the catalog, independent of the SQL dialect.
 * Each dataset is one table named after it; columns are its ingest field names, created_at and
 * the row's response JSON (row-json.ts).
 */

export interface TableSpec {
  name: string;
  columns: { name: string; type: FieldType; notNull: boolean; unique?: boolean }[];
  /** The service's own tables have one; dataset tables have a unique key index instead. */
  primaryKey?: string[];
  /** Columns of the unique key index `uk_<table>`; empty: none. */
  unique: string[];
  /** Unique-key columns stored descending: the default sort's field when it is in the key and desc. */
  uniqueDesc: string[];
  indexes: IndexSpec[];
  /** SQLite STRICT typing (default); the service's own tables predate it. */
  strict?: boolean;
  /**
   * Rows stored in primary key order (SQLite WITHOUT ROWID): a key range is read from the
   * table itself, not through an index and a row lookup per row.
   */
  clustered?: boolean;
  /**
   * Percent of each page that inserts fill (PostgreSQL; SQLite has no such option): a table whose
   * rows are rewritten by most batches keeps the rest for their new versions, written on the
   * same page (a heap-only update, no index entry) and the dead ones reclaimed there without
   * VACUUM. Default 100.
   */
  fillfactor?: number;
}

export interface IndexSpec {
  name: string;
  columns: string[];
  /** Columns stored descending. */
  desc?: string[];
  /** Names of indexes this one supersedes (dropped by migrate). */
  replaces?: string[];
  unique?: boolean;
  /** A partial index's condition (SQL over the table's own columns, built in src/storage). */
  where?: string;
}

function indexName(table: string, cols: readonly string[]): string {
  return `ix_${table}__${cols.join('__')}`;
}

/**
 * Indexes so that every exact filter and the date range are served without scanning the
 * table: the unique key covers filters on its first column; every other exact filter gets an
 * index on (filter, range field); the range and the default sort get their own when no
 * index leads with them.
 */
export function datasetIndexes(d: Dataset): IndexSpec[] {
  const keyCols = d.key.map((k) => k.name);
  const out: IndexSpec[] = [];
  const leading = new Set<string>([keyCols[0] as string]);
  const sortCol = d.sort.field.name;
  const add = (cols: string[]): void => {
    if (leading.has(cols[0] as string) && cols.length === 1) return;
    let spec: IndexSpec = { name: indexName(d.name, cols), columns: cols };
    if (cols.length === 1 && cols[0] === sortCol && keyCols.includes(sortCol)) {
      // The default sort's own index, in its direction and with the rest of the key as the
      // tie-break, serves the unfiltered listing and `<date>=` filters without a sorting step.
      const full = [sortCol, ...keyCols.filter((k) => k !== sortCol)];
      spec = {
        name: indexName(d.name, full),
        columns: full,
        desc: d.sort.order === 'desc' ? [sortCol] : [],
        replaces: [indexName(d.name, cols)],
      };
    }
    if (out.some((i) => i.name === spec.name)) return;
    out.push(spec);
    leading.add(cols[0] as string);
  };
  const range: Field | null = d.range;
  for (const f of d.exact) {
    if (f.name === keyCols[0]) continue;
    if (range && range.name !== f.name) add([f.name, range.name]);
    else add([f.name]);
  }
  if (range) add([range.name]);
  if (d.partition && d.partition.name !== range?.name) add([d.partition.name]);
  add([sortCol]);
  // A factor dataset's as-of lookup (bars-sql.ts: one code, one source, the latest date on or
  // before a bar's): both equalities and the date in one index. Without it SQLite took the
  // (source, date) index and walked every code's factors of that source for each row (an
  // adjusted cross-section over 300 codes: seconds, minutes with a month's resampling).
  const src = d.sourceField;
  if (d.factors && src) {
    const cols = [d.factors.code.name, src.name, d.factors.date.name];
    out.push({ name: indexName(d.name, cols), columns: cols });
  }
  return out;
}

/** The default sort's field when it is in the key and descending: stored descending in the key index. */
function keyDescColumns(d: Dataset): string[] {
  return d.sort.order === 'desc' && d.key.includes(d.sort.field) ? [d.sort.field.name] : [];
}

/**
 * The order of a dataset's unique key index, column by column: batches write their rows in it
 * on both backends, so the index's pages fill in order instead of splitting half-empty, and
 * concurrent batches take row locks in one order.
 */
export function keyIndexOrder(d: Dataset): { name: string; desc: boolean }[] {
  const desc = keyDescColumns(d);
  return d.key.map((k) => ({ name: k.name, desc: desc.includes(k.name) }));
}

export function datasetTable(d: Dataset): TableSpec {
  return {
    name: d.name,
    columns: [
      ...d.rowFields.map((f) => ({ name: f.name, type: f.type, notNull: f.required || f.serverSet })),
      // Derived from the row at ingest (row-json.ts); nullable so it can be added to old tables.
      { name: ROW_JSON_COLUMN, type: 'string' as const, notNull: false },
      // The row is its own open revision (docs/point-in-time.md): the op, batch and instant of
      // the change that made it; the revision table keeps only what it replaced and deletions.
      { name: REV_OP, type: 'string' as const, notNull: false },
      { name: REV_BATCH, type: 'string' as const, notNull: false },
      { name: REV_FROM, type: 'timestamp' as const, notNull: false },
    ],
    unique: d.key.map((k) => k.name),
    // A key index in the default sort's direction serves the most common query (one code, newest
    // first, ties by the rest of the key ascending) without a sorting step.
    uniqueDesc: keyDescColumns(d),
    indexes: [
      ...datasetIndexes(d),
      // The trail's order over current rows, and a batch's rows for its revert (one instant each).
      { name: `ix_${d.name}__${REV_FROM}`, columns: [REV_FROM] },
    ],
  };
}

export function catalogTables(catalog: Catalog): TableSpec[] {
  return catalog.datasets.map(datasetTable);
}
