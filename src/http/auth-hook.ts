import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import type { AuthFailureGuard } from '../access/auth-failures.js';
import type { KeyRing, Principal } from '../access/keyring.js';
import type { LimitDecision, Limiter } from '../access/limiter.js';
import type { KeyScope } from '../model/keys.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export const KEY_HEADERS: Record<KeyScope, string> = { query: 'q-api-key', ingest: 'up-api-key' };

/** Reply.header() lower-cases each name: the limit headers' lower-case names, made once. */
const LOWER_CASE: Record<string, string> = { 'RateLimit-Policy': 'ratelimit-policy', RateLimit: 'ratelimit' };

const article = (scope: KeyScope): string => (scope === 'ingest' ? 'an' : 'a');

/** Sets the limit headers; throws the refusal. */
export function applyLimit(reply: FastifyReply, d: LimitDecision): void {
  const h = d.headers;
  for (const k in h) reply.header(LOWER_CASE[k] ?? k, h[k]);
  if (!d.allowed && d.code !== null) {
    throw new AppError(d.code, d.message, d.retryAfter !== null ? { retryAfter: d.retryAfter } : {});
  }
}

/**
 * Authentication (and, for queries, rate limit and quota) as an onRequest hook: it runs before
 * the body is read, so an unauthenticated upload is refused without buffering it. Callback
 * style: a key seen within its TTL and in-memory counters need no I/O, so most requests finish
 * the hook synchronously without a promise.
 */
export function authHook(
  scope: KeyScope,
  deps: {
    keyring: KeyRing;
    guard: AuthFailureGuard;
    limiter: Limiter | null;
    /**
     * Admission after authentication and before counting (the export budget): throws its
     * refusal, which then costs the key nothing, as other refusals (keys-and-limits.md).
     */
    admit?: (req: FastifyRequest, reply: FastifyReply, p: Principal) => void;
    /** Where the key is read (default: the scope's header); /mcp also takes a bearer. */
    credential?: (req: FastifyRequest) => string | string[] | undefined;
    /** Each authenticated request without a limiter (ingest): its key's `last_used_at`. */
    used?: (p: Principal) => void;
  },
): onRequestHookHandler {
  const { keyring, guard, limiter, admit, used } = deps;
  const header = KEY_HEADERS[scope];
  const credential = deps.credential ?? ((req: FastifyRequest) => req.headers[header]);
  const otherScope: KeyScope = scope === 'query' ? 'ingest' : 'query';
  const otherHeader = KEY_HEADERS[otherScope];

  // Only an invalid credential counts (a missing one is no guess); it may come back as 4290.
  // A missing key where the other kind's header is there says so: the wrong kind, not none.
  const refused = (req: FastifyRequest, err: unknown): unknown => {
    if (!(err instanceof AppError)) return err;
    if (err.code === 4012) return guard.refuse(scope, req.ip, err);
    if (err.code === 4010 && req.headers[otherHeader] !== undefined) {
      return new AppError(
        4010,
        `wrong kind of key: this endpoint takes ${article(scope)} ${scope} key in ${header.toUpperCase()}, ` +
          `and the request has ${otherHeader.toUpperCase()} (${article(otherScope)} ${otherScope} key) instead`,
      );
    }
    return err;
  };

  // What needs I/O: a key not seen within its TTL, counters in Redis, a day count to read.
  async function slow(req: FastifyRequest, reply: FastifyReply, known: Principal | undefined): Promise<void> {
    let principal = known;
    if (principal === undefined) {
      try {
        principal = await keyring.authenticate(scope, credential(req));
      } catch (err) {
        throw refused(req, err);
      }
      req.principal = principal;
    }
    admit?.(req, reply, principal);
    used?.(principal);
    if (limiter) applyLimit(reply, await limiter.consume(principal));
  }

  return (req, reply, done) => {
    let principal: Principal | undefined;
    try {
      principal = keyring.authenticateKnown(scope, credential(req));
    } catch (err) {
      done(refused(req, err) as Error);
      return;
    }
    if (principal === undefined) {
      slow(req, reply, undefined).then(() => done(), done);
      return;
    }
    req.principal = principal;
    // A decision at once (no promise on the common path), or a promise of one.
    let d: LimitDecision | Promise<LimitDecision> | null;
    try {
      admit?.(req, reply, principal);
      used?.(principal);
      d = limiter === null ? null : limiter.consume(principal);
      if (d !== null && !(d instanceof Promise)) applyLimit(reply, d);
    } catch (err) {
      done(err as Error);
      return;
    }
    // Outside the try: done() runs the rest of the request.
    if (d instanceof Promise) d.then((x) => applyLimit(reply, x)).then(() => done(), done);
    else done();
  };
}
