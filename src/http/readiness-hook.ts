import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import type { Readiness } from '../readiness.js';

/**
 * 503 / 5030 with Retry-After before the database is ready (except /health, which says so
 * itself) and once shutdown has begun (with Connection: close, so the client goes elsewhere).
 */
export function registerReadinessHook(app: FastifyInstance, readiness: Readiness): void {
  app.addHook('preClose', async () => readiness.startClosing());
  // Callback style: an async hook costs every request a promise.
  app.addHook('onRequest', (req, reply, done) => {
    if (readiness.isOpen()) return done();
    if (readiness.isClosing) {
      reply.header('Connection', 'close');
      return done(new AppError(5030, 'shutting down; retry (another instance)', { retryAfter: 1 }));
    }
    if (req.url !== '/health')
      return done(new AppError(5030, 'database not reachable yet', { retryAfter: 1 }));
    done();
  });
}
