import type { PrimaryLink } from '../cluster/primary-link.js';
import type { LimitItem, LimitTally } from '../cluster/messages.js';
import type { Principal } from './keyring.js';
import {
  decision,
  needsCounting,
  noLimit,
  windowsAt,
  type LimitDecision,
  type Limiter,
  type Windows,
} from './limiter.js';
import { MemoryLimiter, type DaySeed } from './memory-limiter.js';

interface Waiting {
  p: Principal;
  w: Windows;
  resolve(d: LimitDecision): void;
}

/**
 * A cluster worker's limiter without Redis: the counting is done by the primary
 * (cluster/worker-hub.ts), one set of counters for every worker of the instance, so limits are
 * exact as in one process. The requests of one event-loop turn travel in one message. The
 * worker's own MemoryLimiter reads a key's stored day count (sent along as a floor, so a
 * restart does not renew a quota) and counts alone should the primary stop answering.
 */
export class ClusterLimiter implements Limiter {
  private readonly local: MemoryLimiter;
  private readonly now: () => number;
  private queue: Waiting[] = [];

  constructor(
    private readonly link: PrimaryLink,
    opts: { seed?: DaySeed; now?: () => number } = {},
  ) {
    this.local = new MemoryLimiter(opts);
    this.now = opts.now ?? Date.now;
  }

  consume(p: Principal): LimitDecision | Promise<LimitDecision> {
    if (!needsCounting(p)) return noLimit(this.now());
    const w = windowsAt(this.now());
    const seeding = this.local.ready(p, w.day);
    return new Promise<LimitDecision>((resolve) => {
      const enqueue = (): void => {
        this.queue.push({ p, w, resolve });
        if (this.queue.length === 1) setImmediate(this.flush);
      };
      if (seeding) void seeding.then(enqueue);
      else enqueue();
    });
  }

  private readonly flush = (): void => {
    const batch = this.queue;
    this.queue = [];
    const items: LimitItem[] = batch.map(({ p }) => [
      p.id,
      p.ratePerMinute,
      p.dailyQuota,
      p.dailyQuota === null ? 0 : this.local.known(p.id)[0],
    ]);
    this.link.ask<LimitTally[]>({ mds: 'limit', items }).then(
      (tallies) =>
        batch.forEach(({ p, w, resolve }, i) => {
          const [code, minuteCount, dayCount] = tallies[i] as LimitTally;
          resolve(decision(p, code, minuteCount, dayCount, w));
        }),
      // No primary (it is stopping): count here rather than refuse or fail the requests.
      () => batch.forEach(({ p, w, resolve }) => resolve(this.local.count(p, w))),
    );
  };

  async peek(keyIds: readonly string[]): Promise<Map<string, number>> {
    try {
      return new Map(await this.link.ask<[string, number][]>({ mds: 'peek', ids: [...keyIds] }));
    } catch {
      return this.local.peek(keyIds);
    }
  }

  async close(): Promise<void> {
    await this.local.close();
  }
}
