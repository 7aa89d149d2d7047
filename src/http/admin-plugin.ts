import type { FastifyInstance } from 'fastify';
import type { Catalog } from '../catalog/catalog.js';
import type { Services } from '../services.js';
import { adminAuthHook } from './admin-auth.js';
import { ADMIN_KEY_ROUTES } from './admin-key-routes.js';
import { adminDataRoutes, registerAdminQualityRoute } from './admin-data-routes.js';
import { registerRoutes, type Route } from './route-declaration.js';

/** A group of /admin/api/* routes, declared with their documentation; every one is behind the admin token. */
export type AdminRoutes = (catalog: Catalog) => readonly Route<Services>[];

/** The admin API's route groups. A new admin feature adds its declarations here. */
export const ADMIN_ROUTES: readonly AdminRoutes[] = [() => ADMIN_KEY_ROUTES, adminDataRoutes];

/** /admin/api/*: the token check is added once, for this encapsulated group only. */
export async function adminPlugin(app: FastifyInstance, { services }: { services: Services }): Promise<void> {
  app.addHook('onRequest', adminAuthHook(services.adminTokens, services.authFailures));
  for (const routes of ADMIN_ROUTES) registerRoutes(app, routes(services.catalog), services);
  registerAdminQualityRoute(app, services);
}
