import { Type, type Static, type TObject, type TSchema, type TString } from '@sinclair/typebox';
import type { Catalog, Dataset } from '../catalog/catalog.js';
import { mustBe } from './check.js';
import { batchRecordProperties } from '../model/batch.js';
import { TIMESTAMP_PATTERN, recordDataSchema, uniqueKeySchema } from './rows.js';

export type { RecordError } from '../model/batch.js';

/**
 * The ingest contract, schema 3.0 (spec 2.3 and 2.4, decisions.md "Ingest"): the batch
 * request, its record errors and the batch status record. One literal each: request
 * validation (batch-request.ts), the OpenAPI document, the clients' types and the test
 * helpers derive from these.
 */

/** Longest identifier in meta (batch_id, source, …). */
export const MAX_ID_LENGTH = 256;

/** A meta identifier: non-empty printable text of at most 256 characters. */
const id = (description: string): TString =>
  mustBe(
    Type.String({
      minLength: 1,
      maxLength: MAX_ID_LENGTH,
      pattern: '^[^\\u0000-\\u001f]*$',
      description,
    }),
    (v) =>
      typeof v !== 'string' || v === ''
        ? 'a non-empty string'
        : `at most ${MAX_ID_LENGTH} printable characters`,
  );

/** A fixed value; anything but a non-empty string is named as such first. */
const fixed = <T extends TSchema>(schema: T): T => {
  const values = (
    'const' in schema ? [schema.const] : (schema.anyOf as { const: string }[]).map((s) => s.const)
  )
    .map((v) => `"${String(v)}"`)
    .join(' or ');
  return mustBe(schema, (v) => (typeof v !== 'string' || v === '' ? 'a non-empty string' : values));
};

/** The twelve meta fields, all required (decisions.md "Required meta"), in spec 2.3's order. */
const metaProperties = {
  schema_version: fixed(Type.Literal('3.0')),
  batch_id: id('unique batch identifier; a batch refused with 400 or 422 may be re-sent with it'),
  source_system: fixed(Type.Literal('upstream')),
  source_run_id: id('collection run identifier'),
  dataset: id('one of the catalog datasets'),
  table: id('equals dataset'),
  operation: fixed(Type.Literal('upsert')),
  snapshot_type: fixed(Type.Union([Type.Literal('incremental'), Type.Literal('full_snapshot')])),
  business_date: mustBe(
    Type.String({ format: 'date', description: 'a real calendar date; the partition of a full snapshot' }),
    'a real calendar date YYYY-MM-DD',
  ),
  source: id('data source identifier; fills an absent optional source field'),
  record_count: mustBe(
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'equals records.length' }),
    'a non-negative integer',
  ),
  send_time: mustBe(
    Type.String({ pattern: TIMESTAMP_PATTERN, description: 'ISO 8601 with an offset or Z' }),
    'an ISO 8601 timestamp with an offset or Z',
  ),
};

/** Batch metadata. Unknown meta fields are ignored. */
export const BatchMetaSchema = Type.Object(metaProperties, { title: 'BatchMeta' });

export type BatchMeta = Static<typeof BatchMetaSchema>;

export const ChecksumSchema = Type.Object(
  {
    sha256: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description:
        'lowercase hex SHA-256 of the records: of the exact bytes of the `records` value as sent, ' +
        'or of the array as RFC 8785 canonical JSON, or of compact JSON.stringify(records)',
    }),
  },
  { title: 'Checksum' },
);

/**
 * The body's parts, checked before meta (400 / 4001 naming the part). Records are checked one
 * by one later (record-validation.ts), so one bad record does not refuse the batch.
 */
export const BatchBodySchema = Type.Object({
  meta: mustBe(Type.Object({}), { field: 'meta', message: 'meta is required and must be an object' }),
  records: mustBe(Type.Array(Type.Unknown()), {
    field: 'records',
    message: 'records is required and must be an array',
  }),
  checksum: mustBe(Type.Object({ sha256: Type.String() }), {
    field: 'checksum.sha256',
    message: 'checksum.sha256 is required and must be a string',
  }),
});

/** A record of any dataset, as clients build it (each dataset's own shape: batchRequestSchema). */
export const IngestRecordSchema = Type.Object({
  idempotency_key: Type.String({ minLength: 1 }),
  unique_key: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Null()])),
  data: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Null()])),
});

export type IngestRecord = Static<typeof IngestRecordSchema>;

/** A batch request of any dataset: the type the clients, the test helpers and the bench build. */
export const IngestBatchSchema = Type.Object({
  meta: BatchMetaSchema,
  records: Type.Array(IngestRecordSchema),
  checksum: ChecksumSchema,
});

export type IngestBatch = Static<typeof IngestBatchSchema>;

/** The batch request of one dataset: meta names it, records carry its fields. */
export function batchRequestSchema(d: Dataset): TObject {
  return Type.Object(
    {
      meta: Type.Object({
        ...metaProperties,
        dataset: Type.Literal(d.name),
        table: Type.Literal(d.name),
      }),
      records: Type.Array(
        Type.Object(
          {
            idempotency_key: Type.String({
              minLength: 1,
              description: `recommended: ${d.name}:${d.key.map((k) => `<${k.name}>`).join(':')}`,
            }),
            unique_key: uniqueKeySchema(d),
            data: recordDataSchema(d),
          },
          { additionalProperties: false },
        ),
      ),
      checksum: ChecksumSchema,
    },
    { title: `${d.name}_batch` },
  );
}

/** Every dataset's batch request, for a document's `oneOf` (meta.dataset tells them apart). */
export const batchRequestSchemas = (catalog: Catalog): TObject[] => catalog.datasets.map(batchRequestSchema);

/** An answer's status: a stored record's, or `duplicate` for a batch_id processed before. */
const answerStatus = {
  status: Type.Union(['accepted', 'duplicate', 'partial', 'rejected'].map((st) => Type.Literal(st))),
};
const answerRecordProperties = { ...batchRecordProperties, ...answerStatus };

/** The batch status record (spec 2.4) as every ingest answer and status look-up carries it. */
export const BatchStatusSchema = Type.Object(
  {
    code: Type.Union([Type.Literal(0), Type.Literal(2070), Type.Literal(4221)], {
      description: '0, 2070 (partial) or 4221 (every record rejected)',
    }),
    message: Type.String(),
    ...answerRecordProperties,
  },
  { title: 'BatchStatus' },
);

export type BatchStatusAnswer = Static<typeof BatchStatusSchema>;

/** A batch as the admin API lists it: errors cut to the first few, with their full count. */
export const BatchListItemSchema = Type.Object(
  { ...answerRecordProperties, error_count: Type.Integer() },
  { title: 'BatchListItem' },
);

/** A batch as it is stored and looked up by the admin API (no answer code). */
export const BatchRecordSchema = Type.Object(answerRecordProperties, { title: 'BatchRecord' });

/** One `batch` event of the events stream: the status record without its per-record errors. */
export const BatchEventSchema = Type.Composite(
  [Type.Omit(BatchRecordSchema, ['errors']), Type.Object({ error_count: Type.Integer() })],
  { title: 'BatchEvent' },
);
