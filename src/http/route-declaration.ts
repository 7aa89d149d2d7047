import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalid, type ErrorCode } from '../errors.js';
import type { Services } from '../services.js';
import { adminAnswerSchema } from '../contract/admin.js';
import type { ApiOperation, ApiParameter } from './api-operations.js';

/** The `:name` segments of a Fastify path, as a union of names (never: none). */
export type PathParams<U extends string> = U extends `${string}:${infer P}/${infer R}`
  ? P | PathParams<`/${R}`>
  : U extends `${string}:${infer P}`
    ? P
    : never;

type Handler<U extends string, Q extends TObject> = (
  req: FastifyRequest<{ Params: Record<PathParams<U>, string>; Querystring: Static<Q> }>,
  reply: FastifyReply,
) => Promise<unknown>;

/** A path parameter's documentation (the example is what a contract tester puts in the URL). */
export interface PathParamDoc {
  description: string;
  example: string;
}

/**
 * One route, declared once: its method and path (Fastify's `:name` form; the document's
 * `{name}` is derived), its query parameters as one TypeBox object (validated before the
 * handler, and documented from the same schema), its documentation and answers, and its
 * handler, built from the context `C` the plugin registers it with (services, the ingest
 * pool). A `:name` in the path without its documentation, or documentation of a name the path
 * lacks, does not compile.
 */
type RouteCore<U extends string, Q extends TObject, C> = {
  url: U;
  querystring?: Q;
  /** Bytes of body read before a 413, where the server's default does not fit. */
  bodyLimit?: number;
  handle: (ctx: C) => Handler<U, Q>;
} & ([PathParams<U>] extends [never]
  ? { params?: undefined }
  : { params: Record<PathParams<U>, PathParamDoc> });

export type RouteDeclaration<U extends string, Q extends TObject, C> = Omit<
  ApiOperation,
  'path' | 'parameters'
> &
  RouteCore<U, Q, C>;

/** An admin route: tagged `admin`, behind the admin token, answering `answer` in the envelope. */
export type AdminRouteDeclaration<U extends string, Q extends TObject> = Omit<
  ApiOperation,
  'path' | 'parameters' | 'tags' | 'auth' | 'responses'
> &
  RouteCore<U, Q, Services> & {
    answer: { description: string; data: TSchema; status?: 201 };
  };

