import { stringify } from 'csv-stringify/sync';
import type { Field } from '../catalog/catalog.js';
import type { Value } from '../storage/store.js';
import { arrowStream } from './arrow-stream.js';
import { parquetStream } from './parquet-stream.js';
import { valueRows } from './column-batch.js';

/**
 * The export formats of every query endpoint: the whole result of the filters (no pagination),
 * streamed from `QueryService.stream` with bounded memory. One table: the route, the OpenAPI
 * document, the clients and `mds export` read their media types and file extensions here.
 */
export const EXPORT_FORMATS = {
  csv: { contentType: 'text/csv; charset=utf-8', mediaType: 'text/csv', extension: 'csv' },
  ndjson: {
    contentType: 'application/x-ndjson; charset=utf-8',
    mediaType: 'application/x-ndjson',
    extension: 'ndjson',
  },
  arrow: {
    contentType: 'application/vnd.apache.arrow.stream',
    mediaType: 'application/vnd.apache.arrow.stream',
    extension: 'arrows',
  },
  parquet: {
    contentType: 'application/vnd.apache.parquet',
    mediaType: 'application/vnd.apache.parquet',
    extension: 'parquet',
  },
} as const;

export type ExportFormat = keyof typeof EXPORT_FORMATS;

type Rows = AsyncIterable<Record<string, Value>[]>;

/**
 * Where an export's rows come from, read one way only: as objects keyed by api name (CSV,
 * NDJSON), or as arrays of the fields' values in order (Arrow, Parquet copy those straight into
 * typed columns, without an object per row: QueryService.streamArrays).
 */
export interface ExportSource {
  objects(): Rows;
  arrays(): AsyncIterable<Value[][]>;
}

/** A source that reads objects: its arrays are made from them (e.g. the revision trail's items). */
export function objectSource(fields: readonly Field[], rows: Rows): ExportSource {
  return { objects: () => rows, arrays: () => valueRows(fields, rows) };
}

async function* textStream(
  fields: readonly Field[],
  chunks: Rows,
  format: 'csv' | 'ndjson',
): AsyncGenerator<string> {
  const columns = fields.map((f) => f.apiName);
  if (format === 'csv') yield stringify([columns]);
  for await (const rows of chunks) {
    yield format === 'csv'
      ? stringify(rows, { columns, cast: { number: (n) => String(n) } })
      : rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  }
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
    case 'ndjson':
      return textStream(fields, source.objects(), format);
    case 'arrow':
      return arrowStream(fields, source.arrays());
    case 'parquet':
      return parquetStream(fields, source.arrays());
  }
}
