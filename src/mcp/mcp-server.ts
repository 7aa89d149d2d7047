import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../errors.js';
import { VERSION } from '../version.js';
import { TOOL_HANDLERS, type ToolServices } from './tools.js';
import { toolDefinitions, type ToolDefinition, type ToolName } from './tool-schemas.js';

/**
 * How a tool call ended, for the metrics: `refused` beyond its key's rate or quota in a batch
 * partly answered (4030, 4031), `timeout` past the query deadline (5040),
 * `unavailable` the database or a budget (503), `error` a fault the service logged (5000).
 */
export type CallOutcome = 'ok' | 'invalid' | 'refused' | 'timeout' | 'unavailable' | 'error';

/**
 * How many of a request's tool calls its key's rate and quota allowed (in the order they were
 * sent), and the refusal that answers the others: a batch that found fewer requests left than
 * it holds calls runs those it could count, and nothing of it is counted but what ran.
 */
export interface CallGrant {
  allowed: number;
  refusal: AppError | null;
}

export interface McpOptions {
  /** A tool call is done (metrics). */
  onCall?: (tool: string, outcome: CallOutcome) => void;
  /** An unexpected error inside a tool (logged; the client sees 5000). */
  onError?: (err: unknown, tool: string) => void;
  /**
   * The HTTP layer's reading of an error that is not an AppError (a statement past its
   * deadline, the database unreachable, a shutdown), so a tool error carries the code an HTTP
   * answer would; null for a fault.
   */
  classify?: (err: unknown) => AppError | null;
}

const outcomeOf = (e: AppError): CallOutcome =>
  e.code === 5040 ? 'timeout' : e.status === 503 ? 'unavailable' : 'error';

const INSTRUCTIONS =
  'Market data with point-in-time history. Start with list_datasets (list_datasets with dataset=<name> ' +
  'names its fields), then query. Dates are YYYY-MM-DD; answers are bounded, so page with next_cursor. ' +
  'Errors name the allowed values: correct the argument and call again.';

/** "/limit must be <= 200" → "limit must be <= 200"; an enum's error lists the values. */
function describe(e: ErrorObject): string {
  const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'arguments';
  if (e.keyword === 'additionalProperties') {
    const name = (e.params as { additionalProperty: string }).additionalProperty;
    return `unknown argument "${name}"${where === 'arguments' ? '' : ` in ${where}`}; dataset filters go in "filters"`;
  }
  if (e.keyword === 'enum') {
    const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
    return `${where} must be one of: ${allowed.join(', ')}`;
  }
  return `${where} ${e.message ?? 'is invalid'}`;
}

/** Resolves in the event loop's next check phase, after the I/O waiting now. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const errorResult = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/**
 * The tools over the query services, and the MCP protocol around them: stateless, so each HTTP
 * request gets a fresh Server and transport (`handle`), while the definitions and their
 * validators are built once per catalog.
 */
export class McpEndpoint {
  private readonly tools: ToolDefinition[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly services: ToolServices,
    private readonly opts: McpOptions = {},
  ) {
    this.tools = toolDefinitions(services.catalog);
    const ajv = new Ajv({ allErrors: false, strict: false });
    for (const t of this.tools) this.validators.set(t.name, ajv.compile(t.inputSchema));
  }

  get toolNames(): string[] {
    return this.tools.map((t) => t.name);
  }

  /** One tool call: arguments checked against the schema, then the query services; errors as tool errors. */
  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const validate = this.validators.get(name);
    const handler = TOOL_HANDLERS[name as ToolName];
    if (!validate || !handler) {
      this.opts.onCall?.('unknown', 'invalid');
      return errorResult(`unknown tool "${name}"; tools: ${this.toolNames.join(', ')}`);
    }
    if (!validate(args)) {
      this.opts.onCall?.(name, 'invalid');
      const first = validate.errors?.[0];
      return errorResult(
        `invalid arguments (4001): ${first ? describe(first) : 'does not match the schema'}${this.refusal(name, args, first)}`,
      );
    }
    try {
      const answer = await handler(this.services, args);
      this.opts.onCall?.(name, 'ok');
      return {
        content: [{ type: 'text', text: `${answer.summary}\n${JSON.stringify(answer.rows)}` }],
        structuredContent: answer.structured,
      };
    } catch (err) {
      const known = err instanceof AppError ? err : (this.opts.classify?.(err) ?? null);
      if (known && known.status < 500) {
        this.opts.onCall?.(name, 'invalid');
        return errorResult(`${known.message} (${known.code})`);
      }
      if (known) {
        this.opts.onCall?.(name, outcomeOf(known));
        return errorResult(
          `${known.message} (${known.code})${known.retryAfter !== null ? `; retry in ${known.retryAfter} s` : ''}`,
        );
      }
      this.opts.onCall?.(name, 'error');
      this.opts.onError?.(err, name);
      return errorResult('internal error (5000); the service logged it');
    }
  }

  /**
   * A dataset of the catalog that the tool does not serve is named with the reason (a minute
   * dataset's quality report), so the model does not retry it under another spelling.
   */
  private refusal(name: string, args: Record<string, unknown>, e: ErrorObject | undefined): string {
    const why = this.tools.find((t) => t.name === name)?.refusal;
    const d = args.dataset;
    if (!why || e?.keyword !== 'enum' || e.instancePath !== '/dataset') return '';
    return typeof d === 'string' && this.services.catalog.byName.has(d) ? `; "${d}" ${why}` : '';
  }

  /**
   * A fresh protocol server for one request. Its tool calls run one after another: the SDK
   * starts every call of a JSON-RPC batch at once, which put up to 100 statements and their
   * answers' work on this thread in one burst; one at a time, other requests are served between
   * them (a turn of the event loop before each), and a request's answers grow one by one (MCP
   * budget: access/budgets.ts).
   */
  private server(grant: CallGrant): Server {
    const server = new Server(
      { name: 'market-data-service', version: VERSION },
      { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: this.tools.map(({ refusal: _refusal, ...t }) => t),
    }));
    let seen = 0;
    let previous: Promise<unknown> = Promise.resolve();
    server.setRequestHandler(CallToolRequestSchema, (req) => {
      if (seen++ >= grant.allowed && grant.refusal) {
        this.opts.onCall?.(req.params.name, 'refused');
        return errorResult(`${grant.refusal.message} (${grant.refusal.code})`);
      }
      // A turn of the event loop before each call: a bounded read runs on this thread and
      // resolves without I/O, so a batch's calls chained on promises alone would run as one
      // block of seconds, answering no other request meanwhile.
      const run = previous
        .then(nextTurn)
        .then(() => this.call(req.params.name, (req.params.arguments ?? {}) as Record<string, unknown>));
      previous = run.catch(() => undefined);
      return run;
    });
    return server;
  }

  /**
   * Answers one POST: the SDK's stateless Streamable HTTP transport in JSON-response mode, so
   * the answer is one JSON body the HTTP layer sends itself (its hooks, metrics and limits apply).
   */
  async handle(headers: Headers, body: unknown, grant: CallGrant): Promise<Response> {
    const server = this.server(grant);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      const req = new Request('http://mcp.local/mcp', { method: 'POST', headers });
      return await transport.handleRequest(req, { parsedBody: body });
    } finally {
      await server.close();
    }
  }
}
