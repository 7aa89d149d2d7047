import { stringify } from 'csv-stringify/sync';
import type { Field } from '../catalog/catalog.js';
import type { Value } from '../model/values.js';
import { fromColumns } from '../model/value-columns.js';
import { BATCH_ROWS, columnBatches, rebatch, valueRows, type ColumnChunk } from './column-batch.js';

/** What the code around an export needs to know of its format, so it never tests the name. */
export interface ExportTraits {
  /** The answer's Content-Type. */
  contentType: string;
  /** The media type alone (OpenAPI `x-mds-exports`, the export manifest). */
  mediaType: string;
  /** A written file's extension (`mds export`). */
  extension: string;
  /**
   * A revision trail's rows: `items` as the JSON pages hold them (nested `row`), `flat` as one
   * table, the revision columns first (a columnar or CSV file has no nesting).
   */
  trail: 'items' | 'flat';
  /** How a written file's rows are counted back (client/exporter.ts), and its header lines. */
  container: 'lines' | 'arrow' | 'parquet';
  headerLines: number;
  /** Encoded from typed columns when the source has them (ExportSource.columns). */
  columns: boolean;
}

export type ExportFormat = 'csv' | 'ndjson' | 'arrow' | 'parquet';

/**
 * The export formats of every query endpoint: the whole result of the filters (no pagination),
 * streamed from `QueryService.stream` with bounded memory. One table with each format's traits:
 * the route, the OpenAPI document, the endpoint docs, the revision trail, the clients and
 * `mds export` read them here; a format added to `ExportFormat` without its row does not compile.
 */
export const EXPORT_FORMATS = {
  csv: {
    contentType: 'text/csv; charset=utf-8',
    mediaType: 'text/csv',
    extension: 'csv',
    trail: 'flat',
    container: 'lines',
    headerLines: 1,
    columns: false,
  },
  ndjson: {
    contentType: 'application/x-ndjson; charset=utf-8',
    mediaType: 'application/x-ndjson',
    extension: 'ndjson',
    trail: 'items',
    container: 'lines',
    headerLines: 0,
    columns: false,
  },
  arrow: {
    contentType: 'application/vnd.apache.arrow.stream',
    mediaType: 'application/vnd.apache.arrow.stream',
    extension: 'arrows',
    trail: 'flat',
    container: 'arrow',
    headerLines: 0,
    columns: true,
  },
  parquet: {
    contentType: 'application/vnd.apache.parquet',
    mediaType: 'application/vnd.apache.parquet',
    extension: 'parquet',
    trail: 'flat',
    container: 'parquet',
    headerLines: 0,
    columns: true,
  },
} as const satisfies Record<ExportFormat, ExportTraits>;

/** The formats in table order, for lists in messages, documents and CLI choices. */
export const EXPORT_FORMAT_NAMES = Object.keys(EXPORT_FORMATS) as ExportFormat[];

type Rows = AsyncIterable<Record<string, Value>[]>;

/**
 * Where an export's rows come from, read one way only: as objects keyed by api name (NDJSON), or
 * as arrays of the fields' values in order (CSV writes them as they are; Arrow, Parquet copy them
 * straight into typed columns): no object per row to read, build or hand to the encoding thread
 * (QueryService.streamArrays).
 */
export interface ExportSource {
  objects(): Rows;
  arrays(): AsyncIterable<RowChunk>;
  /**
   * The rows as typed columns of the fields, for a reader that holds them so (the minute bars:
   * query/minute-columns.ts): Arrow and Parquet take them without a value per row.
   */
  columns?: () => AsyncIterable<readonly ColumnChunk[]>;
}

// The encoders take it too: it lives with the columns so that they need not import this table.
import type { RowChunk } from '../model/value-columns.js';
export type { RowChunk };

/** A source that reads objects: its arrays are made from them (e.g. the revision trail's items). */
export function objectSource(fields: readonly Field[], rows: Rows): ExportSource {
  return { objects: () => rows, arrays: () => valueRows(fields, rows) };
}

/** CSV: a header line, then each chunk's rows as value arrays (no object per row to build or clone). */
async function* csvStream(fields: readonly Field[], chunks: AsyncIterable<RowChunk>): AsyncGenerator<string> {
  yield stringify([fields.map((f) => f.apiName)]);
  for await (const c of chunks) {
    const rows = Array.isArray(c) ? c : fromColumns(c);
    yield stringify(rows, { cast: { number: (n) => String(n) } });
  }
}

/** NDJSON: each row as its object (keys in the fields' order; a trail item keeps its nesting). */
async function* ndjsonStream(chunks: Rows): AsyncGenerator<string> {
  for await (const rows of chunks) yield rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

/**
 * The body of an export: `fields` (in order) of every row `source` yields, in `format`, as
 * pieces of text or bytes made one at a time, only when the consumer asks for the next
 * (exportBody pulls them as fast as the client reads: nothing is read or encoded ahead).
 */
export function exportStream(
  format: ExportFormat,
  fields: readonly Field[],
  source: ExportSource,
): AsyncIterable<string | Uint8Array> {
  switch (format) {
    case 'csv':
      return csvStream(fields, source.arrays());
    case 'ndjson':
      return ndjsonStream(source.objects());
    case 'arrow':
      return imported(async () =>
        (await import('./arrow-stream.js')).arrowBatchStream(fields, columnSource(fields, source)),
      );
    case 'parquet':
      return imported(async () =>
        (await import('./parquet-stream.js')).parquetBatchStream(fields, columnSource(fields, source)),
      );
  }
}

/**
 * A columnar encoder's stream, its module imported at the first such export rather than at
 * start: apache-arrow alone costs a process about 0.13 s of CPU (docs/testing.md).
 */
async function* imported<T>(open: () => Promise<AsyncIterable<T>>): AsyncGenerator<T> {
  yield* await open();
}

/** The columnar formats' batches of BATCH_ROWS rows, from the source's columns when it has them. */
function columnSource(fields: readonly Field[], source: ExportSource): AsyncIterable<ColumnChunk> {
  return source.columns
    ? rebatch(fields, source.columns(), BATCH_ROWS)
    : columnBatches(fields, source.arrays(), BATCH_ROWS);
}
