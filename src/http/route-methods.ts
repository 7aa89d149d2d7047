import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyInstance } from 'fastify';
import { REFUSES_METHOD } from './route-declaration.js';

/** Fastify's router options (app.ts); the method index below must route paths the same way. */
export const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: 1024 } as const;

const noop = (): void => {};

/**
 * Which methods a concrete path answers to, for `405` and its `Allow` header: Fastify's router
 * says only "no route" for a known path with a wrong method. A second find-my-way (the router
 * Fastify uses, with its options) learns every route as it is added (onRoute, so routes of
 * plugins registered later are included); it is asked only on the not-found path. A route that
 * only answers 405 (/mcp's GET and DELETE) is left out, so every 405 of a path names the same
 * methods.
 */
export class RouteMethods {
  private readonly router = FindMyWay(ROUTER_OPTIONS);
  private readonly methods = new Set<HTTPMethod>();

  constructor(app: FastifyInstance) {
    app.addHook('onRoute', (route) => {
      if ((route.config as Record<string, unknown> | undefined)?.[REFUSES_METHOD] === true) return;
      const methods = (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethod[];
      this.router.on(methods, route.url, noop);
      for (const m of methods) this.methods.add(m);
    });
  }

  /** The methods `url` (query string allowed) is routed for, sorted; empty for an unknown path. */
  allowed(url: string): string[] {
    const path = url.split('?')[0] ?? url;
    return [...this.methods].filter((m) => this.router.find(m, path) !== null).sort();
  }
}
