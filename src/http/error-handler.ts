import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERRORS, type ErrorCode } from '../errors.js';
import { QueryTimeoutError, StoreUnavailableError } from '../storage/store.js';
import { QueryAbortedError } from '../request-context.js';
import { errorEnvelope, isQueryPath } from './envelope.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../query/parse.js';
import { RouteMethods } from './route-methods.js';
import { lingerOnClose } from './lingering-close.js';

/** Fastify's own error codes, mapped to ours so a client mistake is never a 500. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 4150,
  FST_ERR_CTP_BODY_TOO_LARGE: 4130,
  FST_ERR_CTP_INVALID_JSON_BODY: 4001,
  FST_ERR_CTP_EMPTY_JSON_BODY: 4001,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 4001,
  FST_ERR_CTP_INVALID_TYPE: 4001,
  FST_ERR_VALIDATION: 4001,
  FST_ERR_BAD_URL: 4001,
  FST_ERR_ASYNC_CONSTRAINT: 4001,
  FST_ERR_MAX_PARAM_LENGTH: 4001,
};

/** limit/offset of the request where they are valid, for the error envelope's meta. */
function pageOf(req: FastifyRequest): { limit: number; offset: number } {
  const q = (req.query ?? {}) as Record<string, unknown>;
  const int = (v: unknown, d: number) => (typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : d);
  return { limit: Math.min(Math.max(int(q.limit, DEFAULT_LIMIT), 1), MAX_LIMIT), offset: int(q.offset, 0) };
}

export function sendError(
  req: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
  retryAfter: number | null = null,
): FastifyReply {
  reply.code(ERRORS[code].status);
  if (retryAfter !== null) reply.header('Retry-After', String(retryAfter));
  // Refused before its body was read (auth, size, budgets): close the connection instead of
  // reading an upload nobody will use (a 20 MB unauthenticated POST costs 20 MB otherwise), but
  // lingering, so the client still uploading reads the answer rather than a reset.
  const declaresBody =
    req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (req.body === undefined && declaresBody) {
    reply.header('Connection', 'close');
    lingerOnClose(req.raw);
  }
  if (isQueryPath(req.url)) {
    const { limit, offset } = pageOf(req);
    return reply.send({ ...errorEnvelope(code, message, limit, offset), ...extra });
  }
  return reply.send({ code, message, ...extra });
}

/**
 * Conditions named in words beside their code (reliability.md): a full disk needs an operator,
 * not only patience, so the answer says so on both backends.
 */
const CONDITION_WORDS: Readonly<Record<string, string>> = {
  SQLITE_FULL: 'the database or its disk is full',
  '53100': "the database server's disk is full",
  ENOSPC: 'no space left on the disk',
};

export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  // The condition only: the message may name the database's address (it goes to the log).
  if (err instanceof StoreUnavailableError) {
    const words = CONDITION_WORDS[err.condition];
    return new AppError(5030, `database unavailable (${err.condition})${words ? `: ${words}` : ''}`, {
      retryAfter: 1,
    });
  }
  if (err instanceof QueryTimeoutError) return new AppError(5040, err.message);
  // Shutdown (the client of a disconnected request hears nothing).
  if (err instanceof QueryAbortedError) return new AppError(5030, err.message, { retryAfter: 1 });
  const fe = err as Partial<FastifyError>;
  const mapped = typeof fe.code === 'string' ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) return new AppError(mapped, fe.message);
  if (err instanceof SyntaxError || fe.statusCode === 400) return new AppError(4001, fe.message);
  if (fe.statusCode === 413) return new AppError(4130);
  if (fe.statusCode === 415) return new AppError(4150);
  return null;
}

/**
 * Errors Fastify raises while routing (bad percent-encoding, an over-long path parameter), which
 * bypass setErrorHandler: answered in our shape too (Fastify's `frameworkErrors` option).
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const known = toAppError(err) ?? new AppError(4001, err.message);
  void sendError(req, reply, known.code, known.message, { ...known.extra }, known.retryAfter);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, req, reply) => {
    const known = toAppError(err);
    if (known) {
      if (known.status >= 500) req.log.warn({ err }, 'service unavailable');
      return sendError(req, reply, known.code, known.message, { ...known.extra }, known.retryAfter);
    }
    req.log.error({ err }, 'unhandled error');
    return sendError(req, reply, 5000, ERRORS[5000].message);
  });
  // Before any route is added, so it learns them all.
  const routes = new RouteMethods(app);
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    const allowed = routes.allowed(req.url);
    if (allowed.length === 0)
      return sendError(req, reply, 4041, `no endpoint ${req.method} ${path}; see /openapi.json`);
    reply.header('Allow', allowed.join(', '));
    return sendError(
      req,
      reply,
      4050,
      `method ${req.method} not allowed on ${path}; allowed: ${allowed.join(', ')}`,
    );
  });
}

/** Errors Node raises below HTTP (Fastify's clientErrorHandler), by Node's error code. */
const CLIENT_ERRORS: Record<string, ErrorCode> = {
  ERR_HTTP_REQUEST_TIMEOUT: 4080,
  HPE_HEADER_OVERFLOW: 4310,
};

/**
 * Answers for requests that never became requests (headers too large, not received in time,
 * malformed HTTP), written to the socket in our `{code, message}` shape, then the connection is
 * closed. Nothing is written once an answer has begun on the socket (as Node's own handler).
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const code = CLIENT_ERRORS[err.code ?? ''] ?? 4001;
  const status = ERRORS[code].status;
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !answering?.headersSent) {
    const body = JSON.stringify({ code, message: ERRORS[code].message });
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
