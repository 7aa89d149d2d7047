import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { Services } from '../app.js';

/** Placeholder: /admin/api/keys and /admin/api/usage are being built (issue 4). */
export function registerAdminKeyRoutes(
  _app: FastifyInstance,
  _services: Services,
  _auth: onRequestAsyncHookHandler,
): void {}
