/**
 * One owner's (a query key's) share of the pool's connections: at most `limit` of its statements
 * hold a connection at once; the rest wait in order. With `limit` below the pool's size, another
 * key's page (and the batch that ingest sends) always finds a connection within one statement's
 * time, as the SQLite reader pool keeps one reader free of any one key.
 */
export class OwnerShares {
  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly limit: number) {}

  /**
   * Resolves once `owner` may run one more statement; rejects with `onAbort()`'s error when
   * `signal` aborts first, or with `onTimeout()`'s after `timeoutMs` of waiting.
   */
  take(
    owner: string,
    signal: AbortSignal,
    timeoutMs: number,
    onTimeout: () => Error,
    onAbort: () => Error,
  ): Promise<void> {
    const n = this.held.get(owner) ?? 0;
    if (n < this.limit) {
      this.held.set(owner, n + 1);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const queue = this.waiting.get(owner) ?? [];
      this.waiting.set(owner, queue);
      const leave = (err: Error): void => {
        const i = queue.indexOf(admit);
        if (i >= 0) queue.splice(i, 1);
        if (queue.length === 0) this.waiting.delete(owner);
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        reject(err);
      };
      const aborted = (): void => leave(onAbort());
      const timer = setTimeout(() => leave(onTimeout()), timeoutMs);
      // Called by give(): the share passes straight from the statement that ended to this one.
      const admit = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        resolve();
      };
      signal.addEventListener('abort', aborted, { once: true });
      queue.push(admit);
    });
  }

  /** The statement that took a share has ended (with or without its connection back). */
  give(owner: string): void {
    const queue = this.waiting.get(owner);
    const next = queue?.shift();
    if (queue?.length === 0) this.waiting.delete(owner);
    if (next) return next();
    const n = (this.held.get(owner) ?? 1) - 1;
    if (n <= 0) this.held.delete(owner);
    else this.held.set(owner, n);
  }
}
