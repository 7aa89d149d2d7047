import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { Field } from '../catalog/catalog.js';
import type { Value } from '../storage/store.js';
import { VERSION } from '../version.js';
import { columnBatches, type Column } from './column-batch.js';
import { nullable } from './column-values.js';

/**
 * `format=parquet` (`application/vnd.apache.parquet`): one row group per ROW_GROUP_ROWS rows,
 * each sent as soon as it is encoded, then the footer. Memory holds one row group's columns
 * (typed, column-batch.ts) and its encoded bytes, not the file. Every column chunk is dictionary-encoded when that at least halves it (the
 * writer decides per chunk: codes, sources, dates, repeated prices) and Snappy-compressed.
 */

export const ROW_GROUP_ROWS = 16_384;

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];

function element(f: Field): SchemaElement {
  const repetition_type = nullable(f) ? 'OPTIONAL' : 'REQUIRED';
  const name = f.apiName;
  switch (f.type) {
    case 'string':
      return {
        name,
        repetition_type,
        type: 'BYTE_ARRAY',
        converted_type: 'UTF8',
        logical_type: { type: 'STRING' },
      };
    case 'number':
      return { name, repetition_type, type: 'DOUBLE' };
    case 'integer':
      return { name, repetition_type, type: 'INT64' };
    case 'flag':
      // INT_8 as a converted type only: hyparquet-writer 0.17 writes the INTEGER logical type's
      // bitWidth with the wrong Thrift type (readers reject the footer); INT_8 alone reads as int8.
      return { name, repetition_type, type: 'INT32', converted_type: 'INT_8' };
    case 'date':
      return { name, repetition_type, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } };
    case 'timestamp':
      return {
        name,
        repetition_type,
        type: 'INT64',
        converted_type: 'TIMESTAMP_MILLIS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
      };
  }
}

/** The Parquet schema of an answer: a root and one leaf per field, in order. */
export function parquetSchema(fields: readonly Field[]): SchemaElement[] {
  return [{ name: 'root', num_children: fields.length }, ...fields.map(element)];
}

type Cell = string | number | bigint | null;

/**
 * A batch's column as the writer takes it: numbers (BigInt for int64 integers; timestamps go as
 * numbers, the writer makes them int64), text, null where the batch has no value. A required
 * number, date or timestamp column is handed over as its typed array: no boxed number per value.
 */
function columnData(f: Field, col: Column, n: number): Cell[] | Float64Array | Int32Array {
  const values = col.values;
  if (col.nulls === 0 && (f.type === 'number' || f.type === 'date' || f.type === 'timestamp')) {
    return (values as Float64Array | Int32Array).subarray(0, n);
  }
  const out = new Array<Cell>(n);
  const valid = col.valid;
  const big = f.type === 'integer';
  for (let i = 0; i < n; i++) {
    if (((valid[i >> 3] as number) & (1 << (i & 7))) === 0) out[i] = null;
    else out[i] = big ? BigInt(values[i] as number) : (values[i] as string | number);
  }
  return out;
}

/** The answer as a Parquet file, streamed row group by row group. */
export async function* parquetStream(
  fields: readonly Field[],
  chunks: AsyncIterable<Value[][]>,
): AsyncGenerator<Uint8Array> {
  const writer = new ByteWriter();
  const file = new ParquetWriter({
    writer,
    schema: parquetSchema(fields),
    codec: 'SNAPPY',
    createdBy: `market-data-service ${VERSION}`,
  });
  // What was encoded since the last call, copied out; `offset` (the file position) goes on.
  const take = (): Uint8Array => {
    const out = writer.getBytes().slice();
    writer.index = 0;
    return out;
  };
  yield take();
  for await (const batch of columnBatches(fields, chunks, ROW_GROUP_ROWS)) {
    const n = batch.length;
    await file.write({
      columnData: fields.map((f, j) => ({
        name: f.apiName,
        data: columnData(f, batch.columns[j] as Column, n),
        nullable: nullable(f),
      })),
      rowGroupSize: n,
    });
    yield take();
  }
  await file.finish();
  yield take();
}
