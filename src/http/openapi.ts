import type { Catalog } from '../catalog/catalog.js';
import { ERRORS, type ErrorCode } from '../errors.js';
import { ErrorSchema, QueryErrorSchema } from '../contract/envelope.js';
import { Type } from '@sinclair/typebox';
import { json, type ApiOperation, type ApiResponse, type Auth } from './api-operations.js';
import { eventsRoute } from './events-routes.js';
import { UNIVERSE_ROUTE } from './universe-route.js';
import { changesRoute } from './changes-routes.js';
import { HEALTH_ROUTE } from './health-route.js';
import { METRICS_ROUTE } from './metrics-routes.js';
import { MCP_ROUTES } from './mcp-plugin.js';
import { route } from './route-declaration.js';
import { queryOperations } from './query-operations.js';
import { qualityOperations } from './quality-operations.js';
import { ingestRoutes } from './ingest-routes.js';
import { ADMIN_ROUTES } from './admin-plugin.js';

/**
 * The OpenAPI 3.1 document, assembled from data: the operations (api-operations.ts and the
 * catalog's query-operations.ts), the contract schemas (src/contract) and the error table.
 * Schemas with a `title` become components and are referenced by name.
 */

type Obj = Record<string, unknown>;

const SECURITY: Record<Auth, Obj[]> = {
  query: [{ QueryKey: [] }],
  ingest: [{ IngestKey: [] }],
  admin: [{ AdminToken: [] }],
  none: [],
};

/** Errors every call of an interface can get: its auth, the failed-auth guard, availability. */
const AUTH_ERRORS: Record<Auth, readonly ErrorCode[]> = {
  query: [4010, 4012, 4030, 4031, 4290],
  ingest: [4010, 4012, 4290],
  admin: [4010, 4012, 4290],
  none: [],
};
const AVAILABILITY_ERRORS: readonly ErrorCode[] = [5000, 5030];

/** Errors of the HTTP exchange itself, for any path: listed once in the document's description. */
const PROTOCOL_ERRORS: readonly ErrorCode[] = [4041, 4050, 4080, 4310];

const RETRY_AFTER = { description: 'seconds to wait before retrying', schema: { type: 'integer' } };

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

const TAGS: Record<string, string> = {
  standardized: 'Standardized market data layer',
  features: 'Feature factor layer',
  query: 'ETF, A-share, index, macro and market datasets',
  us: 'US stocks (SEC EDGAR)',
  reference: 'Reference data for research-grade bars',
  ingest: 'Batch ingest interface (schema 3.0)',
  health: 'Health check',
  admin: 'Keys, usage, batches and coverage (bearer MDS_ADMIN_TOKEN)',
  operations: 'Metrics and this document',
  revisions: 'Revision trails of each dataset (docs/point-in-time.md)',
  mcp: 'Model Context Protocol for AI assistants (docs/mcp.md)',
};

/** Plain JSON of a schema tree; titled schemas are hoisted into `components` and referenced. */
function emitter(components: Obj): (v: unknown) => unknown {
  const emit = (v: unknown, hoist = true): unknown => {
    if (Array.isArray(v)) return v.map((x) => emit(x));
    if (typeof v !== 'object' || v === null) return v;
    const o = v as Obj;
    if (hoist && typeof o.title === 'string' && /^[A-Za-z0-9._-]+$/.test(o.title)) {
      if (!(o.title in components)) {
        components[o.title] = {}; // reserved first: a schema may refer to itself
        components[o.title] = emit(o, false);
      }
      return { $ref: `#/components/schemas/${o.title}` };
    }
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, emit(x)]));
  };
  return emit;
}

/** The error answer of some codes of one status: the interface's error shape, codes enumerated. */
function errorSchema(path: string, codes: readonly ErrorCode[]): Obj {
  const base =
    path.startsWith('/api/v1/') && !path.startsWith('/api/v1/upstream/') ? QueryErrorSchema : ErrorSchema;
  return { allOf: [base, { type: 'object', properties: { code: { enum: [...codes] } } }] };
}

function responses(op: ApiOperation, emit: (v: unknown) => unknown): Obj {
  const codes = [...AUTH_ERRORS[op.auth], ...(op.errors ?? []), ...AVAILABILITY_ERRORS];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) {
    const list = byStatus.get(ERRORS[c].status) ?? [];
    if (!list.includes(c)) list.push(c);
    byStatus.set(ERRORS[c].status, list);
  }
  const isQuery = op.auth === 'query';
  const out: Obj = {};
  const statuses = [...new Set([...Object.keys(op.responses).map(Number), ...byStatus.keys()])].sort(
    (a, b) => a - b,
  );
  for (const status of statuses) {
    const declared: ApiResponse | undefined = op.responses[status];
    const errs = byStatus.get(status);
    const headers: Obj = { ...(declared?.headers ?? {}) };
    if (isQuery && status !== 401 && status < 500) Object.assign(headers, LIMIT_HEADERS);
    if (status === 403 || status === 429 || status === 503 || (errs?.includes(4091) ?? false))
      headers['Retry-After'] = RETRY_AFTER;
    const description = [declared?.description, errs?.map((c) => `${c} ${ERRORS[c].message}`).join('; ')]
      .filter(Boolean)
      .join('; or code ');
    const content: Obj = {};
    for (const [type, schema] of Object.entries(declared?.content ?? {})) {
      content[type] = {
        schema: emit(
          errs && type === 'application/json' ? { oneOf: [schema, errorSchema(op.path, errs)] } : schema,
        ),
      };
    }
    if (errs && !content['application/json']) {
      content['application/json'] = { schema: emit(errorSchema(op.path, errs)) };
    }
    out[status] = {
      description,
      ...(Object.keys(headers).length ? { headers } : {}),
      ...(Object.keys(content).length ? { content } : {}),
    };
  }
  return out;
}

