import { Readable } from 'node:stream';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { Field } from '../catalog/catalog.js';
import type { Value } from '../storage/store.js';
import { VERSION } from '../version.js';
import { nullable, numericConverter, rechunk } from './column-values.js';

/**
 * `format=parquet` (`application/vnd.apache.parquet`): one row group per ROW_GROUP_ROWS rows,
 * each sent as soon as it is encoded, then the footer. Memory holds one row group's columns
 * (not the file). Every column chunk is dictionary-encoded when that at least halves it (the
 * writer decides per chunk: codes, sources, dates, repeated prices) and Snappy-compressed.
 */

export const ROW_GROUP_ROWS = 65_536;

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

/** One column of a row group, as the writer takes it: JS values, null for absent. */
function columnValues(f: Field, rows: Record<string, Value>[]): (string | number | bigint | null)[] {
  const convert = numericConverter(f);
  if (!convert) return rows.map((r) => (r[f.apiName] ?? null) as string | null);
  if (f.type === 'integer') {
    return rows.map((r) => {
      const x = convert(r[f.apiName] ?? null);
      return x === null ? null : BigInt(x);
    });
  }
  return rows.map((r) => convert(r[f.apiName] ?? null));
}

/** The answer as a Parquet file, streamed row group by row group. */
export function parquetStream(
  fields: readonly Field[],
  chunks: AsyncIterable<Record<string, Value>[]>,
): Readable {
  async function* bytes(): AsyncGenerator<Uint8Array> {
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
    for await (const rows of rechunk(chunks, ROW_GROUP_ROWS)) {
      await file.write({
        columnData: fields.map((f) => ({
          name: f.apiName,
          data: columnValues(f, rows),
          nullable: nullable(f),
        })),
        rowGroupSize: rows.length,
      });
      yield take();
    }
    await file.finish();
    yield take();
  }
  return Readable.from(bytes(), { objectMode: false });
}
