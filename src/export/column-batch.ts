import type { Field } from '../catalog/catalog.js';
import type { Value } from '../model/values.js';
import { valueAt, type ValueColumn } from '../model/value-columns.js';
import { numericConverter, type Converter } from './column-values.js';
import type { RowChunk } from '../model/value-columns.js';

/**
 * The columnar formats' unit of work: rows (arrays of the fields' values, as the store reads
 * them for exports) copied straight into one typed array per column, a batch at a time. No
 * object per row is made, and a batch is a handful of typed arrays and one array of strings per
 * text column, so a batch costs little to build and little to keep (the per-row objects were
 * garbage by the million, which kept the heap, hence RSS, high: docs/performance.md, issue 18).
 */

/**
 * 8,192 rows: a batch (Arrow and Parquet)'s columns are 64 KB typed arrays (16,384 rows: 128 KB each). Measured on a
 * 1M-row export (fresh service each, alternating): peak RSS 195–200 MB against 270–291 MB, CPU
 * no higher; readers see the same table.
 */
export const BATCH_ROWS = 8_192;

/** A text column: the strings as read (null where null). */
export interface TextColumn {
  readonly kind: 'text';
  readonly values: (string | null)[];
  /** One bit per row, set where the value is not null (Arrow's validity bitmap layout). */
  readonly valid: Uint8Array;
  nulls: number;
}

/**
 * A numeric column in its field's number (column-values.ts): float64 for numbers, integers and
 * timestamps (ms; exact below 2^53, and stored integers are validated as safe integers), int32
 * days for dates, int8 for flags. A null row holds 0 and a clear bit in `valid`.
 */
export interface NumberColumn {
  readonly kind: 'number';
  readonly values: Float64Array | Int32Array | Int8Array;
  readonly valid: Uint8Array;
  nulls: number;
}

export type Column = TextColumn | NumberColumn;

/** Rows as typed columns, what the encoders take: a ColumnBatch, or a reader's own (the minute bars'). */
export interface ColumnChunk {
  readonly length: number;
  readonly columns: readonly Column[];
}

function numbers(f: Field, n: number): Float64Array | Int32Array | Int8Array {
  if (f.type === 'flag') return new Int8Array(n);
  if (f.type === 'date') return new Int32Array(n);
  return new Float64Array(n);
}

/** Up to `capacity` rows of `fields`, column by column. */
export class ColumnBatch {
  length = 0;
  readonly columns: Column[];
  /** Columns whose converter is `Number(v) + 0` on a number (number, integer, flag): copied as they are. */
  private readonly plain: boolean[];

  constructor(
    fields: readonly Field[],
    readonly capacity: number,
    private readonly converters: readonly (Converter | null)[] = fields.map(numericConverter),
  ) {
    this.plain = fields.map((f) => f.type === 'number' || f.type === 'integer' || f.type === 'flag');
    const bits = (capacity + 7) >> 3;
    this.columns = fields.map((f, j) =>
      converters[j]
        ? { kind: 'number', values: numbers(f, capacity), valid: new Uint8Array(bits), nulls: 0 }
        : {
            kind: 'text',
            values: new Array<string | null>(capacity).fill(null),
            valid: new Uint8Array(bits),
            nulls: 0,
          },
    );
  }

  /**
   * Copies rows from row `from` of a chunk on until the batch is full; returns the index of the
   * first row left. A chunk of columns is copied column to column: a number into a number
   * column without a boxed value or a row in between.
   */
  fill(chunk: RowChunk, from: number): number {
    const size = Array.isArray(chunk) ? chunk.length : chunk.length;
    const start = this.length;
    const end = Math.min(size, from + this.capacity - start);
    for (let j = 0; j < this.columns.length; j++) {
      const col = this.columns[j] as Column;
      const convert = this.converters[j];
      const valid = col.valid;
      const src = Array.isArray(chunk) ? null : (chunk.columns[j] as ValueColumn);
      let nulls = 0;
      if (src?.kind === 'number' && col.kind === 'number' && this.plain[j] === true) {
        const values = col.values;
        for (let r = from, i = start; r < end; r++, i++) {
          if (src.nulls?.[r] === 1) {
            nulls++;
            continue;
          }
          valid[i >> 3] = (valid[i >> 3] as number) | (1 << (i & 7));
          // + 0: −0 as 0, as the number converter does.
          values[i] = (src.values[r] as number) + 0;
        }
      } else {
        for (let r = from, i = start; r < end; r++, i++) {
          const v = src ? valueAt(src, r) : (chunk as readonly (readonly Value[])[])[r]?.[j];
          if (v === null || v === undefined) {
            nulls++;
            continue;
          }
          valid[i >> 3] = (valid[i >> 3] as number) | (1 << (i & 7));
          if (convert) (col.values as Float64Array)[i] = convert(v) as number;
          else (col.values as (string | null)[])[i] = String(v);
        }
      }
      col.nulls += nulls;
    }
    this.length += end - from;
    return end;
  }

