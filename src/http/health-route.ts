import type { FastifyInstance } from 'fastify';
import type { Store } from '../storage/store.js';
import { VERSION } from '../version.js';
import { HealthSchema } from '../contract/health.js';
import { databaseId } from '../model/database-url.js';
import { json } from './api-operations.js';
import { registerRoutes, route } from './route-declaration.js';

interface HealthContext {
  store: Store;
  isReady: () => boolean;
  /** model/database-url.ts `databaseId` of DATABASE_URL. */
  databaseId: string;
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
    ({ store, isReady, databaseId }) =>
    async (req, reply) => {
      try {
        if (!isReady()) throw new Error('not ready');
        await store.ping();
        return { status: 'ok', version: VERSION, storage: store.backend, database_id: databaseId };
      } catch (err) {
        req.log.warn({ err }, 'health check failed');
        return reply
          .code(503)
          .header('Retry-After', '1')
          .send({ status: 'error', version: VERSION, storage: store.backend, database_id: databaseId });
      }
    },
});

export function registerHealthRoute(
  app: FastifyInstance,
  store: Store,
  isReady: () => boolean,
  databaseUrl: string,
): void {
  registerRoutes(app, [HEALTH_ROUTE], { store, isReady, databaseId: databaseId(databaseUrl) });
}
