import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import type { AuthFailureGuard } from '../access/auth-failures.js';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * Guards /admin/api/* with `Authorization: Bearer <MDS_ADMIN_TOKEN>`, compared in constant
 * time. Without a configured token the admin API is closed (every request 401 / 4012).
 */
export function adminAuthHook(token: string | undefined, guard: AuthFailureGuard): onRequestAsyncHookHandler {
  const expected = token ? digest(token) : null;
  return async (req: FastifyRequest) => {
    const header = req.headers.authorization;
    if (!header) throw new AppError(4010, 'missing Authorization: Bearer <admin token>');
    const m = /^Bearer (.+)$/i.exec(header);
    if (!expected || !m || !timingSafeEqual(digest(m[1] as string), expected)) {
      throw guard.refuse('admin', req.ip, new AppError(4012, 'invalid admin token'));
    }
  };
}
