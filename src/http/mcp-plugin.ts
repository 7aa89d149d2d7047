import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import type { Services } from '../services.js';
import type { CallGrant, McpEndpoint } from '../mcp/mcp-server.js';
import type { Principal } from '../access/keyring.js';
import { AppError } from '../errors.js';
import { McpBudget } from '../access/budgets.js';
import { TOOL_NAMES } from '../mcp/tool-schemas.js';
import { KEY_HEADERS, applyLimit, authHook } from './auth-hook.js';
import { queryContextHook } from './query-plugin.js';
import { readSessionHook } from './read-needs.js';
import { McpAnswerSchema, McpRequestSchema } from '../contract/mcp.js';
import { json, type ApiResponse } from './api-operations.js';
import { registerRoutes, route, type Route } from './route-declaration.js';
import { toAppError } from './error-handler.js';

/** MCP messages are small; a larger body is refused before it is read (413). */
const MCP_BODY_LIMIT = 1024 * 1024;

/** The query key from Q-API-KEY, else from `Authorization: Bearer <key>` (what MCP hosts send). */
function mcpCredential(req: FastifyRequest): string | string[] | undefined {
  const header = req.headers[KEY_HEADERS.query];
  if (header !== undefined) return header;
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m ? m[1] : auth;
}

/** tools/call requests in a JSON-RPC message or batch: each counts as one query. */
function toolCalls(body: unknown): number {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter(
    (m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call',
  ).length;
}

/**
 * Counts a request's tool calls against its key's rate and quota, one by one, until one is
 * refused: refused at the first, the request is refused whole (403, nothing counted); later,
 * the calls counted run and the others are answered with the refusal as tool errors, so every
 * call counted is a call that ran. The RateLimit headers are the last decision's.
 */
async function countCalls(
  reply: FastifyReply,
  limiter: Services['limiter'],
  principal: Principal | undefined,
  calls: number,
): Promise<CallGrant> {
  if (!principal) return { allowed: calls, refusal: null };
  for (let i = 0; i < calls; i++) {
    const d = await limiter.consume(principal);
    if (d.allowed || i === 0) applyLimit(reply, d);
    else
      try {
        applyLimit(reply, d);
      } catch (err) {
        return { allowed: i, refusal: err as AppError };
      }
  }
  return { allowed: calls, refusal: null };
}

/** Request headers for the SDK's transport, without the key. */
function transportHeaders(req: FastifyRequest): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || k === KEY_HEADERS.query || k === 'authorization') continue;
    h.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  return h;
}

interface McpContext {
  limiter: Services['limiter'];
  endpoint: Pick<McpEndpoint, 'handle'>;
  /** MCP tool calls in flight per key and in this process (MDS_MCP_CALLS_PER_KEY / _PER_PROCESS). */
  budget: McpBudget;
  /** tools/call messages one request may hold (MDS_MCP_BATCH_CALLS). */
  batchCalls: number;
  /** An answer not taken by its client within this is cut off (MDS_EXPORT_STALL_TIMEOUT_MS). */
  stallMs: number;
}

const rpc = (description: string): ApiResponse => ({ description, content: json(McpAnswerSchema) });

/** GET and DELETE: no server-sent stream and no session to end. */
const notAllowed = (method: 'get' | 'delete'): Route<McpContext> =>
  route<'/mcp', McpContext>({
    method,
    url: '/mcp',
    operationId: `mcp_${method}`,
    tags: ['mcp'],
    summary: 'Not allowed: the MCP endpoint is stateless',
    description: 'No server-sent stream and no session: 405 with Allow: POST, as the protocol expects.',
    auth: 'query',
    responses: { 405: rpc('a JSON-RPC error; Allow: POST') },
    handle: () => async (_req, reply) =>
      reply
        .code(405)
        .header('Allow', 'POST')
        .send({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; POST only' },
          id: null,
        }),
  });

