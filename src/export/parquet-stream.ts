import { RecordBatchStreamWriter, type Schema } from 'apache-arrow';
import type * as ParquetWasm from 'parquet-wasm';
import type { Field } from '../catalog/catalog.js';
import type { RowChunk } from '../model/value-columns.js';
import { VERSION } from '../version.js';
import { arrowSchema, recordBatch } from './arrow-stream.js';
import { BATCH_ROWS, ColumnBatch, columnBatches, type ColumnChunk } from './column-batch.js';

/**
 * `format=parquet` (`application/vnd.apache.parquet`), written by `parquet-wasm` (the Rust
 * `parquet` crate compiled to WebAssembly) from the same Arrow record batches as `format=arrow`,
 * so both formats carry the same typed columns (types, nullability: arrow-stream.ts). One row
 * group per ROW_GROUP_ROWS rows, sent as soon as it is encoded, then the footer: memory holds one
 * row group's encoded pages, not the file. Every column chunk is dictionary-encoded while its
 * dictionary stays small (codes, sources, dates, repeated prices), Snappy-compressed, with
 * chunk-level min/max statistics (page-level ones cost 15–20 % more CPU for no reader we serve).
 * Measured against hyparquet-writer (the pure-JS writer this replaced): docs/columnar.md.
 */

/**
 * 8,192 rows, one Arrow batch (BATCH_ROWS) per group: peak service RSS on a 1M-row export
 * measured 204–226 MB (median 211) against 226–259 MB with 16,384-row groups (12,288: 209–225
 * MB), the difference being about 24 MB of ArrayBuffers alive or not yet collected at the peak,
 * for a file 5 % larger (0.24× the CSV's bytes on etf_daily against 0.23×; 65,536-row
 * groups: 0.22×, 258–262 MB) and the same CPU. docs/columnar.md.
 */
export const ROW_GROUP_ROWS = 8_192;

type Wasm = typeof ParquetWasm;
let loaded: Promise<Wasm> | undefined;

/**
 * The module, compiled on the first Parquet answer: its 5 MB of WebAssembly cost CPU and memory
 * that a process never asked for Parquet should not pay at boot.
 */
function parquetWasm(): Promise<Wasm> {
  return (loaded ??= import('parquet-wasm'));
}

/** A batch of typed columns as a record batch in WASM memory (through Arrow IPC: a copy of its buffers). */
function wasmBatch(
  pw: Wasm,
  schema: Schema,
  fields: readonly Field[],
  batch: ColumnChunk,
): ParquetWasm.RecordBatch {
  const ipc = RecordBatchStreamWriter.writeAll([recordBatch(schema, fields, batch)]).toUint8Array(true);
  const table = pw.Table.fromIPCStream(ipc);
  try {
    const rb = table.recordBatch(0);
    if (!rb) throw new Error('parquet: the Arrow batch did not reach WASM memory');
    return rb;
  } finally {
    table.free();
  }
}

/**
 * The answer as a Parquet file, streamed row group by row group. An error while reading rows
 * ends the stream with that error before the footer: parquet-wasm's writer ignores a failing
 * input and closes the file as if complete, so the failure is kept here and thrown in place of
 * any further bytes (a reader then sees a file without its footer, never a short one that looks
 * whole).
 */
export function parquetStream(
  fields: readonly Field[],
  chunks: AsyncIterable<RowChunk>,
): AsyncGenerator<Uint8Array> {
  return parquetBatchStream(fields, columnBatches(fields, chunks, BATCH_ROWS));
}

/** As `parquetStream`, from batches of columns already made (export-formats.ts). */
export async function* parquetBatchStream(
  fields: readonly Field[],
  source: AsyncIterable<ColumnChunk>,
): AsyncGenerator<Uint8Array> {
  const pw = await parquetWasm();
  const schema = arrowSchema(fields);
  const batches = source[Symbol.asyncIterator]();
  let failure: { error: unknown } | undefined;
  let any = false;
  // Pulled by the writer one batch at a time (highWaterMark 0: nothing is read ahead of it), and
  // it waits for its output to be taken, so back-pressure reaches the row reads.
  const input = new ReadableStream<ParquetWasm.RecordBatch>(
    {
      async pull(c) {
        if (failure) {
          c.close();
          return;
        }
        try {
          const next = await batches.next();
          if (next.done !== true) c.enqueue(wasmBatch(pw, schema, fields, next.value));
          // No rows: one empty batch, so the writer still has the schema (it takes it from the first batch).
          else if (!any) c.enqueue(wasmBatch(pw, schema, fields, new ColumnBatch(fields, 0)));
          else c.close();
          any = true;
        } catch (error) {
          failure = { error };
          c.close();
        }
      },
    },
    { highWaterMark: 0 },
  );
  const props = new pw.WriterPropertiesBuilder()
    .setCompression(pw.Compression.SNAPPY)
    .setMaxRowGroupSize(ROW_GROUP_ROWS)
    .setStatisticsEnabled(pw.EnabledStatistics.Chunk)
    .setCreatedBy(`market-data-service ${VERSION}`)
    .build();
  let output: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let done = false;
  try {
    try {
      output = ((await pw.transformParquetStream(input, props)) as ReadableStream<Uint8Array>).getReader();
    } catch (err) {
      throw failure ? failure.error : err;
    }
    for (;;) {
      const next = await output.read();
      if (failure) throw failure.error;
      if (next.done === true) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) {
      // The writer's pending write fails (it ignores that) and it goes on reading its input to
      // the end: ending the batches makes that input end at once, and runs the store's finally.
      void output?.cancel().catch(() => {});
      await batches.return?.(undefined);
    }
  }
}