/** A declared route with its types erased, for lists of routes of one context. */
export interface Route<C> {
  operation: ApiOperation;
  url: string;
  querystring: TObject | undefined;
  bodyLimit: number | undefined;
  handle: (ctx: C) => (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

/** An admin route from its declaration (see `route`). */
export function adminRoute<U extends string, Q extends TObject = TObject>(
  decl: AdminRouteDeclaration<U, Q>,
): Route<Services> {
  const { answer, ...rest } = decl;
  return route({
    ...rest,
    tags: ['admin'],
    auth: 'admin',
    responses: {
      [answer.status ?? 200]: {
        description: answer.description,
        content: { 'application/json': adminAnswerSchema(answer.data) },
      },
    },
  } as RouteDeclaration<U, Q, Services>);
}

/** Fastify's `/a/:id` as OpenAPI's `/a/{id}`. */
export const openApiPath = (url: string): string => url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');

/** A route from its declaration (the declaration's types check the path, parameters and handler). */
export function route<U extends string, C, Q extends TObject = TObject>(
  decl: RouteDeclaration<U, Q, C>,
): Route<C> {
  const { url, querystring, bodyLimit, handle, params, ...doc } = decl;
  const pathParams: ApiParameter[] = Object.entries((params ?? {}) as Record<string, PathParamDoc>).map(
    ([name, p]) => ({
      name,
      in: 'path',
      required: true,
      description: p.description,
      schema: Type.String({ minLength: 1 }),
      example: p.example,
    }),
  );
  const queryParams: ApiParameter[] = Object.entries(querystring?.properties ?? {}).map(([name, s]) => {
    const { description = '', ...schema } = s as TSchema & { description?: string };
    return { name, in: 'query', description, schema };
  });
  const parameters = [...pathParams, ...queryParams];
  // The router itself answers 400 / 4001 for a path parameter that is not valid UTF-8 or is
  // longer than ROUTER_OPTIONS.maxParamLength (FST_ERR_BAD_URL): every route with one says so.
  const errors: readonly ErrorCode[] | undefined =
    pathParams.length > 0 ? [...new Set<ErrorCode>([4001, ...(doc.errors ?? [])])] : doc.errors;
  return {
    operation: {
      ...doc,
      path: openApiPath(url),
      ...(parameters.length ? { parameters } : {}),
      ...(errors ? { errors } : {}),
    },
    url,
    querystring,
    bodyLimit,
    handle: handle as unknown as Route<C>['handle'],
  };
}

/**
 * A query string checked against its schema: an empty value counts as absent (forms send
 * `dataset=`), an unknown parameter is named with the allowed ones, numbers are read from
 * their text and defaults filled in; any failure is 400 / 4001 naming the parameter.
 */
export function checkedQuery(schema: TObject, raw: Record<string, unknown>): Record<string, unknown> {
  const given = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== ''));
  const allowed = Object.keys(schema.properties);
  const unknown = Object.keys(given).filter((k) => !allowed.includes(k));
  if (unknown.length > 0)
    throw invalid(`unknown query parameter(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`);
  // Numbers read here, not by Value.Convert: it truncates `1.5` to an integer rather than refuse it.
  const read = Object.fromEntries(
    Object.entries(given).map(([k, v]) => {
      const type = (schema.properties[k] as TSchema).type as unknown;
      const numeric = type === 'integer' || type === 'number';
      return [k, numeric && typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v];
    }),
  );
  const value = Value.Default(schema, read) as Record<string, unknown>;
  // TypeBox checks no `enum` on a string (a JSON Schema keyword it carries for the document).
  for (const [name, v] of Object.entries(value)) {
    const choices = (schema.properties[name] as { enum?: unknown[] }).enum;
    if (choices !== undefined && !choices.includes(v))
      throw invalid(`${name} must be one of ${choices.join(', ')}`, { parameter: name });
  }
  const error = Value.Errors(schema, value).First();
  if (error !== undefined) {
    const name = error.path.split('/')[1] ?? '';
    const s = schema.properties[name] as (TSchema & { description?: string }) | undefined;
    throw invalid(`${name}: ${error.message}${s?.description ? ` (${s.description})` : ''}`, {
      parameter: name,
    });
  }
  return value;
}

/** The route config flag of a route that only answers 405 (route-methods.ts leaves it out of Allow). */
export const REFUSES_METHOD = 'mdsRefusesMethod';

/** A route declared only to answer 405 (/mcp's GET and DELETE): its method is not allowed. */
const refusesMethod = (op: ApiOperation): boolean => {
  const codes = Object.keys(op.responses);
  return codes.length === 1 && codes[0] === '405';
};

/** Registers routes on a plugin's instance (so its authentication hook applies to them). */
export function registerRoutes<C>(app: FastifyInstance, routes: readonly Route<C>[], ctx: C): void {
  for (const r of routes) {
    const handler = r.handle(ctx);
    const schema = r.querystring;
    app.route({
      method: r.operation.method.toUpperCase() as 'GET',
      url: r.url,
      ...(refusesMethod(r.operation) ? { config: { [REFUSES_METHOD]: true } } : {}),
      ...(r.bodyLimit === undefined ? {} : { bodyLimit: r.bodyLimit }),
      handler: schema
        ? async (req, reply) => {
            req.query = checkedQuery(schema, req.query as Record<string, unknown>);
            return handler(req, reply);
          }
        : handler,
    });
  }
}
