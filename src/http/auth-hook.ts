import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import type { AuthFailureGuard } from '../access/auth-failures.js';
import type { KeyRing, Principal } from '../access/keyring.js';
import type { Limiter } from '../access/limiter.js';
import type { KeyScope } from '../storage/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export const KEY_HEADERS: Record<KeyScope, string> = { query: 'q-api-key', ingest: 'up-api-key' };

/**
 * Authentication (and, for queries, rate limit and quota) as an onRequest hook: it runs before
 * the body is read, so an unauthenticated upload is refused without buffering it.
 */
export function authHook(
  scope: KeyScope,
  deps: { keyring: KeyRing; guard: AuthFailureGuard; limiter: Limiter | null },
): onRequestAsyncHookHandler {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    deps.guard.check(req.ip);
    let principal: Principal;
    try {
      principal = await deps.keyring.authenticate(scope, req.headers[KEY_HEADERS[scope]]);
    } catch (err) {
      if (err instanceof AppError && err.code === 4012) deps.guard.fail(req.ip);
      throw err;
    }
    req.principal = principal;
    if (deps.limiter) {
      const d = await deps.limiter.consume(principal);
      for (const [k, v] of Object.entries(d.headers)) reply.header(k, v);
      if (!d.allowed && d.code !== null) {
        throw new AppError(d.code, d.message, d.retryAfter !== null ? { retryAfter: d.retryAfter } : {});
      }
    }
  };
}
