import type { FastifyInstance } from 'fastify';

/** Placeholder: the operator's dashboard at /dashboard is being built (issue 7). */
export function registerDashboardRoutes(_app: FastifyInstance): void {}
