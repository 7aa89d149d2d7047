import type { Catalog, Dataset } from '../catalog/catalog.js';
import { ERRORS } from '../errors.js';
import { DEFAULT_LIMIT, FORMATS, MAX_LIMIT } from '../query/parse.js';
import { batchStatusSchema, envelopeSchema, fieldSchema, rowSchema } from './schemas.js';

type Obj = Record<string, unknown>;

/** Headers on every authenticated query response (draft-ietf-httpapi-ratelimit-headers). */
const LIMIT_HEADERS: Obj = {
  RateLimit: {
    description: 'remaining requests and seconds to reset, per policy',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: "the key's policies: minute rate and UTC-day quota",
    schema: { type: 'string' },
  },
};

const errorRef = (codes: number[], headers: Obj = {}): Obj => ({
  description: `error; code ${codes.join(' / ')}`,
  headers,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/QueryError' } } },
});

function queryParameters(d: Dataset): Obj[] {
  const params: Obj[] = [];
  for (const f of d.exact) {
    params.push({
      name: f.apiName,
      in: 'query',
      required: false,
      description: 'exact match',
      schema: { ...fieldSchema({ ...f, required: true }), type: 'string' },
    });
  }
  for (const f of d.like) {
    params.push({
      name: f.apiName,
      in: 'query',
      required: false,
      description: 'contains, case-insensitive (% and _ are literal)',
      schema: { type: 'string' },
    });
  }
  if (d.range) {
    for (const n of ['date_from', 'date_to']) {
      params.push({
        name: n,
        in: 'query',
        required: false,
        description: `inclusive bound on ${d.range.apiName}`,
        schema: { type: 'string', format: 'date' },
      });
    }
  }
  const fields = d.rowFields.map((f) => f.apiName);
  params.push(
    {
      name: 'limit',
      in: 'query',
      schema: { type: 'integer', minimum: 1, default: DEFAULT_LIMIT },
      description: `rows per page; values above ${MAX_LIMIT} are clamped to ${MAX_LIMIT}`,
    },
    { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
    { name: 'sort', in: 'query', schema: { type: 'string', enum: fields, default: d.sort.field.apiName } },
    { name: 'order', in: 'query', schema: { type: 'string', enum: ['asc', 'desc'], default: d.sort.order } },
    {
      name: 'fields',
      in: 'query',
      schema: { type: 'string' },
      description: `comma-separated subset of: ${fields.join(', ')}`,
    },
    {
      name: 'format',
      in: 'query',
      schema: { type: 'string', enum: [...FORMATS], default: 'json' },
      description: 'csv and ndjson stream the whole result (no pagination)',
    },
    {
      name: 'cursor',
      in: 'query',
      schema: { type: 'string' },
      description: 'keyset pagination: meta.next_cursor of the previous page of the same query',
    },
  );
  return params;
}

function ingestDataSchema(d: Dataset): Obj {
  return {
    type: 'object',
    additionalProperties: false,
    required: d.fields.filter((f) => f.required).map((f) => f.name),
    properties: Object.fromEntries(d.fields.map((f) => [f.name, fieldSchema(f)])),
  };
}

/** The OpenAPI 3.1 document, generated from the catalog and the error table. */
export function openApiDocument(catalog: Catalog, version: string): Obj {
  const paths: Obj = {};
  const schemas: Obj = {
    QueryError: envelopeSchema({ type: 'object' }),
    BatchStatus: batchStatusSchema,
    IngestError: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' } },
    },
  };
  for (const d of catalog.datasets) {
    schemas[`${d.name}_row`] = rowSchema(d);
    schemas[`${d.name}_data`] = ingestDataSchema(d);
    paths[d.endpoint] = {
      get: {
        operationId: `query_${d.name}`,
        tags: [d.layer],
        summary: d.description,
        description: `Dataset \`${d.name}\`. Default sort ${d.sort.field.apiName} ${d.sort.order}; ties broken by the unique key (${d.key.map((k) => k.apiName).join(', ')}).${d.range ? ` date_from/date_to apply to ${d.range.apiName}.` : ''}`,
        security: [{ QueryKey: [] }],
        parameters: queryParameters(d),
        responses: {
          200: {
            description: 'rows in the envelope',
            headers: {
              ...LIMIT_HEADERS,
              ETag: { description: 'changes when a batch changes the dataset', schema: { type: 'string' } },
            },
            content: {
              'application/json': { schema: envelopeSchema({ $ref: `#/components/schemas/${d.name}_row` }) },
              'text/csv': {},
              'application/x-ndjson': {},
            },
          },
          304: { description: 'not modified (If-None-Match)', headers: LIMIT_HEADERS },
          400: errorRef([4001], LIMIT_HEADERS),
          401: errorRef([4010, 4012]),
          403: errorRef([4030, 4031], { ...LIMIT_HEADERS, 'Retry-After': { schema: { type: 'integer' } } }),
          429: errorRef([4290]),
          503: errorRef([5030]),
        },
      },
    };
  }
  const ingestErr = (codes: number[]) => ({
    description: `code ${codes.join(' / ')}`,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/IngestError' } } },
  });
  const batchResp = (d: string) => ({
    description: d,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/BatchStatus' } } },
  });
  paths['/api/v1/upstream/ingest/batches'] = {
    post: {
      operationId: 'ingest_batch',
      tags: ['ingest'],
      summary: 'Push a batch (idempotent upsert, incremental or full snapshot)',
      security: [{ IngestKey: [] }],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['meta', 'records', 'checksum'],
              properties: {
                meta: {
                  type: 'object',
                  required: [
                    'schema_version',
                    'batch_id',
                    'source_system',
                    'source_run_id',
                    'dataset',
                    'table',
                    'operation',
                    'snapshot_type',
                    'business_date',
                    'source',
                    'record_count',
                    'send_time',
                  ],
                  properties: {
                    schema_version: { const: '3.0' },
                    batch_id: { type: 'string' },
                    source_system: { const: 'upstream' },
                    source_run_id: { type: 'string' },
                    dataset: { type: 'string', enum: catalog.datasets.map((d) => d.name) },
                    table: { type: 'string', description: 'equals dataset' },
                    operation: { const: 'upsert' },
                    snapshot_type: { enum: ['incremental', 'full_snapshot'] },
                    business_date: { type: 'string', format: 'date' },
                    source: { type: 'string' },
                    record_count: { type: 'integer', minimum: 0 },
                    send_time: { type: 'string', format: 'date-time' },
                  },
                },
                records: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['idempotency_key', 'unique_key', 'data'],
                    properties: {
                      idempotency_key: { type: 'string', minLength: 1 },
                      unique_key: { type: 'object' },
                      data: {
                        oneOf: catalog.datasets.map((d) => ({ $ref: `#/components/schemas/${d.name}_data` })),
                      },
                    },
                  },
                },
                checksum: {
                  type: 'object',
                  required: ['sha256'],
                  properties: {
                    sha256: {
                      type: 'string',
                      description:
                        'hex SHA-256 of records as JCS (RFC 8785), or of compact JSON.stringify(records)',
                    },
                  },
                },
              },
            },
          },
        },
      },
      responses: {
        200: batchResp('accepted, or duplicate (status "duplicate")'),
        207: batchResp('partial (code 2070)'),
        400: ingestErr([4001]),
        401: ingestErr([4010, 4012]),
        409: ingestErr([4090, 4091]),
        413: ingestErr([4130]),
        415: ingestErr([4150]),
        422: {
          description: 'checksum mismatch (4220) or every record rejected (4221, batch status record)',
          content: {
            'application/json': {
              schema: {
                oneOf: [
                  { $ref: '#/components/schemas/IngestError' },
                  { $ref: '#/components/schemas/BatchStatus' },
                ],
              },
            },
          },
        },
        429: ingestErr([4290]),
        503: ingestErr([5030]),
      },
    },
  };
  paths['/api/v1/upstream/ingest/batches/{batch_id}'] = {
    get: {
      operationId: 'ingest_batch_status',
      tags: ['ingest'],
      summary: 'Batch status record',
      security: [{ IngestKey: [] }],
      parameters: [{ name: 'batch_id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        200: batchResp('the batch status record'),
        401: ingestErr([4010, 4012]),
        404: ingestErr([4040]),
      },
    },
  };
  paths['/health'] = {
    get: {
      operationId: 'health',
      tags: ['health'],
      summary: 'Health check (no key)',
      responses: {
        200: {
          description: 'database reachable',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  status: { const: 'ok' },
                  version: { type: 'string' },
                  storage: { type: 'string' },
                },
              },
            },
          },
        },
        503: { description: 'database unreachable; status "error"' },
      },
    },
  };
  Object.assign(paths, adminPaths(), opsPaths());
  return {
    openapi: '3.1.0',
    info: {
      title: 'market-data-service',
      version,
      description:
        'Batch ingest and read-only query interface for market data. Every query endpoint is generated from the dataset catalog.',
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'standardized', description: 'Standardized market data layer' },
      { name: 'features', description: 'Feature factor layer' },
      { name: 'query', description: 'ETF, A-share, index, macro and market datasets' },
      { name: 'us', description: 'US stocks (SEC EDGAR)' },
      { name: 'ingest', description: 'Batch ingest interface (schema 3.0)' },
      { name: 'health', description: 'Health check' },
      { name: 'admin', description: 'Keys, usage, batches and coverage (bearer MDS_ADMIN_TOKEN)' },
      { name: 'operations', description: 'Metrics and the batch event stream' },
    ],
    paths,
    components: {
      schemas,
      securitySchemes: {
        QueryKey: { type: 'apiKey', in: 'header', name: 'Q-API-KEY' },
        IngestKey: { type: 'apiKey', in: 'header', name: 'UP-API-KEY' },
        AdminToken: { type: 'http', scheme: 'bearer' },
      },
    },
    'x-error-codes': Object.entries(ERRORS).map(([code, e]) => ({
      code: Number(code),
      status: e.status,
      message: e.message,
    })),
  };
}

