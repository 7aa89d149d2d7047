import type { TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../errors.js';

/**
 * The shape of an HTTP operation as data, from which the OpenAPI document is assembled
 * (openapi.ts): every route declares its operation with its handler (route-declaration.ts),
 * the query and quality endpoints derive theirs from the catalog (query-operations.ts,
 * quality-operations.ts). A route without an operation fails test/http/openapi-contract.test.ts,
 * which compares the document with the routes the app registers.
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
  /** `adjust`: the factor dataset it reads. */
  'x-mds-factors'?: string;
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
