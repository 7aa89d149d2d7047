import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import type { Readiness } from '../readiness.js';

/** How often, during shutdown, connections that have become idle are closed. */
const IDLE_SWEEP_MS = 100;

/**
 * Start and shutdown. Before the database is ready: 503 / 5030 with Retry-After (except /health,
 * which says so itself). Once shutdown has begun: new requests on open connections get 503 /
 * 5030, and every answer carries `Connection: close`, so a keep-alive connection ends with the
 * request in flight on it instead of holding the close until its keep-alive timeout (Node's
 * server.close() closes only the connections idle at that moment). Connections that become idle
 * afterwards (a stream whose headers left before the signal) are closed as they do.
 */
export function registerLifecycleHooks(app: FastifyInstance, readiness: Readiness): void {
  let sweep: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    readiness.startClosing();
    sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
    sweep.unref();
  });
  app.addHook('onClose', async () => clearInterval(sweep));

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
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (readiness.isClosing) reply.header('Connection', 'close');
    done(null, payload);
  });
}
