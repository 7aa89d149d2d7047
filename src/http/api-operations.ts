import { Type, type TSchema } from '@sinclair/typebox';
import type { Catalog } from '../catalog/catalog.js';
import type { ErrorCode } from '../errors.js';
import {
  BatchEventSchema,
  BatchListItemSchema,
  BatchRecordSchema,
  BatchStatusSchema,
  batchRequestSchemas,
} from '../contract/batch.js';
import {
  CoverageRowSchema,
  DatasetInfoSchema,
  KeyCreateSchema,
  KeyCreatedSchema,
  KeyUpdateSchema,
  KeyViewSchema,
  KeyWithUsageSchema,
  UsageRowSchema,
  adminAnswerSchema,
} from '../contract/admin.js';
import { HealthSchema } from '../contract/health.js';
import { McpAnswerSchema, McpRequestSchema } from '../contract/mcp.js';
import { BatchChangesSchema, RevertAnswerSchema } from '../contract/revisions.js';
import { DEFAULT_BATCH_LIST, LIST_ERRORS, MAX_BATCH_LIST } from './admin-data-routes.js';
import { MAX_USAGE_HOURS } from './admin-key-routes.js';

/**
 * The HTTP operations as data: one literal per operation, from which the OpenAPI document is
 * assembled (openapi.ts). A route without an entry here (or, for query endpoints, in
 * query-operations.ts) fails test/http/openapi-contract.test.ts, which compares the document with
 * the routes the app registers.
 */

/** Who may call: the scheme in the document, and the auth errors every such call can get. */
export type Auth = 'query' | 'ingest' | 'admin' | 'none';

export interface ApiParameter {
  name: string;
  in: 'query' | 'path';
  required?: boolean;
  description: string;
  schema: TSchema | Record<string, unknown>;
  /** An example value (path parameters: what a contract tester puts in the URL). */
  example?: string;
  /** OpenAPI serialisation: exact filters take repeated values (`form`, exploded). */
  style?: 'form';
  explode?: boolean;
  /** Query filters: which kind (exact, like, range), as data for generated clients. */
  'x-mds-filter'?: 'exact' | 'like' | 'range';
  /** Code filters: the market whose code spellings they take (catalog `codes`). */
  'x-mds-code'?: 'cn' | 'us';
  /** Range filters: the row field they bound (a client splits a large pull by it). */
  'x-mds-field'?: string;
}

export interface ApiResponse {
  description: string;
  /** Media type → schema; JSON first. */
  content?: Record<string, TSchema | Record<string, unknown>>;
  headers?: Record<string, unknown>;
}

export interface ApiOperation {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  /** OpenAPI form: `{name}` for a path parameter. */
  path: string;
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  auth: Auth;
  parameters?: ApiParameter[];
  body?: TSchema | Record<string, unknown>;
  /** Answers other than errors (errors come from `errors` and `auth`). */
  responses: Record<number, ApiResponse>;
  /** Error codes this operation answers with, besides those of its auth and availability. */
  errors?: readonly ErrorCode[];
  /** Extra documentation carried as data (e.g. the schema of a stream's events). */
  extensions?: Record<string, unknown>;
}

const json = (
  schema: TSchema | Record<string, unknown>,
): Record<string, TSchema | Record<string, unknown>> => ({
  'application/json': schema,
});
/** A path parameter, with an example a contract tester (dredd) can put in the URL. */
const pathParam = (name: string, description: string, example: string): ApiParameter => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: Type.String({ minLength: 1 }),
  example,
});
const BATCH_ID_EXAMPLE = 'etf_daily-2024-01-02-eastmoney-1';
const ok = (description: string, data: TSchema): ApiResponse => ({
  description,
  content: json(adminAnswerSchema(data)),
});

