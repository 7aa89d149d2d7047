import type { Catalog, Dataset } from '../catalog/catalog.js';
import { invalid } from '../errors.js';
import { firstError } from '../contract/check.js';
import { BatchBodySchema, BatchMetaSchema, type BatchMeta } from '../contract/batch.js';
import { BASELINE_BATCH, isReservedBatchId } from '../model/revisions.js';
import { isCleanText, isPlainObject, nestingExceeds, normalizeTimestamp } from '../model/values.js';

export type { BatchMeta } from '../contract/batch.js';

export interface BatchRequest {
  meta: BatchMeta;
  dataset: Dataset;
  records: unknown[];
  checksum: string;
}

/** Records nest two levels (record → data); anything far deeper is refused before hashing. */
const MAX_RECORD_DEPTH = 8;

/** Meta rules beyond the schema (contract/batch.ts), checked in the schema's property order. */
function metaRules(
  catalog: Catalog,
): Record<string, (v: unknown, meta: Record<string, unknown>) => string | null> {
  const text = (name: string) => (v: unknown) =>
    isCleanText(v as string) ? null : `meta.${name} must be at most 256 printable characters`;
  return {
    batch_id: (v) =>
      text('batch_id')(v) ??
      (isReservedBatchId(v as string)
        ? `meta.batch_id "${String(v)}" is reserved: the service records its own revisions under "${BASELINE_BATCH}" and "revert:<batch_id>"`
        : null),
    source_run_id: text('source_run_id'),
    dataset: (v) =>
      catalog.byName.has(v as string)
        ? null
        : `unknown dataset "${String(v)}"; supported: ${[...catalog.byName.keys()].join(', ')}`,
    table: (v, meta) => (v === meta.dataset ? null : 'meta.table must equal meta.dataset'),
    source: text('source'),
    send_time: (v) =>
      normalizeTimestamp(v) === null
        ? 'meta.send_time must be an ISO 8601 timestamp with an offset or Z'
        : null,
  };
}

const RULES = new WeakMap<Catalog, ReturnType<typeof metaRules>>();

/**
 * Body shape and meta (400 / 4001 naming the field), validated against the contract's
 * schemas. Runs before the checksum, so a malformed batch never reaches the registry and does
 * not use up its batch_id. The records are only counted here: each is validated later on its
 * own (record-validation.ts).
 */
export function parseBatchRequest(
  body: unknown,
  catalog: Catalog,
  maxRecords: number,
  recordCount?: number,
): BatchRequest {
  if (!isPlainObject(body)) throw invalid('the body must be a JSON object with meta, records and checksum');
  const shape = firstError(BatchBodySchema, body);
  if (shape) throw invalid(shape.message, { field: shape.field });
  const { meta, records, checksum } = body as {
    meta: Record<string, unknown>;
    records: unknown[];
    checksum: { sha256: string };
  };
  let rules = RULES.get(catalog);
  if (!rules) RULES.set(catalog, (rules = metaRules(catalog)));
  const bad = firstError(BatchMetaSchema, meta, { prefix: 'meta.', refine: rules });
  if (bad) throw invalid(bad.message, { field: bad.field });
  const m = meta as BatchMeta;
  // The columnar minute path (minute-columns.ts) has parsed the records itself: their count.
  const count = recordCount ?? records.length;
  if (count > maxRecords) {
    throw invalid(`a batch holds at most ${maxRecords} records (got ${count})`, {
      field: 'records',
    });
  }
  if (m.record_count !== count) {
    throw invalid(`meta.record_count (${m.record_count}) must equal the number of records (${count})`, {
      field: 'meta.record_count',
    });
  }
  if (m.snapshot_type === 'full_snapshot' && count === 0) {
    throw invalid('an empty full snapshot is refused: it would delete the whole partition', {
      field: 'records',
    });
  }
  if (nestingExceeds(records, MAX_RECORD_DEPTH)) {
    throw invalid(`records nest deeper than ${MAX_RECORD_DEPTH} levels`, { field: 'records' });
  }
  // The twelve fields only: unknown meta fields are ignored (decisions.md), not carried along.
  const known = Object.fromEntries(
    Object.keys(BatchMetaSchema.properties).map((k) => [k, meta[k]]),
  ) as BatchMeta;
  return {
    meta: known,
    dataset: catalog.byName.get(m.dataset) as Dataset,
    records,
    checksum: checksum.sha256,
  };
}
