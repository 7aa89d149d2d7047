import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Config } from './config.js';
import { CATALOG, type Catalog } from './catalog/catalog.js';
import type { Store } from './storage/store.js';
import { IngestService } from './ingest/ingest-service.js';
import { QueryService } from './query/query-service.js';
import { KeyRing } from './access/keyring.js';
import { AuthFailureGuard } from './access/auth-failures.js';
import type { Limiter } from './access/limiter.js';
import { createLimiter } from './access/create-limiter.js';
import { KeyService, keyDefaults } from './access/key-service.js';
import { UsageRecorder, metered } from './access/usage-recorder.js';
import { AppError } from './errors.js';
import { frameworkErrors, registerErrorHandling } from './http/error-handler.js';
import { registerHealthRoute } from './http/health-route.js';
import { registerIngestRoutes } from './http/ingest-routes.js';
import { registerQueryRoutes } from './http/query-routes.js';
import { authHook } from './http/auth-hook.js';
import { adminAuthHook } from './http/admin-auth.js';
import { registerAdminKeyRoutes } from './http/admin-key-routes.js';
import { registerAdminDataRoutes } from './http/admin-data-routes.js';
import { registerDashboardRoutes } from './http/dashboard-routes.js';
import { registerMetricsRoutes } from './http/metrics-routes.js';
import { registerEventsRoutes, type EventsOptions } from './http/events-routes.js';
import { openApiDocument } from './http/openapi.js';
import { VERSION } from './version.js';

export interface AppDeps {
  config: Config;
  store: Store;
  catalog?: Catalog;
  limiter?: Limiter;
  /** False until the database is migrated and reachable (health 503, requests 503); asked until true. */
  ready?: () => boolean;
  /** Server-sent events tuning (tests shorten the heartbeat). */
  events?: Pick<EventsOptions, 'heartbeatMs' | 'maxBufferedBytes'>;
}

export interface Services {
  catalog: Catalog;
  store: Store;
  ingest: IngestService;
  query: QueryService;
  keyring: KeyRing;
  limiter: Limiter;
  keys: KeyService;
  usage: UsageRecorder;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

/** Builds the app without listening (tests use inject()). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, store } = deps;
  const catalog = deps.catalog ?? CATALOG;
  const app = Fastify({
    logger: {
      level: config.LOG_LEVEL,
      // Keys and tokens never reach the logs.
      redact: {
        paths: ['req.headers["q-api-key"]', 'req.headers["up-api-key"]', 'req.headers.authorization'],
        censor: '[redacted]',
      },
    },
    bodyLimit: config.MDS_BODY_LIMIT,
    requestTimeout: config.MDS_REQUEST_TIMEOUT_MS,
    connectionTimeout: 0,
    keepAliveTimeout: config.MDS_KEEP_ALIVE_TIMEOUT_MS,
    // Node checks the headers and request timeouts only this often (default 30 s): keep it small
    // so a slowloris client is cut off close to MDS_HEADERS_TIMEOUT_MS.
    http: { connectionsCheckingInterval: Math.max(50, Math.min(1000, config.MDS_HEADERS_TIMEOUT_MS)) },
    maxRequestsPerSocket: 0,
    trustProxy: config.MDS_TRUST_PROXY,
    // Fastify's own closing answer has neither our body nor Retry-After: see the onRequest hook.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // A batch_id may be 256 characters (batch-request.ts): its status path must route.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    frameworkErrors,
  });
  app.server.headersTimeout = config.MDS_HEADERS_TIMEOUT_MS;
  if (config.MDS_MAX_CONNECTIONS > 0) app.server.maxConnections = config.MDS_MAX_CONNECTIONS;

  // Counters from REDIS_URL (else memory) unless the caller brings its own (and then closes it).
  const baseLimiter = deps.limiter ?? (await createLimiter(config, app.log, store));
  const usage = new UsageRecorder(store, { log: app.log });
  const limiter = metered(baseLimiter, usage);
  app.addHook('onClose', async () => {
    await usage.close();
    if (!deps.limiter) await baseLimiter.close();
  });
  const services: Services = {
    catalog,
    store,
    ingest: new IngestService(catalog, store, {
      maxRecords: config.MDS_MAX_RECORDS,
      pauseBeforeCommitMs: config.MDS_TEST_PAUSE_BEFORE_COMMIT_MS,
    }),
    query: new QueryService(store),
    keyring: new KeyRing(store, config),
    limiter,
    keys: new KeyService(store, keyDefaults(config)),
    usage,
  };
  app.decorate('services', services);

  // Only JSON bodies: anything else (text/plain included) is 415 / 4150.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    app.getDefaultJsonParser('error', 'error'),
  );

  const ready = deps.ready ?? (() => true);
  let closing = false;
  // Latched once ready and until closing, so an open service pays one test per request.
  let open = false;
  app.addHook('preClose', async () => {
    closing = true;
    open = false;
  });
  // Callback style: an async hook costs every request a promise.
  app.addHook('onRequest', (req, reply, done) => {
    if (open) return done();
    // Shutting down: requests still arriving on open connections are sent elsewhere.
    if (closing) {
      reply.header('Connection', 'close');
      return done(new AppError(5030, 'shutting down; retry (another instance)', { retryAfter: 1 }));
    }
    if (ready()) open = true;
    else if (req.url !== '/health')
      return done(new AppError(5030, 'database not reachable yet', { retryAfter: 1 }));
    done();
  });

  registerErrorHandling(app);
  // Before the routes, so its hooks see every request.
  const metrics = registerMetricsRoutes(app, services.ingest);
  registerHealthRoute(app, store, ready);

  const guard = new AuthFailureGuard(config.MDS_AUTH_FAILURES_PER_MINUTE);
  const ingestAuth = authHook('ingest', { keyring: services.keyring, guard, limiter: null });
  registerIngestRoutes(app, services.ingest, ingestAuth, config.MDS_BODY_LIMIT);
  registerEventsRoutes(app, catalog, services.ingest, ingestAuth, {
    ...deps.events,
    gauge: metrics.sseClients,
  });
  registerQueryRoutes(
    app,
    catalog,
    services.query,
    authHook('query', { keyring: services.keyring, guard, limiter }),
  );

  const adminAuth = adminAuthHook(config.MDS_ADMIN_TOKEN, guard);
  registerAdminKeyRoutes(app, services, adminAuth);
  registerAdminDataRoutes(app, services, adminAuth);
  registerDashboardRoutes(app);

  const doc = openApiDocument(catalog, VERSION);
  app.get('/openapi.json', { schema: { hide: true } }, async () => doc);
  await app.register(swagger, { mode: 'static', specification: { document: doc as never } });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  return app;
}
