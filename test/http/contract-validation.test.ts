import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { CATALOG } from '../../src/catalog/catalog.js';
import { AppError } from '../../src/errors.js';
import { BatchMetaSchema } from '../../src/contract/batch.js';
import { KeyService } from '../../src/access/key-service.js';
import { parseBatchRequest } from '../../src/ingest/batch-request.js';
import { openApiDocument } from '../../src/http/openapi.js';
import type { Store } from '../../src/storage/store.js';
import { batch, etfBar } from '../helpers/batches.js';

/**
 * One schema per contract (issue 15): request validation derives from the same TypeBox
 * literals the OpenAPI document publishes. These tests pin the seam: the first failing field
 * in property order, the messages clients have seen, and that a standard validator reading
 * the published meta schema never refuses what the service accepts.
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
type Json = Record<string, unknown>;

const refusal = (fn: () => unknown): { message: string; field: unknown } => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError && err.code === 4001, String(err));
    return { message: err.message, field: err.extra.field };
  }
  assert.fail('accepted');
};

const good = (): Json => batch('etf_daily', [etfBar('510300', '2024-01-02')]);
const withMeta = (meta: Json): Json => ({ ...good(), meta: { ...(good().meta as Json), ...meta } });
const parse = (body: unknown) => parseBatchRequest(body, CATALOG, 100_000);

test('body and meta: the first failing field, named, in the schema order', () => {
  const cases: [unknown, string, string][] = [
    [[], 'the body must be a JSON object with meta, records and checksum', 'undefined'],
    [{ records: [], checksum: { sha256: 'x' } }, 'meta is required and must be an object', 'meta'],
    [
      { meta: {}, records: {}, checksum: { sha256: 'x' } },
      'records is required and must be an array',
      'records',
    ],
    [
      { meta: {}, records: [], checksum: {} },
      'checksum.sha256 is required and must be a string',
      'checksum.sha256',
    ],
    [withMeta({ schema_version: '2.0' }), 'meta.schema_version must be "3.0"', 'meta.schema_version'],
    [
      withMeta({ schema_version: 3 }),
      'meta.schema_version must be a non-empty string',
      'meta.schema_version',
    ],
    [withMeta({ batch_id: undefined }), 'meta.batch_id is required', 'meta.batch_id'],
    [withMeta({ batch_id: null }), 'meta.batch_id is required', 'meta.batch_id'],
    [withMeta({ batch_id: '' }), 'meta.batch_id must be a non-empty string', 'meta.batch_id'],
    [
      withMeta({ batch_id: 'b'.repeat(300) }),
      'meta.batch_id must be at most 256 printable characters',
      'meta.batch_id',
    ],
    [
      withMeta({ source: 'src\ud800' }),
      'meta.source must be at most 256 printable characters',
      'meta.source',
    ],
    [
      withMeta({ dataset: 'nope', table: 'nope' }),
      `unknown dataset "nope"; supported: ${CATALOG.datasets.map((d) => d.name).join(', ')}`,
      'meta.dataset',
    ],
    [withMeta({ table: 'stock_daily' }), 'meta.table must equal meta.dataset', 'meta.table'],
    [
      withMeta({ snapshot_type: 'delta' }),
      'meta.snapshot_type must be "incremental" or "full_snapshot"',
      'meta.snapshot_type',
    ],
    [
      withMeta({ business_date: '2024-02-30' }),
      'meta.business_date must be a real calendar date YYYY-MM-DD',
      'meta.business_date',
    ],
    [
      withMeta({ record_count: 1.5 }),
      'meta.record_count must be a non-negative integer',
      'meta.record_count',
    ],
    [
      withMeta({ record_count: 2 }),
      'meta.record_count (2) must equal the number of records (1)',
      'meta.record_count',
    ],
    [
      withMeta({ send_time: '2024-01-02T08:00:00' }),
      'meta.send_time must be an ISO 8601 timestamp with an offset or Z',
      'meta.send_time',
    ],
    [
      withMeta({ send_time: '2024-01-02T25:00:00Z' }),
      'meta.send_time must be an ISO 8601 timestamp with an offset or Z',
      'meta.send_time',
    ],
    // Two faults: the earlier field is named.
    [
      withMeta({ source_system: 'x', business_date: 'y' }),
      'meta.source_system must be "upstream"',
      'meta.source_system',
    ],
  ];
  for (const [body, message, field] of cases) {
    const r = refusal(() => parse(body));
    assert.equal(r.message, message);
    assert.equal(String(r.field), field);
  }
  // Unknown meta fields are ignored, and not carried into the parsed meta.
  const ok = parse(withMeta({ extra: 1 }));
  assert.deepEqual(Object.keys(ok.meta), Object.keys(BatchMetaSchema.properties));
});

test('the published meta schema never refuses a meta the service accepts (property)', () => {
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  const doc = openApiDocument(CATALOG, 'test') as { components: { schemas: Record<string, Json> } };
  const published = ((doc.components.schemas.etf_daily_batch as Json).properties as Json).meta as Json;
  const check = ajv.compile(published);
  const base = good().meta as Json;
  const value = fc.oneof(
    fc.string(),
    fc.constantFrom('3.0', 'upstream', 'upsert', 'incremental', 'full_snapshot', 'etf_daily'),
    fc.constantFrom(
      '2024-01-02',
      '2024-02-29',
      '2023-02-29',
      '2024-01-02T08:00Z',
      '2024-01-02 08:00:00+0800',
    ),
    fc.constantFrom('2024-01-02T08:00:00.123456789z', '2024-01-02T24:00:00Z', '', ' '),
    fc.integer({ min: -2, max: 2 }),
    fc.double(),
    fc.constant(null),
  );
  fc.assert(
    fc.property(fc.dictionary(fc.constantFrom(...Object.keys(base), 'extra'), value), (changes) => {
      const meta = {
        ...base,
        ...changes,
        record_count: 'record_count' in changes ? changes.record_count : 1,
      };
      const body = { ...good(), meta };
      let accepted = true;
      try {
        parse(body);
      } catch {
        accepted = false;
      }
      if (accepted) assert.ok(check(meta), `${JSON.stringify(meta)}: ${ajv.errorsText(check.errors)}`);
    }),
    { numRuns: 2000 },
  );
});

test('admin key bodies: checked against KeyCreate / KeyUpdate, with the same messages', async () => {
  // Validation runs before any storage call: a store that is never reached.
  const keys = new KeyService({} as Store);
  const cases: [unknown, string][] = [
    [[], 'body must be a JSON object'],
    [
      { scope: 'query', colour: 'red' },
      'unknown field(s) colour; allowed: scope, name, rate_per_minute, daily_quota',
    ],
    [{ scope: 'admin' }, 'scope must be "query" or "ingest"'],
    [{}, 'scope is required'],
    [
      { scope: 'query', name: '  ' },
      'name must be a non-empty string of at most 100 characters, without control characters',
    ],
    [
      { scope: 'query', name: 'a\u0007' },
      'name must be a non-empty string of at most 100 characters, without control characters',
    ],
    // JSON allows an escaped unpaired surrogate; no database keeps it (both store U+FFFD).
    [{ scope: 'query', name: 'a\ud800' }, 'name must be text without NUL or unpaired surrogates'],
    [
      { scope: 'query', rate_per_minute: 0 },
      'rate_per_minute must be an integer from 1 to 1000000000, or null for no limit',
    ],
    [
      { scope: 'query', daily_quota: 1.5 },
      'daily_quota must be an integer from 1 to 1000000000, or null for no limit',
    ],
  ];
  for (const [body, message] of cases) {
    await assert.rejects(
      keys.create(body),
      (err: unknown) => err instanceof AppError && err.code === 4001 && err.message === message,
    );
  }
  await assert.rejects(keys.update('id', { name: '\udc00' }), /name must be text without NUL or unpaired/);
  await assert.rejects(
    keys.update('id', { scope: 'query' }),
    /unknown field\(s\) scope; allowed: name, rate_per_minute, daily_quota/,
  );
});
