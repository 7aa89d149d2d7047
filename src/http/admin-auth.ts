import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import type { AuthFailureGuard } from '../access/auth-failures.js';
import type { AdminTokens } from '../access/admin-tokens.js';

/**
 * Guards /admin/api/* with `Authorization: Bearer <token>`: MDS_ADMIN_TOKEN or an admin token
 * from `mds admin-token` (AdminTokens). With neither, every request is 401 / 4012.
 */
export function adminAuthHook(tokens: AdminTokens, guard: AuthFailureGuard): onRequestAsyncHookHandler {
  return async (req: FastifyRequest) => {
    const header = req.headers.authorization;
    if (!header) throw new AppError(4010, 'missing Authorization: Bearer <admin token>');
    const m = /^Bearer (.+)$/i.exec(header);
    if (!m || !(await tokens.verify(m[1] as string))) {
      throw guard.refuse('admin', req.ip, new AppError(4012, 'invalid admin token'));
    }
  };
}
