import {
  AsyncByteQueue,
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
import type { RowChunk } from '../model/value-columns.js';
import {
  BATCH_ROWS,
  ColumnBatch,
  columnBatches,
  type Column,
  type ColumnChunk,
  type NumberColumn,
  type TextColumn,
} from './column-batch.js';
import { nullable } from './column-values.js';

/**
 * `format=arrow`: the Arrow IPC stream format (`application/vnd.apache.arrow.stream`), one
 * record batch per BATCH_ROWS rows, written as the rows are read: memory holds one batch.
 * Columns are the batch's typed arrays (column-batch.ts), filled from the stored values, so a
 * double is the stored double bit for bit. Text columns are plain utf8, not dictionary-encoded: dictionaries
 * would have to be replaced or extended from batch to batch in a stream, which not every reader
 * accepts, and the stream is not compressed anyway (Parquet is the compact format).
 */

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

function textData(type: DataType, col: TextColumn, n: number): Data {
  const offsets = new Int32Array(n + 1);
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const v = col.values[i];
    if (v !== null && v !== undefined) bytes += Buffer.byteLength(v);
  }
  const data = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const v = col.values[i];
    if (v !== null && v !== undefined) at += data.write(v, at);
    offsets[i + 1] = at;
  }
  return makeData({
    type: type as Utf8,
    length: n,
    nullCount: col.nulls,
    nullBitmap: col.nulls > 0 ? col.valid.subarray(0, (n + 7) >> 3) : null,
    valueOffsets: offsets,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  });
}

function numberData(f: Field, type: DataType, col: NumberColumn, n: number): Data {
  let data: Float64Array | Int32Array | Int8Array | BigInt64Array = col.values.subarray(0, n);
  if (f.type === 'integer' || f.type === 'timestamp') {
    data = int64s(data as Float64Array, n);
  }
  return makeData({
    type: type as Float64,
    length: n,
    nullCount: col.nulls,
    nullBitmap: col.nulls > 0 ? col.valid.subarray(0, (n + 7) >> 3) : null,
    data: data as Float64Array,
  });
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const TWO_32 = 2 ** 32;

/**
 * int64 columns: the float64 values (safe integers) as 64-bit integers, a null row 0. Written
 * as two 32-bit words (low, high: the floor division keeps a negative's two's complement), not
 * a BigInt per row, which was most of the encoder's work on a timestamp column.
 */
function int64s(values: Float64Array, n: number): BigInt64Array {
  const big = new BigInt64Array(n);
  if (!LITTLE_ENDIAN) {
    for (let i = 0; i < n; i++) if (values[i] !== 0) big[i] = BigInt(values[i] as number);
    return big;
  }
  const words = new Int32Array(big.buffer, big.byteOffset, n * 2);
  for (let i = 0; i < n; i++) {
    const v = values[i] as number;
    if (v === 0) continue;
    const hi = Math.floor(v / TWO_32);
    words[2 * i] = (v - hi * TWO_32) | 0;
    words[2 * i + 1] = hi | 0;
  }
  return big;
}

/** One record batch of a batch's columns under `schema`. */
export function recordBatch(schema: Schema, fields: readonly Field[], batch: ColumnChunk): RecordBatch {
  const n = batch.length;
  const children = fields.map((f, i) => {
    const type = (schema.fields[i] as ArrowField).type;
    const col = batch.columns[i] as Column;
    return col.kind === 'text' ? textData(type, col, n) : numberData(f, type, col, n);
  });
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children }),
  );
}

/**
 * The writer's output, taken after each batch. The library's own queue (and its Node duplex,
 * which takes every batch at once) holds whatever the client has not read yet: a slow client
 * made it keep the whole answer (bench: ~115 MB for 1M rows). Here each batch's bytes are
 * handed on before the next batch is built, so back-pressure reaches the row reads.
 */
class TakenBytes extends AsyncByteQueue {
  private parts: Uint8Array[] = [];

  override write(value: Parameters<AsyncByteQueue['write']>[0]): void {
    this.parts.push(value as Uint8Array);
  }

  take(): Uint8Array {
    const out = Buffer.concat(this.parts);
    this.parts = [];
    return out;
  }
}

/** The answer as an Arrow IPC stream; an error while reading rows ends the stream with that error. */
export function arrowStream(
  fields: readonly Field[],
  chunks: AsyncIterable<RowChunk>,
): AsyncGenerator<Uint8Array> {
  return arrowBatchStream(fields, columnBatches(fields, chunks, BATCH_ROWS));
}

/** As `arrowStream`, from batches of columns already made (export-formats.ts). */
export async function* arrowBatchStream(
  fields: readonly Field[],
  batches: AsyncIterable<ColumnChunk>,
): AsyncGenerator<Uint8Array> {
  const schema = arrowSchema(fields);
  const out = new TakenBytes();
  const writer = new RecordBatchStreamWriter();
  writer.reset(out, schema); // the schema message
  let any = false;
  for await (const batch of batches) {
    any = true;
    writer.write(recordBatch(schema, fields, batch));
    yield out.take();
  }
  // No rows: still a valid stream with the schema and an empty batch, so readers get the columns.
  if (!any) writer.write(recordBatch(schema, fields, new ColumnBatch(fields, 0)));
  writer.close(); // the end-of-stream marker
  yield out.take();
}