  /** As `fill`, from a chunk of columns of the same fields (their number types may differ). */
  fillColumns(chunk: ColumnChunk, from: number): number {
    const start = this.length;
    const end = Math.min(chunk.length, from + this.capacity - start);
    for (let j = 0; j < this.columns.length; j++) {
      const col = this.columns[j] as Column;
      const src = chunk.columns[j] as Column;
      if (col.kind === 'number' && src.kind === 'number')
        col.values.set(src.values.subarray(from, end), start);
      else for (let r = from, i = start; r < end; r++, i++) col.values[i] = src.values[r] ?? null;
      let nulls = 0;
      for (let r = from, i = start; r < end; r++, i++) {
        if ((((src.valid[r >> 3] as number) >> (r & 7)) & 1) === 0) nulls++;
        else col.valid[i >> 3] = (col.valid[i >> 3] as number) | (1 << (i & 7));
      }
      col.nulls += nulls;
    }
    this.length += end - from;
    return end;
  }

  get full(): boolean {
    return this.length >= this.capacity;
  }

  /** Empties the batch for refilling: nulls read as 0 / null again, as in a new batch. */
  reset(): void {
    for (const col of this.columns) {
      if (col.kind === 'text') col.values.fill(null, 0, this.length);
      else col.values.fill(0, 0, this.length);
      col.valid.fill(0);
      col.nulls = 0;
    }
    this.length = 0;
  }
}

/**
 * The rows of `chunks` (whatever size the store reads) as batches of `size` rows (the last one
 * shorter); nothing when there are no rows. A batch is yielded once full and is valid until the
 * next one is asked for: it is then emptied and refilled. The encoders copy a batch out before
 * asking (Arrow: its bytes taken; Parquet: copied into WASM memory), and one set of typed arrays
 * for the whole export, instead of ~700 KB of fresh ones per batch, keeps the allocator's
 * churn, hence RSS, down.
 */
export async function* columnBatches(
  fields: readonly Field[],
  chunks: AsyncIterable<RowChunk>,
  size: number,
): AsyncGenerator<ColumnBatch> {
  // One set of converters for the whole export: a date or timestamp repeated across batches is parsed once.
  const converters = fields.map(numericConverter);
  const batch = new ColumnBatch(fields, size, converters);
  for await (const chunk of chunks) {
    for (let at = 0; at < chunk.length;) {
      at = batch.fill(chunk, at);
      if (batch.full) {
        yield batch;
        batch.reset();
      }
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * Chunks of columns of any size as batches of `size` rows, as `columnBatches` gives them. A chunk
 * that is a whole batch as it stands — `size` rows starting a batch, or the answer's last rows
 * starting one — is passed on as it is, not copied (a code's month of minute bars: one chunk);
 * the others are copied into one batch refilled for the whole export.
 */
export async function* rebatch(
  fields: readonly Field[],
  chunks: AsyncIterable<readonly ColumnChunk[]>,
  size: number,
): AsyncGenerator<ColumnChunk> {
  // Made at the first chunk that is copied: an answer of whole chunks never allocates it.
  const made: { batch: ColumnBatch | null } = { batch: null };
  // A short chunk starting a batch: a batch of its own if no rows follow it.
  let held: ColumnChunk | null = null;
  function* copy(chunk: ColumnChunk): Generator<ColumnBatch> {
    const batch = (made.batch ??= new ColumnBatch(fields, size));
    for (let at = 0; at < chunk.length;) {
      at = batch.fillColumns(chunk, at);
      if (batch.full) {
        yield batch;
        batch.reset();
      }
    }
  }
  for await (const list of chunks) {
    for (const chunk of list) {
      if (held) {
        yield* copy(held);
        held = null;
      }
      const starts = made.batch === null || made.batch.length === 0;
      if (starts && chunk.length > 0 && chunk.length <= size && sameLayout(fields, chunk)) {
        if (chunk.length === size) yield chunk;
        else held = chunk;
      } else yield* copy(chunk);
    }
  }
  if (held) yield held;
  else if (made.batch !== null && made.batch.length > 0) yield made.batch;
}

/** Whether a chunk's columns have the arrays a ColumnBatch of `fields` would (numbers() per field). */
function sameLayout(fields: readonly Field[], chunk: ColumnChunk): boolean {
  return fields.every((f, j) => {
    const col = chunk.columns[j];
    if (!col) return false;
    if (col.kind === 'text') return f.type === 'string';
    return f.type !== 'string' && col.values.constructor === numbers(f, 0).constructor;
  });
}

/** Rows keyed by api name as rows of `fields`' values in order (for sources that read objects). */
export async function* valueRows(
  fields: readonly Field[],
  chunks: AsyncIterable<Record<string, Value>[]>,
): AsyncGenerator<Value[][]> {
  const names = fields.map((f) => f.apiName);
  for await (const rows of chunks) yield rows.map((r) => names.map((n) => r[n] ?? null));
}
