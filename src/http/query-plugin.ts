import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { authHook } from './auth-hook.js';
import { registerQueryRoutes } from './query-routes.js';
import { registerQualityRoute } from './quality-routes.js';

/**
 * The query API: one route per catalog dataset, behind a query key, its rate limit and quota.
 * Registered with app.register(), so the auth hook applies to these routes only; a new query
 * route is added inside and is authenticated without saying so.
 */
export async function queryPlugin(app: FastifyInstance, { services }: { services: Services }): Promise<void> {
  const { keyring, authFailures: guard, limiter } = services;
  app.addHook('onRequest', authHook('query', { keyring, guard, limiter }));
  registerQueryRoutes(app, services.catalog, services.query, {
    exportStallTimeoutMs: services.config.MDS_EXPORT_STALL_TIMEOUT_MS,
  });
  registerQualityRoute(app, '/api/v1/quality/:dataset', services.quality);
}
