import { AppError } from '../errors.js';

/** Seconds a refused export is told to wait: about what a short export takes. */
export const EXPORT_RETRY_AFTER_S = 5;
/** Seconds a refused batch is told to wait: about what a large batch takes to be processed. */
export const INGEST_RETRY_AFTER_S = 2;

/** Seconds a refused MCP request is told to wait: about what a batch of tool calls takes. */
export const MCP_RETRY_AFTER_S = 2;

/** The refusals of a PlaceBudget: beyond the key's places, beyond the process's. */
interface PlaceRefusals {
  perKey(limit: number): AppError;
  perProcess(limit: number): AppError;
}

/**
 * Places per key and per process for requests that hold memory and a socket until their answer
 * has gone (exports, MCP tool calls): one key must not take a process's capacity. A request may
 * take several places (`weight`); one heavier than a limit is admitted when its key, or the
 * process, holds nothing, so a limit below the heaviest request slows it down but never refuses
 * it forever. Limits of 0 mean none. Each refusal carries Retry-After.
 */
export class PlaceBudget {
  private total = 0;
  private readonly byKey = new Map<string, number>();

  constructor(
    readonly perKey: number,
    readonly perProcess: number,
    private readonly refusals: PlaceRefusals,
  ) {}

  /** Places held now, in all and for one key (tests, metrics). */
  running(keyId?: string): number {
    return keyId === undefined ? this.total : (this.byKey.get(keyId) ?? 0);
  }

  /** Takes `weight` places for `keyId`, or throws the refusal; returns their release (once). */
  take(keyId: string, weight = 1): () => void {
    const held = this.byKey.get(keyId) ?? 0;
    if (this.perKey > 0 && held > 0 && held + weight > this.perKey) throw this.refusals.perKey(this.perKey);
    if (this.perProcess > 0 && this.total > 0 && this.total + weight > this.perProcess)
      throw this.refusals.perProcess(this.perProcess);
    this.byKey.set(keyId, held + weight);
    this.total += weight;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= weight;
      const n = (this.byKey.get(keyId) ?? weight) - weight;
      if (n === 0) this.byKey.delete(keyId);
      else this.byKey.set(keyId, n);
    };
  }
}

/**
 * Concurrent exports (`format` other than json) per key and per process: an export reads the
 * whole result and holds a socket, a stream and its buffers for as long as its client reads
 * (200 slow exports from one key). Beyond the key's: 429 / 4291; beyond the process's:
 * 503 / 5031.
 */
export class ExportBudget extends PlaceBudget {
  constructor(perKey: number, perProcess: number) {
    super(perKey, perProcess, {
      perKey: (n) =>
        new AppError(
          4291,
          `too many exports at once: this key may run ${n} at a time (MDS_EXPORTS_PER_KEY); retry when one has ended`,
          { retryAfter: EXPORT_RETRY_AFTER_S },
        ),
      perProcess: (n) =>
        new AppError(
          5031,
          `the server is running as many exports as it may (${n}, MDS_EXPORTS_PER_PROCESS); retry later`,
          { retryAfter: EXPORT_RETRY_AFTER_S },
        ),
    });
  }
}

/**
 * MCP tool calls in flight per key and per process, from their request's admission until its
 * answer has been sent or abandoned (a request without tool calls weighs one): a JSON-RPC
 * batch's answers are held in memory until then (up to 128 KiB a call) and built on the request
 * thread. Beyond the key's: 429 / 4292; beyond the process's: 503 / 5033.
 */
export class McpBudget extends PlaceBudget {
  constructor(perKey: number, perProcess: number) {
    super(perKey, perProcess, {
      perKey: (n) =>
        new AppError(
          4292,
          `too many MCP tool calls at once: this key may have ${n} in flight (MDS_MCP_CALLS_PER_KEY); ` +
            'retry when its other requests have been answered',
          { retryAfter: MCP_RETRY_AFTER_S },
        ),
      perProcess: (n) =>
        new AppError(
          5033,
          `the server is answering as many MCP tool calls as it may (${n}, MDS_MCP_CALLS_PER_PROCESS); retry later`,
          { retryAfter: MCP_RETRY_AFTER_S },
        ),
    });
  }
}

/**
 * Bytes of ingest bodies in flight in one process, from the first byte read until the batch is
 * answered (the body, then its parse in an ingest thread, take memory until then). Beyond the
 * budget a batch is refused with 503 / 5032 and Retry-After: before its body is read when it
 * declares its length, else when what it has sent passes the budget. A body alone in flight is
 * always admitted, whatever its size (MDS_BODY_LIMIT bounds it), so a budget below the body
 * limit slows batches down but never refuses every one. 0: no budget.
 */
export class IngestMemoryBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Bytes reserved now (tests, metrics). */
  get inFlight(): number {
    return this.used;
  }

  /** A reservation that grows with the body it covers; release it once the batch is answered. */
  reservation(): IngestReservation {
    return new IngestReservation(this);
  }

  /** Whether `bytes` more fit, for a reservation holding `held` already; takes them if so. */
  tryTake(bytes: number, held: number): boolean {
    if (this.limit > 0 && this.used + bytes > this.limit && this.used - held > 0) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }
}

export class IngestReservation {
  private held = 0;
  private released = false;

  constructor(private readonly budget: IngestMemoryBudget) {}

  /** Makes the reservation at least `bytes`, or throws 503 / 5032 (nothing more taken). */
  cover(bytes: number): void {
    if (this.released || bytes <= this.held) return;
    if (!this.budget.tryTake(bytes - this.held, this.held)) {
      throw new AppError(
        5032,
        `too much batch data in flight on this server (MDS_INGEST_MEMORY_BUDGET, ${this.budget.limit} bytes); ` +
          'retry later',
        { retryAfter: INGEST_RETRY_AFTER_S },
      );
    }
    this.held = bytes;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.give(this.held);
    this.held = 0;
  }
}
