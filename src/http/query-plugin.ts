import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { Services } from '../services.js';
import type { ExportBudget } from '../access/budgets.js';
import type { Principal } from '../access/keyring.js';
import { EXPORT_FORMATS } from '../export/export-formats.js';
import { checkQueryEncoding } from '../query/parse.js';
import { authHook } from './auth-hook.js';
import { registerQueryRoutes } from './query-routes.js';
import { registerChangesRoutes } from './changes-routes.js';
import { registerMinuteQualityRoutes, registerQualityRoute } from './quality-routes.js';
import { readSessionHook } from './read-needs.js';
import { registerRoutes } from './route-declaration.js';
import { UNIVERSE_ROUTE } from './universe-route.js';
import { QueryAbortedError, runInQueryContext } from '../request-context.js';

/**
 * The query API: one route per catalog dataset, behind a query key, its rate limit and quota.
 * Registered with app.register(), so the auth hook applies to these routes only; a new query
 * route is added inside and is authenticated without saying so.
 */
export async function queryPlugin(app: FastifyInstance, { services }: { services: Services }): Promise<void> {
  const { keyring, authFailures: guard, limiter } = services;
  // First: every later hook and the handler run in the request's read session.
  app.addHook('onRequest', readSessionHook((services.store.databaseStats?.().replicas.length ?? 0) > 0));
  app.addHook(
    'onRequest',
    authHook('query', { keyring, guard, limiter, admit: exportGate(services.exports) }),
  );
  // After the key (a request without one is a 401 whatever its parameters), before any route.
  app.addHook('onRequest', (req, _reply, done) => {
    try {
      checkQueryEncoding(req.url);
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  });
  app.addHook('preHandler', queryContextHook(services));
  registerQueryRoutes(app, services.catalog, services.query, {
    exportStallTimeoutMs: services.config.MDS_EXPORT_STALL_TIMEOUT_MS,
    encoders: services.exportEncoders,
    minute: services.minute,
  });
  registerRoutes(app, [UNIVERSE_ROUTE], services);
  registerQualityRoute(app, '/api/v1/quality/:dataset', services.quality);
  registerMinuteQualityRoutes(app, '/api/v1/quality', services.minuteQuality);
  registerChangesRoutes(app, services.catalog, {
    feed: services.changes,
    heartbeatMs: services.config.MDS_CHANGES_HEARTBEAT_MS,
    maxBufferedBytes: services.config.MDS_CHANGES_BUFFER_BYTES,
  });
}

/**
 * preHandler: every statement the request runs knows its key (reader processes are shared
 * fairly) and is stopped when the client goes before the answer has been sent
 * (request-context.ts). Also /mcp's (mcp-plugin.ts).
 */
export function queryContextHook(services: Services): preHandlerHookHandler {
  return (req, reply, done) => {
    const { ctx, abort, release } = services.queryContexts.open(req.principal?.id ?? req.ip);
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort(new QueryAbortedError('disconnected'));
      release();
    });
    runInQueryContext(ctx, done);
  };
}

/**
 * An export takes a place in the export budget (access/budgets.ts) from its admission until its
 * response has ended, however it ends (sent, cut off, client gone): decided here, from the
 * request alone, whatever runs the export.
 */
function exportGate(budget: ExportBudget): (req: FastifyRequest, reply: FastifyReply, p: Principal) => void {
  return (req, reply, p) => {
    const format = (req.query as Record<string, unknown>).format;
    if (typeof format !== 'string' || format === 'json' || !Object.hasOwn(EXPORT_FORMATS, format)) return;
    const release = budget.take(p.id);
    reply.raw.once('close', release);
  };
}
