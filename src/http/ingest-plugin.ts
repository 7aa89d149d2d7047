import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { isStaticKey, type Principal } from '../access/keyring.js';
import { authHook } from './auth-hook.js';
import { registerIngestRoutes } from './ingest-routes.js';
import { registerEventsRoutes, type EventsOptions } from './events-routes.js';

export interface IngestPluginOptions {
  services: Services;
  events: EventsOptions;
}

/**
 * The upstream API (push, batch status, the events stream) behind an ingest key, added once
 * for the group (encapsulated by app.register()).
 */
export async function ingestPlugin(app: FastifyInstance, opts: IngestPluginOptions): Promise<void> {
  const { services } = opts;
  const { keyring, authFailures: guard } = services;
  // No limits on ingest keys, but their use is recorded (last_used_at, the usage counts).
  const used = (p: Principal): void => {
    if (!isStaticKey(p)) services.usage.count(p.id);
  };
  app.addHook('onRequest', authHook('ingest', { keyring, guard, limiter: null, used }));
  registerIngestRoutes(app, services.catalog, services.ingest, {
    bodyLimit: services.config.MDS_BODY_LIMIT,
    memory: services.ingestMemory,
    readToken: () => services.store.readToken(),
  });
  registerEventsRoutes(app, services.catalog, services.batchEvents, opts.events);
}
