import type { Catalog, Dataset } from '../catalog/catalog.js';
import { ERRORS } from '../errors.js';
import { DEFAULT_LIMIT, FORMATS, MAX_LIMIT } from '../query/parse.js';
import { batchStatusSchema, envelopeSchema, fieldSchema, rowSchema } from './schemas.js';

type Obj = Record<string, unknown>;

const errorRef = (codes: number[]): Obj => ({
  description: `error; code ${codes.join(' / ')}`,
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
            content: {
              'application/json': { schema: envelopeSchema({ $ref: `#/components/schemas/${d.name}_row` }) },
              'text/csv': {},
              'application/x-ndjson': {},
            },
          },
          304: { description: 'not modified (If-None-Match)' },
          400: errorRef([4001]),
          401: errorRef([4010, 4012]),
          403: errorRef([4030, 4031]),
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
