import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { createServices, type ServiceDeps, type Services } from './services.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/error-handler.js';
import { ROUTER_OPTIONS } from './http/route-methods.js';
import { registerLifecycleHooks } from './http/lifecycle-hooks.js';
import { registerHealthRoute } from './http/health-route.js';
import { registerMetricsRoutes } from './http/metrics-routes.js';
import { registerDashboardRoutes } from './http/dashboard-routes.js';
import type { EventsOptions } from './http/events-routes.js';
import { queryPlugin } from './http/query-plugin.js';
import { ingestPlugin } from './http/ingest-plugin.js';
import { adminPlugin } from './http/admin-plugin.js';
import { mcpPlugin } from './http/mcp-plugin.js';
import { OPENAPI_ROUTE, documentOnFirstRead, lazyDocument } from './http/openapi.js';
import { registerRoutes } from './http/route-declaration.js';
import { VERSION } from './version.js';

export interface AppOptions {
  /** Server-sent events tuning (tests shorten the heartbeat). */
  events?: Pick<EventsOptions, 'heartbeatMs' | 'maxBufferedBytes'>;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

/**
 * Fastify's response serialisers (fast-json-stringify, one per route and status), each built at
 * its route's first answer rather than all at start: building them all was about a fifth of a
 * start's CPU (docs/testing.md), and a process answers few of its routes. What is built, and so
 * every answer, is the same; a schema it cannot build fails that route's answers, not the start.
 */
const serializersOnFirstUse: SerializerSelector.SerializerFactory = (external, options) => {
  const build = SerializerSelector()(external, options);
  return (route) => {
    let serialize: SerializerSelector.Serializer | undefined;
    return (doc) => (serialize ??= build(route))(doc);
  };
};

/**
 * The HTTP application over built services, without listening (tests use inject()). It owns
 * them from here on: closing the app closes them (the store excepted).
 */
export async function createApp(services: Services, opts: AppOptions = {}): Promise<FastifyInstance> {
  const { config, catalog, store, readiness } = services;
  // Typed as Fastify's logger, so plugins take the default FastifyInstance.
  const loggerInstance: FastifyBaseLogger = services.log;
  const app = Fastify({
    loggerInstance,
    bodyLimit: config.MDS_BODY_LIMIT,
    requestTimeout: config.MDS_REQUEST_TIMEOUT_MS,
    connectionTimeout: 0,
    keepAliveTimeout: config.MDS_KEEP_ALIVE_TIMEOUT_MS,
    // Node checks the headers and request timeouts only this often (default 30 s): keep it small
    // so a slowloris client is cut off close to MDS_HEADERS_TIMEOUT_MS.
    http: { connectionsCheckingInterval: Math.max(50, Math.min(1000, config.MDS_HEADERS_TIMEOUT_MS)) },
    maxRequestsPerSocket: 0,
    trustProxy: config.MDS_TRUST_PROXY,
    // Fastify's own closing answer has neither our body nor Retry-After: see the readiness hook.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // A batch_id may be 256 characters (batch-request.ts): its status path must route.
    routerOptions: ROUTER_OPTIONS,
    frameworkErrors,
    clientErrorHandler,
    schemaController: { compilersFactory: { buildSerializer: serializersOnFirstUse } },
  });
  app.server.headersTimeout = config.MDS_HEADERS_TIMEOUT_MS;
  if (config.MDS_MAX_CONNECTIONS > 0) app.server.maxConnections = config.MDS_MAX_CONNECTIONS;
  app.decorate('services', services);
  app.addHook('onClose', async () => services.close());

  // Only JSON bodies: anything else (text/plain included) is 415 / 4150.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    app.getDefaultJsonParser('error', 'error'),
  );

  // Hooks on the root see every request; each API group adds its own auth in its plugin.
  registerLifecycleHooks(app, readiness);
  registerErrorHandling(app);
  const metrics = registerMetricsRoutes(
    app,
    services.ingest,
    services.store.databaseStats?.bind(services.store),
  );
  registerHealthRoute(app, store, () => readiness.isReady(), config.DATABASE_URL);

  await app.register(ingestPlugin, { services, events: { ...opts.events, gauge: metrics.sseClients } });
  await app.register(queryPlugin, { services });
  await app.register(adminPlugin, { services });
  if (config.MDS_MCP === 'on') await app.register(mcpPlugin, { services, registry: metrics.registry });
  registerDashboardRoutes(app);

  const doc = lazyDocument(catalog, VERSION);
  registerRoutes(app, [OPENAPI_ROUTE], doc);
  await app.register(swagger, {
    mode: 'static',
    specification: { document: documentOnFirstRead(doc) as never },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  return app;
}

/** Services and app in one call (tests, benches): see createServices() and createApp(). */
export async function buildApp(deps: ServiceDeps & AppOptions): Promise<FastifyInstance> {
  const { events, ...serviceDeps } = deps;
  return createApp(await createServices(serviceDeps), events ? { events } : {});
}