/** Ingest, health, operations and admin operations (query endpoints: query-operations.ts). */
export function serviceOperations(catalog: Catalog): ApiOperation[] {
  const names = catalog.datasets.map((d) => d.name);
  const batchAnswer = (description: string): ApiResponse => ({
    description,
    content: json(BatchStatusSchema),
  });
  return [
    {
      method: 'post',
      path: '/api/v1/upstream/ingest/batches',
      operationId: 'ingest_batch',
      tags: ['ingest'],
      summary: 'Push a batch (idempotent upsert, incremental or full snapshot)',
      description:
        'Spec 4.4. Checked in this order: the key (401), the body shape and meta (400 / 4001 naming ' +
        'the field), the checksum (422 / 4220), the batch_id registry (duplicate, 409), then each ' +
        'record. The body is one of the per-dataset shapes below, told apart by `meta.dataset`; a ' +
        'record that does not match its dataset is rejected on its own (207 / 2070) and the rest of ' +
        'the batch proceeds. Request bodies may be sent with Content-Encoding gzip or deflate (415 / 4151 ' +
        'otherwise; MDS_BODY_LIMIT counts the decompressed bytes) and must be UTF-8 (400 / 4002). ' +
        'checksum.sha256: the SHA-256 of the records value exactly as sent, or of its JCS or compact form.',
      auth: 'ingest',
      // anyOf, not oneOf: the shapes differ only by meta.dataset's value, so a validator cannot
      // prove them exclusive (Redocly: 595 warnings); the service tells them apart by it.
      body: { anyOf: batchRequestSchemas(catalog) },
      responses: {
        200: batchAnswer('every record processed (status "accepted"), or a repeat (status "duplicate")'),
        207: batchAnswer('some records rejected: status "partial", code 2070, see errors'),
        422: batchAnswer('every record rejected: status "rejected", code 4221 (the batch is recorded)'),
      },
      errors: [4001, 4002, 4090, 4091, 4130, 4150, 4151, 4220],
    },
    {
      method: 'get',
      path: '/api/v1/upstream/ingest/batches/{batch_id}',
      operationId: 'ingest_batch_status',
      tags: ['ingest'],
      summary: 'Batch status record',
      description: 'Spec 2.4: the status record of a processed batch, kept at least 90 days.',
      auth: 'ingest',
      parameters: [pathParam('batch_id', 'meta.batch_id of the batch', BATCH_ID_EXAMPLE)],
      responses: { 200: batchAnswer('the batch status record') },
      errors: [4001, 4040],
    },
    {
      method: 'get',
      path: '/api/v1/upstream/ingest/events',
      operationId: 'ingest_events',
      tags: ['ingest'],
      summary: 'Server-sent events: one `batch` event per processed batch, one `revert` per revert',
      description:
        'A text/event-stream of the batches this instance processes: `event: batch` with the batch ' +
        'status record (without its per-record errors, with error_count) as `data`, whose schema is ' +
        'x-mds-event-schema; `event: revert` with batch_id, dataset, reverted_at and the counts ' +
        'restored, updated and deleted. Comment lines keep the stream alive.',
      auth: 'ingest',
      parameters: [
        {
          name: 'dataset',
          in: 'query',
          required: false,
          description: `only batches of these datasets (comma-separated): ${names.join(', ')}`,
          schema: Type.String({ pattern: `^(${names.join('|')})(,(${names.join('|')}))*$` }),
        },
      ],
      responses: {
        200: { description: 'the event stream', content: { 'text/event-stream': Type.String() } },
      },
      errors: [4001],
      extensions: { 'x-mds-event-schema': BatchEventSchema },
    },
    {
      method: 'get',
      path: '/health',
      operationId: 'health',
      tags: ['health'],
      summary: 'Health check (no key)',
      description: 'Spec 4.1: 200 with status "ok" while the database answers, else 503 with status "error".',
      auth: 'none',
      responses: {
        200: { description: 'the database answers', content: json(HealthSchema) },
        503: { description: 'the database does not answer (status "error")', content: json(HealthSchema) },
      },
    },
    {
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      tags: ['operations'],
      summary: 'Prometheus metrics (text exposition format)',
      description: 'Request counts and latency by route, ingest counts by dataset, process metrics.',
      auth: 'none',
      responses: { 200: { description: 'metrics', content: { 'text/plain': Type.String() } } },
    },
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'openapi',
      tags: ['operations'],
      summary: 'This document',
      description:
        'The OpenAPI 3.1 document, generated from the catalog, the contract schemas and the error table.',
      auth: 'none',
      responses: { 200: { description: 'the OpenAPI document', content: json(Type.Object({})) } },
    },
    ...mcpOperations(),
    ...adminOperations(names),
  ];
}