/** GET /openapi.json: the document, built on its first request (its context: lazyDocument). */
export const OPENAPI_ROUTE = route<'/openapi.json', () => Obj>({
  method: 'get',
  url: '/openapi.json',
  operationId: 'openapi',
  tags: ['operations'],
  summary: 'This document',
  description:
    'The OpenAPI 3.1 document, generated from the catalog, the contract schemas and the error table.',
  auth: 'none',
  responses: { 200: { description: 'the OpenAPI document', content: json(Type.Object({})) } },
  handle: (doc) => async () => doc(),
});

/**
 * The document, built when first asked for. Building it takes about 0.1 s of CPU (every
 * operation's schemas emitted), a seventh of a server's start, and most starts never serve it:
 * workers, CLIs, the tests' servers (docs/performance.md "Start-up").
 */
export function lazyDocument(catalog: Catalog, version: string): () => Obj {
  let doc: Obj | undefined;
  return () => (doc ??= openApiDocument(catalog, version));
}

/**
 * `doc()` as the object @fastify/swagger's static mode wants at registration (its
 * `specification.document`, served at /docs/json and /docs/yaml), built only when one of them
 * first reads a field of it.
 */
export function documentOnFirstRead(doc: () => Obj): Obj {
  return new Proxy({} as Obj, {
    get: (_, key) => Reflect.get(doc(), key),
    has: (_, key) => Reflect.has(doc(), key),
    ownKeys: () => Reflect.ownKeys(doc()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(doc(), key);
      // A proxy may not report a property as non-configurable that its (empty) target lacks.
      return d && { ...d, configurable: true };
    },
  });
}

/** The OpenAPI 3.1 document, generated from the catalog, the contract schemas and the error table. */
export function openApiDocument(catalog: Catalog, version: string): Obj {
  const components: Obj = {};
  const emit = emitter(components);
  const paths: Record<string, Obj> = {};
  const ops = [
    ...queryOperations(catalog),
    ...qualityOperations(catalog),
    UNIVERSE_ROUTE.operation,
    changesRoute(catalog).operation,
    ...[...ingestRoutes(catalog), eventsRoute(catalog)].map((r) => r.operation),
    ...[HEALTH_ROUTE, METRICS_ROUTE, OPENAPI_ROUTE, ...MCP_ROUTES].map((r) => r.operation),
    ...ADMIN_ROUTES.flatMap((routes) => routes(catalog)).map((r) => r.operation),
  ];
  for (const op of ops) {
    const item = (paths[op.path] ??= {});
    item[op.method] = {
      operationId: op.operationId,
      tags: op.tags,
      summary: op.summary,
      description: op.description,
      security: SECURITY[op.auth],
      ...(op.parameters?.length
        ? {
            parameters: op.parameters.map((p) => ({
              required: p.in === 'path',
              ...p,
              schema: emit(p.schema),
            })),
          }
        : {}),
      ...(op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: emit(op.body) } } } }
        : {}),
      responses: responses(op, emit),
      ...(op.extensions ? (emit(op.extensions) as Obj) : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'market-data-service',
      version,
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        'Batch ingest and read-only query interface for market data. Every query endpoint is generated ' +
        'from the dataset catalog; x-mds-filter on a query parameter names its filter kind ' +
        '(exact, like, range), and x-mds-field the row field a range filter bounds; x-mds-code marks a ' +
        'code filter and its market; x-mds-factors on adjust names the factor dataset it reads; x-mds-exports on a query operation maps each format= export to ' +
        'the media type its 200 answer then has; x-mds-ingest-names maps row names to ingest names. Answers that belong to no operation, in the Error shape (the envelope ' +
        `under /api/v1/ but the ingest interface): ${PROTOCOL_ERRORS.map((c) => `${ERRORS[c].status} / ${c} ${ERRORS[c].message}`).join('; ')}.`,
    },
    servers: [{ url: '/' }],
    tags: [...new Set(ops.flatMap((op) => op.tags))].map((name) => ({
      name,
      ...(TAGS[name] ? { description: TAGS[name] } : {}),
    })),
    paths,
    components: {
      schemas: components,
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
