import type { Value } from './values.js';

/**
 * A chunk of an export's rows column by column, as it crosses from where it is read (SQLite: a
 * reader process; PostgreSQL: the request thread) to the encoding thread: a numeric column is one
 * Float64Array and a text column one string and one Int32Array, so a crossing copies (IPC) or
 * moves (postMessage transfer) a few buffers instead of structured-cloning every value of every
 * row (measured, docs/performance.md: that clone was most of an Arrow export's request-thread CPU).
 * The values are the stored ones exactly: a number is the same double (−0 included), a string
 * the same string, so every format's bytes stay as they were.
 */
export type ValueColumn =
  /** Every value a number or null: the doubles (0 where null) and, when any is null, 1 per null row. */
  | { kind: 'number'; values: Float64Array; nulls: Uint8Array | null }
  /** Every value a string or null: the strings joined, row i ending at ends[i] (UTF-16 units). */
  | { kind: 'text'; text: string; ends: Int32Array; nulls: Uint8Array | null }
  /** Anything else (numbers mixed with strings): the values as they are, cloned one by one. */
  | { kind: 'values'; values: Value[] };

export interface ValueColumns {
  length: number;
  columns: ValueColumn[];
}

/**
 * Longest joined text column: far below V8's string limit (~2^29 units), so a chunk of long
 * strings falls back to its values rather than failing.
 */
const MAX_JOINED = 1 << 27;

function column(rows: readonly (readonly Value[])[], j: number): ValueColumn {
  const n = rows.length;
  let numbers = true;
  let strings = true;
  let anyNull = false;
  let units = 0;
  for (let i = 0; i < n && (numbers || strings); i++) {
    const v = (rows[i] as readonly Value[])[j];
    if (v === null || v === undefined) anyNull = true;
    else if (typeof v === 'number') strings = false;
    else if (typeof v === 'string') {
      numbers = false;
      units += v.length;
    } else numbers = strings = false;
  }
  const nulls = anyNull ? new Uint8Array(n) : null;
  if (numbers) {
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const v = (rows[i] as readonly Value[])[j];
      if (typeof v === 'number') values[i] = v;
      else if (nulls) nulls[i] = 1;
    }
    return { kind: 'number', values, nulls };
  }
  if (strings && units <= MAX_JOINED) {
    const parts = new Array<string>(n);
    const ends = new Int32Array(n);
    let at = 0;
    for (let i = 0; i < n; i++) {
      const v = (rows[i] as readonly Value[])[j];
      if (typeof v === 'string') {
        parts[i] = v;
        at += v.length;
      } else {
        parts[i] = '';
        if (nulls) nulls[i] = 1;
      }
      ends[i] = at;
    }
    return { kind: 'text', text: parts.join(''), ends, nulls };
  }
  return { kind: 'values', values: rows.map((r) => r[j] ?? null) };
}

/** Rows of values, all of one width, column by column (no rows: no columns). */
export function toColumns(rows: readonly (readonly Value[])[]): ValueColumns {
  const width = rows[0]?.length ?? 0;
  return { length: rows.length, columns: Array.from({ length: width }, (_, j) => column(rows, j)) };
}

/** Row i's value of a column. */
export function valueAt(col: ValueColumn, i: number): Value {
  switch (col.kind) {
    case 'number':
      return col.nulls?.[i] === 1 ? null : (col.values[i] as number);
    case 'text':
      return col.nulls?.[i] === 1 ? null : col.text.slice(i === 0 ? 0 : col.ends[i - 1], col.ends[i]);
    case 'values':
      return col.values[i] ?? null;
  }
}

/** Every value of a column, in row order. */
export function columnValues(col: ValueColumn, length: number): Value[] {
  if (col.kind === 'values') return col.values;
  const out = new Array<Value>(length);
  for (let i = 0; i < length; i++) out[i] = valueAt(col, i);
  return out;
}

/** A column holding `values` (the same rows), as `column` would build it. */
export function columnOf(values: readonly Value[]): ValueColumn {
  return column(
    values.map((v) => [v]),
    0,
  );
}

/** The chunk as rows of values again (the formats that write rows: CSV). */
export function fromColumns(c: ValueColumns): Value[][] {
  const rows = Array.from({ length: c.length }, () => new Array<Value>(c.columns.length));
  c.columns.forEach((col, j) => {
    const values = columnValues(col, c.length);
    for (let i = 0; i < c.length; i++) (rows[i] as Value[])[j] = values[i] as Value;
  });
  return rows;
}

function owned<T extends Float64Array | Int32Array | Uint8Array>(a: T): T {
  // A view into a larger buffer (an IPC message's, Node's pool) is copied: moving that buffer
  // would take every other view's memory with it.
  return a.byteOffset === 0 && a.byteLength === a.buffer.byteLength && a.buffer instanceof ArrayBuffer
    ? a
    : (a.slice() as T);
}

/**
 * The chunk with buffers of its own, and those buffers, for a postMessage that moves them (the
 * chunk is not used again on this side).
 */
export function movable(c: ValueColumns): { chunk: ValueColumns; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const take = <T extends Float64Array | Int32Array | Uint8Array>(a: T): T => {
    const own = owned(a);
    transfer.push(own.buffer as ArrayBuffer);
    return own;
  };
  const columns = c.columns.map((col): ValueColumn => {
    const nulls = col.kind !== 'values' && col.nulls ? take(col.nulls) : null;
    if (col.kind === 'number') return { kind: 'number', values: take(col.values), nulls };
    if (col.kind === 'text') return { kind: 'text', text: col.text, ends: take(col.ends), nulls };
    return col;
  });
  return { chunk: { length: c.length, columns }, transfer };
}

/**
 * A chunk of rows of the fields' values in order: as rows, or column by column (the daily
 * datasets' exports, QueryService.streamArrays: a chunk reaches the encoding thread as a few
 * moved buffers, and Arrow and Parquet copy its columns into theirs without a row in between).
 */
export type RowChunk = Value[][] | ValueColumns;
