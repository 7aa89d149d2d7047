import { Type, type TSchema } from '@sinclair/typebox';
import type { Catalog } from '../catalog/catalog.js';
import type { ErrorCode } from '../errors.js';
import { BatchEventSchema } from '../contract/batch.js';
import { HealthSchema } from '../contract/health.js';
import { McpAnswerSchema, McpRequestSchema } from '../contract/mcp.js';

/**
 * The HTTP operations as data, from which the OpenAPI document is assembled (openapi.ts): the
 * admin and ingest routes declare theirs with their handlers (route-declaration.ts), the query
 * endpoints derive theirs from the catalog (query-operations.ts), the rest are literals below.
 * A route without an operation fails test/http/openapi-contract.test.ts, which compares the document
 * with the routes the app registers.
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

export const json = (
  schema: TSchema | Record<string, unknown>,
): Record<string, TSchema | Record<string, unknown>> => ({
  'application/json': schema,
});
/** The path parameter `batch_id` of the ingest and admin routes. */
export const BATCH_ID = {
  description: 'meta.batch_id of the batch',
  example: 'etf_daily-2024-01-02-eastmoney-1',
};
/**
 * The operations not yet declared with their routes (route-declaration.ts): the event stream,
 * health, operations and MCP. Query endpoints: query-operations.ts.
 */
export function serviceOperations(catalog: Catalog): ApiOperation[] {
  const names = catalog.datasets.map((d) => d.name);
  return [
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
