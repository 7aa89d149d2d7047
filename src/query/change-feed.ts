import type { EventEmitter } from 'node:events';
import type { Catalog } from '../catalog/catalog.js';
import { AppError, invalid } from '../errors.js';
import { adjustedBy, codeFieldOf, type ChangeEvent } from '../model/changes.js';
import type { Store, StoredChange } from '../storage/store.js';

/**
 * The change feed (docs/changes.md): pages of the events after an id, and one shared poll of
 * the database for the live streams of this process. The database's sequence orders the events
 * (storage/change-events.ts), so every process and instance on one database tells the same
 * order; this process learns of a new event at once when it or a worker of its cluster
 * committed it (its batch events), and within `pollMs` when another instance did.
 */

export interface ChangeFeedOptions {
  /** How often the live streams' shared poll reads the feed while any is open, ms. */
  pollMs: number;
  /** Open streams per key in this process (then 429 / 4293). 0: no limit. */
  streamsPerKey: number;
}

export interface ChangePageAnswer {
  events: ChangeEvent[];
  /** The id to ask after next: the last event's, or, when the page is the end, the latest id scanned. */
  next: number;
  latest: number;
  oldest: number | null;
  hasMore: boolean;
}

type Listener = (events: readonly ChangeEvent[]) => void;

/** Events the shared poll reads at once. */
const POLL_PAGE = 1000;

export class ChangeFeed {
  private readonly listeners = new Set<Listener>();
  private readonly streams = new Map<string, number>();
  private pos = -1;
  private timer: NodeJS.Timeout | null = null;
  private pumping: Promise<void> | null = null;
  private again = false;
  private readonly wake = (): void => void this.pump();

  constructor(
    private readonly store: Pick<Store, 'changes'>,
    private readonly catalog: Catalog,
    private readonly events: EventEmitter | null,
    private readonly opts: ChangeFeedOptions,
  ) {}

  /** The event as answered: the stored one with its catalog parts. */
  private answer(c: StoredChange): ChangeEvent {
    const d = this.catalog.byName.get(c.dataset);
    return {
      ...c,
      code_field: d ? (codeFieldOf(d)?.apiName ?? null) : null,
      date_field: d?.range?.apiName ?? null,
      adjusts: d && c.kind === 'factor_change' ? adjustedBy(this.catalog, d) : [],
    };
  }

  /**
   * The events after `since` (null: from the oldest kept), oldest first, at most `limit`. A
   * `since` before what retention kept is 410 / 4100 naming the oldest id; one after the
   * latest id is 400 / 4001 (an id of another database).
   */
  async page(
    datasets: readonly string[] | null,
    since: number | null,
    limit: number,
  ): Promise<ChangePageAnswer> {
    const after = since ?? 0;
    const p = await this.store.changes.list({ datasets, after, limit });
    if (since !== null && since < p.purgedThrough) {
      throw new AppError(
        4100,
        `since=${since} is older than the change feed keeps: the oldest event kept is ${p.oldest ?? 'none'} ` +
          `(the latest ${p.latest}); copy the data again, then follow from since=${p.latest}`,
        { extra: { oldest_id: p.oldest, latest_id: p.latest } },
      );
    }
    if (since === null && after < p.purgedThrough) return this.page(datasets, p.purgedThrough, limit);
    if (after > p.latest) {
      throw invalid(`since=${after} is after the latest event id ${p.latest}: an id of another database?`, {
        parameter: 'since',
        latest_id: p.latest,
      });
    }
    const events = p.events.map((e) => this.answer(e));
    const hasMore = events.length >= limit && (events[events.length - 1]?.id ?? p.latest) < p.latest;
    const next = hasMore ? (events[events.length - 1]?.id ?? after) : p.latest;
    return { events, next, latest: p.latest, oldest: p.oldest, hasMore };
  }

  /** The highest id the live streams have been given (-1 before the first poll). */
  get position(): number {
    return this.pos;
  }

  /**
   * A stream of key `keyId` opens: its place among the key's streams, given back by the
   * returned function. 429 / 4293 beyond `streamsPerKey`.
   */
  openStream(keyId: string): () => void {
    const n = this.streams.get(keyId) ?? 0;
    const max = this.opts.streamsPerKey;
    if (max > 0 && n >= max) {
      throw new AppError(4293, `this key has ${n} change streams open in this process, the most it may`, {
        retryAfter: 5,
      });
    }
    this.streams.set(keyId, n + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.streams.get(keyId) ?? 1) - 1;
      if (left > 0) this.streams.set(keyId, left);
      else this.streams.delete(keyId);
    };
  }

  /**
   * Every event from the next poll on, in id order, until the returned function is called.
   * Resolves once the feed knows its position (the first subscriber reads it).
   */
  async subscribe(listener: Listener): Promise<() => void> {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.start();
    await this.pump();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  private start(): void {
    this.timer = setInterval(this.wake, this.opts.pollMs);
    this.timer.unref();
    this.events?.on('batch', this.wake);
    this.events?.on('revert', this.wake);
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.events?.off('batch', this.wake);
    this.events?.off('revert', this.wake);
    // Read again from the latest id when a stream next opens.
    this.pos = -1;
  }

  /** One poll at a time; a wake during one polls again after it. */
  private pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      try {
        do {
          this.again = false;
          await this.poll();
        } while (this.again && this.listeners.size > 0);
      } catch {
        // The database did not answer: the next tick tries again; the streams stay open.
      } finally {
        this.pumping = null;
      }
    })();
    return this.pumping;
  }

  private async poll(): Promise<void> {
    if (this.listeners.size === 0) return;
    if (this.pos < 0) {
      this.pos = (await this.store.changes.list({ datasets: null, after: 0, limit: 0 })).latest;
      return;
    }
    for (;;) {
      const p = await this.store.changes.list({ datasets: null, after: this.pos, limit: POLL_PAGE });
      if (this.pos < 0) return;
      const events = p.events.map((e) => this.answer(e));
      const last = events[events.length - 1];
      this.pos = events.length === POLL_PAGE && last ? last.id : Math.max(this.pos, p.latest);
      if (events.length > 0) for (const l of [...this.listeners]) l(events);
      if (events.length < POLL_PAGE) return;
    }
  }

  close(): void {
    this.listeners.clear();
    this.stop();
  }
}
