import type { Catalog, Dataset } from '../catalog/catalog.js';
import { invalid } from '../errors.js';
import { isCleanText, isDate, isPlainObject, nestingExceeds, normalizeTimestamp } from './values.js';

/** The twelve required meta fields of spec 2.3, validated (decisions.md "Required meta"). */
export interface BatchMeta {
  schema_version: '3.0';
  batch_id: string;
  source_system: 'upstream';
  source_run_id: string;
  dataset: string;
  table: string;
  operation: 'upsert';
  snapshot_type: 'incremental' | 'full_snapshot';
  business_date: string;
  source: string;
  record_count: number;
  send_time: string;
}

export interface BatchRequest {
  meta: BatchMeta;
  dataset: Dataset;
  records: unknown[];
  checksum: string;
}

/** Records nest two levels (record → data); anything far deeper is refused before hashing. */
const MAX_RECORD_DEPTH = 8;
const MAX_ID_LENGTH = 256;

function text(meta: Record<string, unknown>, name: string): string {
  const v = meta[name];
  if (v === undefined || v === null) throw invalid(`meta.${name} is required`, { field: `meta.${name}` });
  if (typeof v !== 'string' || v.length === 0) {
    throw invalid(`meta.${name} must be a non-empty string`, { field: `meta.${name}` });
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (v.length > MAX_ID_LENGTH || !isCleanText(v) || /[\u0000-\u001f]/.test(v)) {
    throw invalid(`meta.${name} must be at most ${MAX_ID_LENGTH} printable characters`, {
      field: `meta.${name}`,
    });
  }
  return v;
}

function fixed<T extends string>(meta: Record<string, unknown>, name: string, allowed: readonly T[]): T {
  const v = text(meta, name);
  if (!(allowed as readonly string[]).includes(v)) {
    throw invalid(`meta.${name} must be ${allowed.map((a) => `"${a}"`).join(' or ')}`, {
      field: `meta.${name}`,
    });
  }
  return v as T;
}

/**
 * Body shape and meta (400 / 4001). Runs before the checksum, so a malformed batch never
 * reaches the registry and does not use up its batch_id.
 */
export function parseBatchRequest(body: unknown, catalog: Catalog, maxRecords: number): BatchRequest {
  if (!isPlainObject(body)) throw invalid('the body must be a JSON object with meta, records and checksum');
  const { meta, records, checksum } = body;
  if (!isPlainObject(meta)) throw invalid('meta is required and must be an object', { field: 'meta' });
  if (!Array.isArray(records))
    throw invalid('records is required and must be an array', { field: 'records' });
  if (!isPlainObject(checksum) || typeof checksum.sha256 !== 'string') {
    throw invalid('checksum.sha256 is required and must be a string', { field: 'checksum.sha256' });
  }

  const schemaVersion = fixed(meta, 'schema_version', ['3.0'] as const);
  const batchId = text(meta, 'batch_id');
  const sourceSystem = fixed(meta, 'source_system', ['upstream'] as const);
  const sourceRunId = text(meta, 'source_run_id');
  const datasetName = text(meta, 'dataset');
  const dataset = catalog.byName.get(datasetName);
  if (!dataset) {
    throw invalid(`unknown dataset "${datasetName}"; supported: ${[...catalog.byName.keys()].join(', ')}`, {
      field: 'meta.dataset',
    });
  }
  const table = text(meta, 'table');
  if (table !== datasetName) throw invalid('meta.table must equal meta.dataset', { field: 'meta.table' });
  const operation = fixed(meta, 'operation', ['upsert'] as const);
  const snapshotType = fixed(meta, 'snapshot_type', ['incremental', 'full_snapshot'] as const);
  const businessDate = text(meta, 'business_date');
  if (!isDate(businessDate)) {
    throw invalid('meta.business_date must be a real calendar date YYYY-MM-DD', {
      field: 'meta.business_date',
    });
  }
  const source = text(meta, 'source');
  const sendTime = text(meta, 'send_time');
  if (normalizeTimestamp(sendTime) === null) {
    throw invalid('meta.send_time must be an ISO 8601 timestamp with an offset or Z', {
      field: 'meta.send_time',
    });
  }
  const recordCount = meta.record_count;
  if (recordCount === undefined || recordCount === null) {
    throw invalid('meta.record_count is required', { field: 'meta.record_count' });
  }
  if (typeof recordCount !== 'number' || !Number.isSafeInteger(recordCount) || recordCount < 0) {
    throw invalid('meta.record_count must be a non-negative integer', { field: 'meta.record_count' });
  }
  if (records.length > maxRecords) {
    throw invalid(`a batch holds at most ${maxRecords} records (got ${records.length})`, {
      field: 'records',
    });
  }
  if (recordCount !== records.length) {
    throw invalid(`meta.record_count (${recordCount}) must equal the number of records (${records.length})`, {
      field: 'meta.record_count',
    });
  }
  if (snapshotType === 'full_snapshot' && records.length === 0) {
    throw invalid('an empty full snapshot is refused: it would delete the whole partition', {
      field: 'records',
    });
  }
  if (nestingExceeds(records, MAX_RECORD_DEPTH)) {
    throw invalid(`records nest deeper than ${MAX_RECORD_DEPTH} levels`, { field: 'records' });
  }
  const sha = checksum.sha256;
  return {
    meta: {
      schema_version: schemaVersion,
      batch_id: batchId,
      source_system: sourceSystem,
      source_run_id: sourceRunId,
      dataset: datasetName,
      table,
      operation,
      snapshot_type: snapshotType,
      business_date: businessDate,
      source,
      record_count: recordCount,
      send_time: sendTime,
    },
    dataset,
    records,
    checksum: sha,
  };
}
