import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { adminAuthHook } from './admin-auth.js';
import { registerAdminKeyRoutes } from './admin-key-routes.js';
import { registerAdminDataRoutes } from './admin-data-routes.js';

/** A group of /admin/api/* routes; every one is behind the admin token. */
export type AdminRoutes = (app: FastifyInstance, services: Services) => void;

/** The admin API's route groups. A new admin feature adds its registrar here. */
export const ADMIN_ROUTES: readonly AdminRoutes[] = [registerAdminKeyRoutes, registerAdminDataRoutes];

/** /admin/api/*: the token check is added once, for this encapsulated group only. */
export async function adminPlugin(app: FastifyInstance, { services }: { services: Services }): Promise<void> {
  app.addHook('onRequest', adminAuthHook(services.adminTokens, services.authFailures));
  for (const routes of ADMIN_ROUTES) routes(app, services);
}
