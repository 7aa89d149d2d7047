import type { FastifyInstance } from 'fastify';
import type { Store } from '../storage/store.js';
import { VERSION } from '../version.js';

/** GET /health, no key: 200 {status:"ok"} while the database answers, else 503 {status:"error"}. */
export function registerHealthRoute(app: FastifyInstance, store: Store, isReady: () => boolean): void {
  app.get('/health', async (req, reply) => {
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
  });
}
