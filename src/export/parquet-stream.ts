import { Readable } from 'node:stream';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { Field } from '../catalog/catalog.js';
import type { Value } from '../storage/store.js';
import { VERSION } from '../version.js';
import { nullable, numericConverter, type Converter } from './column-values.js';

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

type Cell = string | number | bigint | null;

/**
 * Appends rows to the row group's columns, converted to what the writer takes (numbers, BigInt
 * for int64, text, null): the row objects can be freed chunk by chunk, only columns are held.
 */
function appendColumns(
  fields: readonly Field[],
  converters: readonly (Converter | null)[],
  columns: Cell[][],
  rows: readonly Record<string, Value>[],
): void {
  fields.forEach((f, j) => {
    const col = columns[j] as Cell[];
    const convert = converters[j];
    const name = f.apiName;
    if (!convert) for (const r of rows) col.push((r[name] ?? null) as string | null);
    else if (f.type === 'integer')
      for (const r of rows) {
        const x = convert(r[name] ?? null);
        col.push(x === null ? null : BigInt(x));
      }
    else for (const r of rows) col.push(convert(r[name] ?? null));
  });
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
    const converters = fields.map(numericConverter);
    let columns: Cell[][] = fields.map(() => []);
    const group = async (): Promise<void> => {
      await file.write({
        columnData: fields.map((f, j) => ({
          name: f.apiName,
          data: columns[j] as Cell[],
          nullable: nullable(f),
        })),
        rowGroupSize: (columns[0] as Cell[]).length,
      });
      columns = fields.map(() => []);
    };
    yield take();
    for await (const rows of chunks) {
      appendColumns(fields, converters, columns, rows);
      if ((columns[0] as Cell[]).length >= ROW_GROUP_ROWS) {
        await group();
        yield take();
      }
    }
    if ((columns[0] as Cell[]).length > 0) await group();
    await file.finish();
    yield take();
  }
  return Readable.from(bytes(), { objectMode: false });
}
