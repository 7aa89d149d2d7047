/**
 * The package's library entry: the typed query client, the upstream push client and the
 * dataset catalog (types and the compiled catalog). The service itself starts from
 * `dist/main.js` (`npm start`); the command line is `mds`.
 */
export * from './client/query-client.js';
export {
  IngestClient,
  type IngestClientOptions,
  type PushAnswer,
  type PushResult,
} from './client/ingest-client.js';
export {
  buildBatch,
  buildBatches,
  contentBatchId,
  toRecord,
  type IngestBatch,
  type IngestRecord,
  type RowData,
} from './client/batch-builder.js';
export { batchChecksum } from './ingest/checksum.js';
export { CATALOG, type Catalog, type Dataset, type Field } from './catalog/catalog.js';
export type { DatasetDeclaration, FieldDetail, FieldSpec, FieldType } from './catalog/types.js';
