import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What the storage needs to know of the request a statement runs for, without every call
 * between the route and the executor passing it on: whose it is (reader processes are shared
 * fairly among keys: sqlite/reader-pool.ts) and a signal that fires when its client is gone or
 * the process shuts down (the statement is stopped: a reader process replaced, a PostgreSQL
 * query cancelled). Set once per query request (http/query-plugin.ts).
 */
export interface QueryContext {
  /** The query key's id (else the client's address): the unit of fairness. */
  owner: string;
  signal: AbortSignal;
}

const storage = new AsyncLocalStorage<QueryContext>();

/** The context of the request this code runs for; undefined outside a query request. */
export function currentQueryContext(): QueryContext | undefined {
  return storage.getStore();
}

/** Runs `fn` (and everything it starts) in `ctx`. */
export function runInQueryContext<T>(ctx: QueryContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/** Why a statement was stopped before its end, other than its deadline. */
export class QueryAbortedError extends Error {
  constructor(readonly reason: 'disconnected' | 'shutdown') {
    super(reason === 'shutdown' ? 'the service is shutting down' : 'the client disconnected');
  }
}

/**
 * Every query request in flight, so a shutdown can stop their statements at once instead of
 * waiting out the grace period behind a long one.
 */
export class QueryContexts {
  private readonly live = new Set<AbortController>();

  /** A context for one request; `release` when its response has ended. */
  open(owner: string): {
    ctx: QueryContext;
    abort: (reason: QueryAbortedError) => void;
    release: () => void;
  } {
    const controller = new AbortController();
    this.live.add(controller);
    return {
      ctx: { owner, signal: controller.signal },
      abort: (reason) => controller.abort(reason),
      release: () => this.live.delete(controller),
    };
  }

  /** Stops every statement in flight (shutdown). */
  abortAll(): void {
    for (const c of this.live) c.abort(new QueryAbortedError('shutdown'));
    this.live.clear();
  }
}