const adminData = (description: string, data: Obj = { type: 'object' }): Obj => ({
  description,
  content: {
    'application/json': {
      schema: { type: 'object', properties: { code: { const: 0 }, message: { type: 'string' }, data } },
    },
  },
});

function adminOp(operationId: string, summary: string, extra: Obj = {}, ok: Obj = adminData('ok')): Obj {
  return {
    operationId,
    tags: ['admin'],
    summary,
    security: [{ AdminToken: [] }],
    ...extra,
    responses: {
      200: ok,
      400: { description: 'code 4001' },
      401: { description: 'code 4010 / 4012' },
      404: { description: 'code 4040 / 4041' },
    },
  };
}

const idParam = (name: string): Obj => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const keyBody = (required: string[]): Obj => ({
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required,
          properties: {
            scope: { enum: ['query', 'ingest'] },
            name: { type: 'string' },
            rate_per_minute: { type: ['integer', 'null'], minimum: 1 },
            daily_quota: { type: ['integer', 'null'], minimum: 1 },
          },
        },
      },
    },
  },
});

/** The admin API (issue 4 and the dashboard's data). */
function adminPaths(): Obj {
  return {
    '/admin/api/keys': {
      get: adminOp('admin_list_keys', 'Keys with usage (today, this minute, last hour); never secrets'),
      post: adminOp(
        'admin_create_key',
        'Create a key; the secret is in this answer only',
        keyBody(['scope']),
        adminData('created (201)'),
      ),
    },
    '/admin/api/keys/{id}': {
      get: adminOp('admin_get_key', 'One key with usage', { parameters: [idParam('id')] }),
      patch: adminOp('admin_update_key', 'Change name, rate or quota (null clears a limit)', {
        parameters: [idParam('id')],
        ...keyBody([]),
      }),
    },
    '/admin/api/keys/{id}/revoke': {
      post: adminOp('admin_revoke_key', 'Revoke a key (effective within 2 s on every instance)', {
        parameters: [idParam('id')],
      }),
    },
    '/admin/api/usage': {
      get: adminOp('admin_usage', 'Requests per key and UTC hour', {
        parameters: [{ name: 'hours', in: 'query', schema: { type: 'integer', minimum: 1, default: 24 } }],
      }),
    },
    '/admin/api/batches': {
      get: adminOp('admin_batches', 'Recent batches (errors cut to the first 10; see error_count)', {
        parameters: ['dataset', 'status', 'limit'].map((name) => ({
          name,
          in: 'query',
          schema: { type: 'string' },
        })),
      }),
    },
    '/admin/api/batches/{batch_id}': {
      get: adminOp('admin_batch', 'One batch status record with every error', {
        parameters: [idParam('batch_id')],
      }),
    },
    '/admin/api/coverage': {
      get: adminOp('admin_coverage', 'Rows, first and last date, last batch per dataset'),
    },
    '/admin/api/datasets': {
      get: adminOp('admin_datasets', 'The catalog: dataset names and endpoints'),
    },
  };
}

function opsPaths(): Obj {
  return {
    '/metrics': {
      get: {
        operationId: 'metrics',
        tags: ['operations'],
        summary: 'Prometheus metrics (text exposition format)',
        responses: { 200: { description: 'metrics', content: { 'text/plain': {} } } },
      },
    },
    '/api/v1/upstream/ingest/events': {
      get: {
        operationId: 'ingest_events',
        tags: ['ingest'],
        summary: 'Server-sent events: one `batch` event per processed batch',
        security: [{ IngestKey: [] }],
        responses: {
          200: { description: 'an event stream', content: { 'text/event-stream': {} } },
          401: { description: 'code 4010 / 4012' },
        },
      },
    },
  };
}
