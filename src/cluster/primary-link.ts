import cluster from 'node:cluster';
import { EventEmitter } from 'node:events';
import { isMdsMessage, type LimitsMode, type ToPrimary, type ToWorker } from './messages.js';

type Question = Extract<ToPrimary, { id: number }>;
/** A question without its id and time (the link adds them); distributed over the union's members. */
type WithoutId<T> = T extends unknown ? Omit<T, 'id' | 'at'> : never;
type Ask = WithoutId<Question>;

/**
 * How long a worker waits for its primary's answer, ms: as long as for Redis (redis-limiter.ts).
 * A primary that is stopped (SIGSTOP), busy or gone must not hold requests; callers decide
 * without it (cluster-limiter.ts, metrics-routes.ts).
 */
export const PRIMARY_TIMEOUT_MS = 500;

/** Why a question was not answered: the primary did not answer in time, or is gone. */
export class PrimaryUnavailableError extends Error {}

/**
 * A cluster worker's end of the channel to its primary: questions answered by id, events the
 * primary passes on from every worker, and the primary's call for this worker's metrics.
 */
export class PrimaryLink {
  private next = 1;
  private readonly pending = new Map<number, { resolve(body: unknown): void; reject(err: Error): void }>();
  /** Events from every worker of this instance (this one's too), as the primary relays them. */
  readonly events = new EventEmitter();
  private metricsSource: (() => Promise<unknown[]>) | null = null;
  /**
   * Set when a question timed out: until the primary answers anything again, questions fail at
   * once (their callers decide alone) and one `ping` at a time checks whether it is back, so a
   * frozen primary costs one timeout, not one per request.
   */
  private unresponsive = false;
  private probing = false;
  /** Who decides limits under Redis, as the primary last said (messages.ts). */
  private mode: LimitsMode = 'shared';

  constructor(
    private readonly proc: NodeJS.Process = process,
    private readonly timeoutMs = PRIMARY_TIMEOUT_MS,
  ) {
    this.events.setMaxListeners(0);
    proc.on('message', (m: unknown) => {
      if (!isMdsMessage<ToWorker>(m)) return;
      if (m.mds === 'reply') {
        // Any answer, even to a question given up on, shows the primary runs again.
        this.unresponsive = false;
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.error !== undefined) p.reject(new Error(m.error));
        else p.resolve(m.body);
      } else if (m.mds === 'limits-mode') this.mode = m.mode;
      else if (m.mds === 'event') this.events.emit(m.kind, m.payload);
      else if (m.mds === 'metrics-collect') void this.answerMetrics(m.id);
    });
    // Without a primary nothing is answered any more: fail what waits (callers fall back).
    proc.on('disconnect', () => {
      // No supervisor to decide for the instance: Redis again, or this worker alone.
      this.mode = 'shared';
      for (const p of this.pending.values()) p.reject(new PrimaryUnavailableError('cluster primary gone'));
      this.pending.clear();
    });
  }

  /** Who decides limits under Redis: Redis, or the primary for the whole instance. */
  get limitsMode(): LimitsMode {
    return this.mode;
  }

  /** Whether questions are being answered (false after a timeout, until the primary answers again). */
  get responsive(): boolean {
    return !this.unresponsive;
  }

  /**
   * A question to the primary, answered within `timeoutMs` (PRIMARY_TIMEOUT_MS) or rejected with
   * PrimaryUnavailableError; at once while the primary is known not to answer.
   */
  ask<T>(question: Ask, timeoutMs = this.timeoutMs): Promise<T> {
    if (this.unresponsive) {
      this.probe();
      return Promise.reject(new PrimaryUnavailableError('cluster primary not answering'));
    }
    return this.question<T>(question, timeoutMs);
  }

  private question<T>(question: Ask, timeoutMs: number): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        this.unresponsive = true;
        reject(new PrimaryUnavailableError(`cluster primary did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const settle =
        <A>(f: (a: A) => void) =>
        (a: A): void => {
          clearTimeout(timer);
          f(a);
        };
      this.pending.set(id, { resolve: settle(resolve as (body: unknown) => void), reject: settle(reject) });
      this.send({ ...question, at: Date.now(), id } as ToPrimary).catch((err: Error) => {
        if (this.pending.delete(id)) settle(reject)(new PrimaryUnavailableError(err.message));
      });
    });
  }

  /** One ping at a time while the primary does not answer; its answer clears `unresponsive`. */
  private probe(): void {
    if (this.probing) return;
    this.probing = true;
    this.question({ mds: 'ping' }, this.timeoutMs)
      .catch(() => {})
      .finally(() => (this.probing = false));
  }

  /** Sends every `kinds` event of `local` to the primary, which passes it to every worker. */
  relay(local: EventEmitter, kinds: readonly string[]): void {
    for (const kind of kinds) {
      local.on(kind, (payload: unknown) => void this.send({ mds: 'event', kind, payload }).catch(() => {}));
    }
  }

  /** Tells the primary this worker serves (its database is ready and it listens). */
  ready(): void {
    void this.send({ mds: 'ready' }).catch(() => {});
  }

  /** What this worker answers when the primary gathers the instance's metrics. */
  provideMetrics(source: () => Promise<unknown[]>): void {
    this.metricsSource = source;
  }

  private async answerMetrics(id: number): Promise<void> {
    const metrics = this.metricsSource ? await this.metricsSource() : [];
    await this.send({ mds: 'metrics-part', id, metrics }).catch(() => {});
  }

  private send(m: ToPrimary): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!this.proc.send || !this.proc.connected) {
        reject(new Error('no cluster primary'));
        return;
      }
      this.proc.send(m, undefined, undefined, (err: Error | null) => (err ? reject(err) : resolve()));
    });
  }
}

/** Set by the primary on workers it forks while another serves: listen once the database is ready. */
export const JOIN_WHEN_READY = 'MDS_CLUSTER_JOIN_WHEN_READY';

let link: PrimaryLink | null | undefined;

/** This process's link to its cluster primary; null when it is not a cluster worker. */
export function primaryLink(): PrimaryLink | null {
  if (link === undefined) link = cluster.isWorker ? new PrimaryLink() : null;
  return link;
}