/** POST /mcp, and the 405 of GET and DELETE (docs/mcp.md); absent when MDS_MCP=off. */
function mcpOperations(): ApiOperation[] {
  const rpc = (description: string): ApiResponse => ({ description, content: json(McpAnswerSchema) });
  const notAllowed = (method: 'get' | 'delete'): ApiOperation => ({
    method,
    path: '/mcp',
    operationId: `mcp_${method}`,
    tags: ['mcp'],
    summary: 'Not allowed: the MCP endpoint is stateless',
    description: 'No server-sent stream and no session: 405 with Allow: POST, as the protocol expects.',
    auth: 'query',
    responses: { 405: rpc('a JSON-RPC error; Allow: POST') },
  });
  return [
    {
      method: 'post',
      path: '/mcp',
      operationId: 'mcp',
      tags: ['mcp'],
      summary: 'Model Context Protocol (stateless Streamable HTTP)',
      description:
        'JSON-RPC messages of MCP for AI assistants: tools list_datasets, query, quality_report, ' +
        'revision_trail and trading_days (docs/mcp.md). The query key as Q-API-KEY or ' +
        '`Authorization: Bearer <key>`; each tools/call counts as one query against its limits. ' +
        'Accept must list application/json and text/event-stream; answers are JSON. ' +
        'Absent (404) when MDS_MCP=off.',
      auth: 'query',
      body: McpRequestSchema,
      responses: {
        200: rpc('the JSON-RPC answer(s); tool errors are results with isError'),
        202: { description: 'only notifications or responses were sent: no answer' },
        400: rpc('not a JSON-RPC message (JSON-RPC error)'),
        406: rpc('Accept does not list application/json and text/event-stream (JSON-RPC error)'),
      },
      errors: [4130, 4150],
    },
    notAllowed('get'),
    notAllowed('delete'),
  ];
}

