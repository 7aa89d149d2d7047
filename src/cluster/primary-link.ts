import cluster from 'node:cluster';
import { EventEmitter } from 'node:events';
import { isMdsMessage, type ToPrimary, type ToWorker } from './messages.js';

type Question = Extract<ToPrimary, { id: number }>;
/** A question without its id (the link numbers them); distributed over the union's members. */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;
type Ask = WithoutId<Question>;

/**
 * A cluster worker's end of the channel to its primary: questions answered by id, events the
 * primary passes on from every worker, and the primary's call for this worker's metrics.
 */
export class PrimaryLink {
  private next = 0;
  private readonly pending = new Map<number, { resolve(body: unknown): void; reject(err: Error): void }>();
  /** Events from every worker of this instance (this one's too), as the primary relays them. */
  readonly events = new EventEmitter();
  private metricsSource: (() => Promise<unknown[]>) | null = null;

  constructor(private readonly proc: NodeJS.Process = process) {
    this.events.setMaxListeners(0);
    proc.on('message', (m: unknown) => {
      if (!isMdsMessage<ToWorker>(m)) return;
      if (m.mds === 'reply') {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.error !== undefined) p.reject(new Error(m.error));
        else p.resolve(m.body);
      } else if (m.mds === 'event') this.events.emit(m.kind, m.payload);
      else if (m.mds === 'metrics-collect') void this.answerMetrics(m.id);
    });
    // Without a primary nothing is answered any more: fail what waits (callers fall back).
    proc.on('disconnect', () => {
      for (const p of this.pending.values()) p.reject(new Error('cluster primary gone'));
      this.pending.clear();
    });
  }

  ask<T>(question: Ask): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (body: unknown) => void, reject });
      this.send({ ...question, id } as ToPrimary).catch((err: Error) => {
        this.pending.delete(id);
        reject(err);
      });
    });
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
