import type { FastifyInstance } from 'fastify';
import type { Store } from '../storage/store.js';
import { VERSION } from '../version.js';
import { HealthSchema } from '../contract/health.js';
import { json } from './api-operations.js';
import { registerRoutes, route } from './route-declaration.js';

interface HealthContext {
  store: Store;
  isReady: () => boolean;
}

/** GET /health, no key: 200 {status:"ok"} while the database answers, else 503 {status:"error"}. */
export const HEALTH_ROUTE = route<'/health', HealthContext>({
  method: 'get',
  url: '/health',
  operationId: 'health',
  tags: ['health'],
  summary: 'Health check (no key)',
  description: 'Spec 4.1: 200 with status "ok" while the database answers, else 503 with status "error".',
  auth: 'none',
  responses: {
    200: { description: 'the database answers', content: json(HealthSchema) },
    503: { description: 'the database does not answer (status "error")', content: json(HealthSchema) },
  },
  handle:
    ({ store, isReady }) =>
    async (req, reply) => {
      try {
        if (!isReady()) throw new Error('not ready');
        await store.ping();
        return { status: 'ok', version: VERSION, storage: store.backend };
      } catch (err) {
        req.log.warn({ err }, 'health check failed');
        return reply
          .code(503)
          .header('Retry-After', '1')
          .send({ status: 'error', version: VERSION, storage: store.backend });
      }
    },
});

export function registerHealthRoute(app: FastifyInstance, store: Store, isReady: () => boolean): void {
  registerRoutes(app, [HEALTH_ROUTE], { store, isReady });
}
