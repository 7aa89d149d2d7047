import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { Services } from '../app.js';

/** Placeholder: /admin/api/batches and /admin/api/coverage are being built (issue 7). */
export function registerAdminDataRoutes(
  _app: FastifyInstance,
  _services: Services,
  _auth: onRequestAsyncHookHandler,
): void {}