/** POST /mcp, and the 405 of GET and DELETE (docs/mcp.md); absent when MDS_MCP=off. */
export const MCP_ROUTES: readonly Route<McpContext>[] = [
  route<'/mcp', McpContext>({
    method: 'post',
    url: '/mcp',
    operationId: 'mcp',
    tags: ['mcp'],
    summary: 'Model Context Protocol (stateless Streamable HTTP)',
    description:
      'JSON-RPC messages of MCP for AI assistants: tools list_datasets, query, quality_report, ' +
      'revision_trail and trading_days (docs/mcp.md). The query key as Q-API-KEY or ' +
      '`Authorization: Bearer <key>`; each tools/call counts as one query against its limits; ' +
      'a batch holds at most MDS_MCP_BATCH_CALLS of them, a key has at most ' +
      'MDS_MCP_CALLS_PER_KEY tool calls in flight, the process MDS_MCP_CALLS_PER_PROCESS. ' +
      'Accept must list application/json and text/event-stream; answers are JSON. ' +
      'Absent (404) when MDS_MCP=off.',
    auth: 'query',
    body: McpRequestSchema,
    bodyLimit: MCP_BODY_LIMIT,
    responses: {
      200: rpc('the JSON-RPC answer(s); tool errors are results with isError'),
      202: { description: 'only notifications or responses were sent: no answer' },
      400: rpc('not a JSON-RPC message (JSON-RPC error)'),
      406: rpc('Accept does not list application/json and text/event-stream (JSON-RPC error)'),
    },
    errors: [4130, 4131, 4150, 4292, 5033],
    handle:
      ({ limiter, endpoint, budget, batchCalls, stallMs }) =>
      async (req, reply) => {
        const calls = toolCalls(req.body);
        if (calls > batchCalls)
          throw new AppError(
            4131,
            `this request holds ${calls} tool calls; at most ${batchCalls} (MDS_MCP_BATCH_CALLS): send them in several`,
          );
        // A place per tool call (one for a request of the protocol's own, tools/list), held until
        // the answer has gone; refused here, it costs the key nothing.
        reply.raw.once('close', budget.take(req.principal?.id ?? req.ip, Math.max(1, calls)));
        // After the body is read: only tool calls are counted, not the protocol's own messages.
        const grant = await countCalls(reply, limiter, req.principal, calls);
        const res = await endpoint.handle(transportHeaders(req), req.body, grant);
        reply.code(res.status);
        res.headers.forEach((v, k) => void reply.header(k, v));
        // Bytes, not text: a batch's answer is megabytes, decoded and encoded again otherwise.
        const body = Buffer.from(await res.arrayBuffer());
        // An answer its client does not take would hold its place (and its megabytes) for as
        // long as the connection lives: cut off, as a stalled export is.
        const cut = setTimeout(() => reply.raw.destroy(), stallMs);
        cut.unref();
        reply.raw.once('close', () => clearTimeout(cut));
        return reply.send(body.length === 0 ? undefined : body);
      },
  }),
  notAllowed('get'),
  notAllowed('delete'),
];

/**
 * POST /mcp: the Model Context Protocol, stateless Streamable HTTP (docs/mcp.md). The query key
 * authenticates every request; each `tools/call` counts against its rate limit and quota, and
 * in its usage, like a query (a refusal is the same 403 with Retry-After). GET and DELETE are
 * 405: a stateless server has no stream or session to open or end.
 */
export async function mcpPlugin(
  app: FastifyInstance,
  { services, registry }: { services: Services; registry: Registry },
): Promise<void> {
  const { keyring, authFailures: guard, limiter } = services;
  const calls = new Counter({
    name: 'mds_mcp_tool_calls_total',
    help:
      'MCP tool calls on /mcp, by tool and outcome (ok; invalid: a tool error naming the argument; ' +
      'timeout: past the query deadline; unavailable: the database or a budget; error: a logged fault)',
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry],
  });
  for (const tool of TOOL_NAMES) calls.inc({ tool, outcome: 'ok' }, 0);
  // Built at the first POST: the MCP SDK and the tools' validators cost a start about 0.15 s of
  // CPU (docs/testing.md), and most processes never answer /mcp.
  let built: Promise<McpEndpoint> | null = null;
  const endpoint: McpContext['endpoint'] = {
    async handle(headers, body, grant) {
      built ??= import('../mcp/mcp-server.js').then(
        ({ McpEndpoint }) =>
          new McpEndpoint(services, {
            onCall: (tool, outcome) => calls.inc({ tool, outcome }),
            onError: (err, tool) => services.log.error({ err, tool }, 'MCP tool failed'),
            classify: toAppError,
          }),
      );
      return (await built).handle(headers, body, grant);
    },
  };

  // As the query API's: a read session (read replicas, MDS-Read-After), the key, then each
  // request's statements in its key's query context (fair readers, stopped when the client goes).
  app.addHook('onRequest', readSessionHook((services.store.databaseStats?.().replicas.length ?? 0) > 0));
  app.addHook('onRequest', authHook('query', { keyring, guard, limiter: null, credential: mcpCredential }));
  app.addHook('preHandler', queryContextHook(services));
  const { config } = services;
  registerRoutes(app, MCP_ROUTES, {
    limiter,
    endpoint,
    budget: new McpBudget(config.MDS_MCP_CALLS_PER_KEY, config.MDS_MCP_CALLS_PER_PROCESS),
    batchCalls: config.MDS_MCP_BATCH_CALLS,
    stallMs: config.MDS_EXPORT_STALL_TIMEOUT_MS,
  });
}