function adminOperations(names: string[]): ApiOperation[] {
  const admin = (
    method: ApiOperation['method'],
    path: string,
    operationId: string,
    summary: string,
    description: string,
    answer: ApiResponse,
    extra: Partial<ApiOperation> = {},
  ): ApiOperation => ({
    method,
    path,
    operationId,
    tags: ['admin'],
    summary,
    description,
    auth: 'admin',
    responses: { [method === 'post' && path === '/admin/api/keys' ? 201 : 200]: answer },
    ...extra,
  });
  const keyId = pathParam('id', 'the key id (from the list)', '0b9b7c9e-5d2a-4f8e-9a53-2f0c6d1e8b47');
  return [
    admin(
      'get',
      '/admin/api/keys',
      'admin_list_keys',
      'Keys with usage',
      'Every key with its usage (today, this minute, last hour); never a secret or a hash.',
      ok('the keys', Type.Array(KeyWithUsageSchema)),
    ),
    admin(
      'post',
      '/admin/api/keys',
      'admin_create_key',
      'Create a key',
      'Creates a query or ingest key. The secret is in this answer only; only its hash is stored. ' +
        'Limits apply to query keys; absent limits take the configured defaults.',
      ok('created', KeyCreatedSchema),
      { body: KeyCreateSchema, errors: [4001, 4130, 4150] },
    ),
    admin(
      'get',
      '/admin/api/keys/{id}',
      'admin_get_key',
      'One key with usage',
      'One key and its usage.',
      ok('the key', KeyWithUsageSchema),
      {
        parameters: [keyId],
        errors: [4041],
      },
    ),
    admin(
      'patch',
      '/admin/api/keys/{id}',
      'admin_update_key',
      'Change name, rate or quota',
      'Absent fields stay as they are; null clears a limit. Effective within 2 s on every instance.',
      ok('the updated key', KeyViewSchema),
      { parameters: [keyId], body: KeyUpdateSchema, errors: [4001, 4041, 4130, 4150] },
    ),
    admin(
      'post',
      '/admin/api/keys/{id}/revoke',
      'admin_revoke_key',
      'Revoke a key',
      'Idempotent (a revoked key keeps its first revocation time); effective within 2 s on every instance.',
      ok('the revoked key', KeyViewSchema),
      { parameters: [keyId], errors: [4041, 4130, 4150] },
    ),
    admin(
      'get',
      '/admin/api/usage',
      'admin_usage',
      'Requests per key and UTC hour',
      'Stored hourly request counts of the last `hours` UTC hours (the current one included), oldest first.',
      ok('hourly counts', Type.Array(UsageRowSchema)),
      {
        parameters: [
          {
            name: 'hours',
            in: 'query',
            description: 'how many UTC hours back',
            schema: Type.Integer({ minimum: 1, maximum: MAX_USAGE_HOURS, default: 24 }),
          },
        ],
        errors: [4001],
      },
    ),
    admin(
      'get',
      '/admin/api/batches',
      'admin_batches',
      'Recent batches',
      `Newest first; each carries at most its first ${LIST_ERRORS} errors and error_count.`,
      ok('batches', Type.Array(BatchListItemSchema)),
      {
        parameters: [
          {
            name: 'dataset',
            in: 'query',
            description: 'only this dataset',
            schema: Type.String({ enum: names }),
          },
          {
            name: 'status',
            in: 'query',
            description: 'only this status',
            schema: Type.String({ enum: ['accepted', 'partial', 'rejected'] }),
          },
          {
            name: 'limit',
            in: 'query',
            description: `at most this many (larger values are clamped to ${MAX_BATCH_LIST})`,
            schema: Type.Integer({ minimum: 1, default: DEFAULT_BATCH_LIST }),
          },
        ],
        errors: [4001],
      },
    ),
    admin(
      'get',
      '/admin/api/batches/{batch_id}',
      'admin_batch',
      'One batch with every error',
      'The stored status record of a batch, every error included.',
      ok('the batch', BatchRecordSchema),
      { parameters: [pathParam('batch_id', 'meta.batch_id of the batch', BATCH_ID_EXAMPLE)], errors: [4040] },
    ),
    admin(
      'post',
      '/admin/api/batches/{batch_id}/revert',
      'admin_revert_batch',
      'Revert a batch',
      'Puts back, for every row the batch changed, the version before it, in one transaction, as new ' +
        'revisions of batch revert:<batch_id> (docs/point-in-time.md). 409 / 4092 when a later batch ' +
        'changed any of those rows (conflicts: up to 100 keys), 409 / 4093 when what it replaced is not ' +
        'kept; nothing changes then. A batch reverted before: zero counts.',
      ok('what was put back', RevertAnswerSchema),
      {
        parameters: [pathParam('batch_id', 'meta.batch_id of the batch', BATCH_ID_EXAMPLE)],
        errors: [4040, 4092, 4093],
      },
    ),
    admin(
      'get',
      '/admin/api/batches/{batch_id}/changes',
      'admin_batch_changes',
      'What a batch changed',
      'The revisions the batch wrote: counts per op and a sample with the values before and after.',
      ok('the changes', BatchChangesSchema),
      { parameters: [pathParam('batch_id', 'meta.batch_id of the batch', BATCH_ID_EXAMPLE)], errors: [4040] },
    ),
    admin(
      'get',
      '/admin/api/coverage',
      'admin_coverage',
      'Rows per dataset',
      'Per dataset in catalog order: rows, first and last date, last batch.',
      ok('coverage', Type.Array(CoverageRowSchema)),
    ),
    admin(
      'get',
      '/admin/api/datasets',
      'admin_datasets',
      'The catalog',
      'Dataset names, endpoints, layers and descriptions.',
      ok('datasets', Type.Array(DatasetInfoSchema)),
    ),
  ];
}
