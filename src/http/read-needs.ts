import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Dataset } from '../catalog/catalog.js';
import { AppError } from '../errors.js';
import { READ_TOKEN, readSession, withReadSession } from '../storage/read-consistency.js';

/**
 * What a query request needs from the database that answers it (storage/read-consistency.ts;
 * docs/deployment.md "What a read may see"): the read-your-writes token it presents, the
 * versions of the ETag it sent back, its `as_of`. Only a store with read replicas acts on them.
 */

/** The header a batch answer carries and a query presents (read-your-writes). */
export const READ_AFTER_HEADER = 'mds-read-after';

type Hook = (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * onRequest hook: a presented token is checked; with replicas (`routed`) the rest of the request
 * runs in a read session holding it. Without, no session is opened: AsyncLocalStorage would cost
 * every promise of the process a hook (Node 20) for needs nothing acts on.
 */
export function readSessionHook(routed: boolean): Hook {
  return (req, _reply, done) => {
    const token = req.headers[READ_AFTER_HEADER];
    if (token !== undefined && (typeof token !== 'string' || !READ_TOKEN.test(token))) {
      done(new AppError(4001, 'MDS-Read-After must be the token of a batch answer, e.g. 0/3000148'));
      return;
    }
    if (!routed) return done();
    withReadSession(token === undefined ? {} : { after: token.toUpperCase() }, () => done());
  };
}

/** ETags of query answers: `W/"<version>[:<factor version>]-<url hash>"` (query-routes.ts). */
const ETAG = /^W\/"(\d+)(?::(\d+))?-[^"]*"$/;

/**
 * Adds the page's own needs before its first read: an ETag the client sent back names the
 * versions it has seen (an answer never goes back before them), `as_of` the instant whose
 * commits the database must hold.
 */
export function notePageNeeds(req: FastifyRequest, d: Dataset, factors: string | undefined): void {
  const needs = readSession()?.needs;
  if (!needs) return;
  const m = ETAG.exec(req.headers['if-none-match'] ?? '');
  if (m) {
    needs.versions.set(d.name, Number(m[1]));
    if (m[2] !== undefined && factors !== undefined) needs.versions.set(factors, Number(m[2]));
  }
  const asOf = (req.query as Record<string, unknown>).as_of;
  const at = typeof asOf === 'string' ? Date.parse(asOf) : NaN;
  // A malformed as_of is answered 400 by the parser; until then it needs nothing.
  if (Number.isFinite(at)) needs.asOf = at;
}
