import { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import {
  type Data,
  type DataType,
  DateDay,
  Field as ArrowField,
  Float64,
  Int64,
  Int8,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  TimestampMillisecond,
  Utf8,
} from 'apache-arrow';
import type { Field } from '../catalog/catalog.js';
import type { FieldType } from '../catalog/types.js';
import type { Value } from '../storage/store.js';
import { nullable, numericConverter, rechunk } from './column-values.js';

/**
 * `format=arrow`: the Arrow IPC stream format (`application/vnd.apache.arrow.stream`), one
 * record batch per BATCH_ROWS rows, written as the rows are read: memory holds one batch.
 * Columns are built straight into typed arrays from the stored values, so a double is the
 * stored double bit for bit. Text columns are plain utf8, not dictionary-encoded: dictionaries
 * would have to be replaced or extended from batch to batch in a stream, which not every reader
 * accepts, and the stream is not compressed anyway (Parquet is the compact format).
 */

export const BATCH_ROWS = 16_384;

function arrowType(t: FieldType): DataType {
  switch (t) {
    case 'string':
      return new Utf8();
    case 'number':
      return new Float64();
    case 'integer':
      return new Int64();
    case 'flag':
      return new Int8();
    case 'date':
      return new DateDay();
    case 'timestamp':
      return new TimestampMillisecond('UTC');
  }
}

/** The Arrow schema of an answer: its fields in order, typed and with nullability from the catalog. */
export function arrowSchema(fields: readonly Field[]): Schema {
  return new Schema(fields.map((f) => new ArrowField(f.apiName, arrowType(f.type), nullable(f))));
}

function validity(n: number): Uint8Array {
  return new Uint8Array((n + 7) >> 3);
}

function textColumn(type: DataType, values: Value[]): Data {
  const n = values.length;
  const offsets = new Int32Array(n + 1);
  const bitmap = validity(n);
  let nulls = 0;
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || v === undefined) nulls++;
    else bytes += Buffer.byteLength(String(v));
  }
  const data = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v !== null && v !== undefined) {
      at += data.write(String(v), at);
      bitmap[i >> 3] = (bitmap[i >> 3] as number) | (1 << (i & 7));
    }
    offsets[i + 1] = at;
  }
  return makeData({
    type: type as Utf8,
    length: n,
    nullCount: nulls,
    nullBitmap: nulls > 0 ? bitmap : null,
    valueOffsets: offsets,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  });
}

function numberColumn(f: Field, type: DataType, values: Value[]): Data {
  const n = values.length;
  const convert = numericConverter(f);
  if (!convert) throw new Error(`${f.apiName} is not a numeric field`);
  const bitmap = validity(n);
  let nulls = 0;
  const big = f.type === 'integer' || f.type === 'timestamp';
  const big64 = big ? new BigInt64Array(n) : null;
  const small =
    f.type === 'flag'
      ? new Int8Array(n)
      : f.type === 'date'
        ? new Int32Array(n)
        : big
          ? null
          : new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const x = convert(values[i] as Value);
    if (x === null) {
      nulls++;
      continue;
    }
    bitmap[i >> 3] = (bitmap[i >> 3] as number) | (1 << (i & 7));
    if (big64) big64[i] = BigInt(x);
    else (small as Float64Array)[i] = x;
  }
  return makeData({
    type: type as Float64,
    length: n,
    nullCount: nulls,
    nullBitmap: nulls > 0 ? bitmap : null,
    data: (big64 ?? small) as Float64Array,
  });
}

/** One record batch of rows (keyed by api name) under `schema`. */
export function recordBatch(
  schema: Schema,
  fields: readonly Field[],
  rows: Record<string, Value>[],
): RecordBatch {
  const children = fields.map((f, i) => {
    const type = (schema.fields[i] as ArrowField).type;
    const values = rows.map((r) => r[f.apiName] ?? null);
    return f.type === 'string' ? textColumn(type, values) : numberColumn(f, type, values);
  });
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children }),
  );
}

/** The answer as an Arrow IPC stream; an error while reading rows ends the stream with that error. */
export function arrowStream(
  fields: readonly Field[],
  chunks: AsyncIterable<Record<string, Value>[]>,
): Readable {
  const schema = arrowSchema(fields);
  async function* batches(): AsyncGenerator<RecordBatch> {
    let any = false;
    for await (const rows of rechunk(chunks, BATCH_ROWS)) {
      any = true;
      yield recordBatch(schema, fields, rows);
    }
    // No rows: still a valid stream with the schema (and no batch), so readers get the columns.
    if (!any) yield recordBatch(schema, fields, []);
  }
  // One batch in flight: the rows of the next batch are not read before the client takes this one.
  const through = RecordBatchStreamWriter.throughNode({ writableHighWaterMark: 1, autoDestroy: true });
  return pipeline(Readable.from(batches(), { highWaterMark: 1 }), through, () => {
    // Errors reach the consumer through `through` (pipeline destroys it with the error).
  }) as unknown as Readable;
}
