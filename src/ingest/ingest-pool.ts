import { EventEmitter } from 'node:events';
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { AppError, type ErrorCode } from '../errors.js';
import type { Catalog } from '../catalog/catalog.js';
import {
  SchemaTooNewError,
  StoreSetupError,
  StoreUnavailableError,
  type DatasetCoverage,
  type Store,
} from '../storage/store.js';
import type { BatchRecord, RevertCounts } from '../model/batch.js';
import type { StoreTuning } from '../storage/create-store.js';
import type { PriorityOutcome } from '../thread-priority.js';
import { ownBytes, startThread } from '../worker-threads.js';
import { sqliteUrl } from '../model/database-url.js';
import { writerSocket } from './writer-env.js';
import { IngestService, batchStatus, type BatchIngest, type IngestOutcome } from './ingest-service.js';

/**
 * Batches are processed on worker threads, each with its own database connection, so the thread
 * that answers queries and /health never parses, hashes, validates or writes a batch, and never
 * waits for a write lock: reading the body's bytes is all it does (they are transferred, not
 * copied or re-serialised). SQLite in WAL mode lets the main thread's readers go on while a
 * worker writes; writers wait for each other inside the workers. The same threads run the
 * start-up migration and the coverage recount, which are long, synchronous work on SQLite.
 * Events and metrics are fed here, on the main thread, after a batch.
 */

/** Ingest threads when MDS_INGEST_THREADS is unset: every core but the request thread's, 1 to 4. */
export function defaultIngestThreads(): number {
  return Math.max(1, Math.min(4, os.availableParallelism() - 1));
}

/**
 * How many ingest threads a process runs (0: batches in the request thread). On SQLite at most
 * one, whatever MDS_INGEST_THREADS says: two connections that write in turns each find their page
 * cache dropped by the other's commit (WAL), which made the stored-periods step 2.5 times slower
 * (docs/performance.md, round seven of issue 31). A cluster's workers hand theirs to one writer
 * process instead (writer-process.ts).
 */
export function ingestThreads(config: Pick<Config, 'MDS_INGEST_THREADS' | 'DATABASE_URL'>): number {
  const threads = config.MDS_INGEST_THREADS ?? defaultIngestThreads();
  return sqliteUrl(config.DATABASE_URL) ? Math.min(1, threads) : threads;
}

/**
 * The request thread's SQLite checkpoints: none when ingest threads write (theirs run them,
 * sqlite-db.ts), so no request waits behind one; its own when it writes the batches itself.
 */
export function requestThreadCheckpoints(
  config: Pick<Config, 'MDS_INGEST_THREADS' | 'DATABASE_URL'>,
): NonNullable<StoreTuning['sqliteCheckpoints']> {
  return ingestThreads(config) > 0 || writerSocket() !== null ? 'none' : 'own';
}

export type PoolRequest =
  | { id: number; op: 'ingest'; bytes: Uint8Array }
  | { id: number; op: 'migrate' }
  | { id: number; op: 'coverage' }
  | { id: number; op: 'close' };

export type PoolError =
  | {
      kind: 'app';
      code: ErrorCode;
      message: string;
      retryAfter: number | null;
      extra: Record<string, unknown>;
    }
  /** `condition`: what the client may be told (StoreUnavailableError), kept across the thread. */
  | { kind: 'unavailable'; message: string; condition: string }
  /** Another release's database (main.ts exits 78 on it instead of retrying). */
  | { kind: 'schema'; message: string }
  | { kind: 'setup'; message: string }
  | { kind: 'internal'; message: string; stack: string | undefined };

export type PoolReply =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; error: PoolError };

/** Sent once by a starting thread: whether its priority was lowered (MDS_INGEST_NICE). */
export interface PoolNotice {
  id: 0;
  priority: PriorityOutcome;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface WorkerInit {
  config: Config;
}

/** An error as it crosses the thread boundary (ingest-worker.ts), and back (revive). */
export function serialiseError(err: unknown): PoolError {
  if (err instanceof AppError) {
    return {
      kind: 'app',
      code: err.code,
      message: err.message,
      retryAfter: err.retryAfter,
      extra: { ...err.extra },
    };
  }
  if (err instanceof StoreUnavailableError) {
    return { kind: 'unavailable', message: err.message, condition: err.condition };
  }
  if (err instanceof SchemaTooNewError) return { kind: 'schema', message: err.message };
  if (err instanceof StoreSetupError) return { kind: 'setup', message: err.message };
  const e = err instanceof Error ? err : new Error(String(err));
  return { kind: 'internal', message: e.message, stack: e.stack };
}

export function revive(e: PoolError): Error {
  if (e.kind === 'app') {
    return new AppError(e.code, e.message, {
      ...(e.retryAfter !== null ? { retryAfter: e.retryAfter } : {}),
      extra: e.extra,
    });
  }
  if (e.kind === 'unavailable') return new StoreUnavailableError(e.message, { condition: e.condition });
  if (e.kind === 'schema') return new SchemaTooNewError(e.message);
  if (e.kind === 'setup') return new StoreSetupError(e.message);
  const err = new Error(`ingest worker: ${e.message}`);
  if (e.stack) err.stack = e.stack;
  return err;
}

interface Pending {
  resolve: (reply: PoolReply) => void;
  reject: (e: Error) => void;
}

/** A thread's reply and who wrote it: `pid/threadId` (a log field: which connection wrote a batch). */
export interface Written {
  reply: PoolReply;
  writer: string;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Armed when the thread, having done work, has nothing in flight (recycle). */
  idle: NodeJS.Timeout | null;
  /** Replaced by a fresh thread: its exit is expected. */
  retired: boolean;
}

export class IngestPool implements BatchIngest {
  readonly events = new EventEmitter();
  private readonly slots: (Slot | null)[];
  /** Replaced threads still closing their connection. */
  private readonly retiring = new Set<Worker>();
  private nextId = 1;
  private closing = false;
  /** Reverts (a rare admin operation) still run in the request thread, through this. */
  private readonly local: IngestService | null;

  constructor(
    private readonly config: Config,
    catalog: Catalog,
    /**
     * The request thread's store: batch status lookups are reads like any query. None in the
     * writer process, which only writes (writer-process.ts).
     */
    private readonly store: Pick<Store, 'batches' | 'revisions'> | null,
    private readonly log: Logger,
    threads: number,
  ) {
    this.events.setMaxListeners(0);
    this.local = store ? new IngestService(catalog, store, { maxRecords: config.MDS_MAX_RECORDS }) : null;
    this.local?.events.on('revert', (ev: unknown) => this.events.emit('revert', ev));
    this.slots = Array.from({ length: Math.max(1, threads) }, () => null);
    this.slots.forEach((_, i) => this.spawn(i));
  }

  get threads(): number {
    return this.slots.length;
  }

  /** The running threads' ids (tests: a recycled thread has a new one). */
  get threadIds(): number[] {
    return this.slots.flatMap((s) => (s ? [s.worker.threadId] : []));
  }

  private spawn(i: number): void {
    const init: WorkerInit = { config: this.config };
    const worker = startThread('ingest/ingest-worker', { workerData: init });
    const slot: Slot = { worker, pending: new Map(), idle: null, retired: false };
    this.slots[i] = slot;
    worker.on('message', (m: PoolReply | PoolNotice) => {
      if ('priority' in m) return this.logPriority(m.priority);
      const p = slot.pending.get(m.id);
      if (!p) return;
      slot.pending.delete(m.id);
      if (slot.pending.size === 0) this.armRecycle(i, slot);
      p.resolve(m);
    });
    worker.on('error', (err) => this.log.error({ err }, 'ingest worker failed'));
    worker.on('exit', (code) => {
      if (slot.idle) clearTimeout(slot.idle);
      if (slot.retired) {
        this.retiring.delete(worker);
        return;
      }
      // Whatever it was doing is lost with it (a batch's transaction rolls back): retry later.
      for (const p of slot.pending.values()) {
        p.reject(new AppError(5030, 'the ingest worker stopped; retry', { retryAfter: 1 }));
      }
      slot.pending.clear();
      if (this.slots[i] === slot) this.slots[i] = null;
      if (!this.closing) {
        this.log.error({ code }, 'ingest worker exited; starting another');
        setTimeout(() => {
          if (!this.closing && this.slots[i] === null) this.spawn(i);
        }, 500).unref();
      }
    });
  }

  /**
   * A thread keeps the heap its batches grew (V8 gives little of it back: after one
   * 100,000-record batch a process stayed at 250–430 MB instead of 140, and a 1M-row export
   * then peaked at 320–500 MB). Once it has been idle for MDS_INGEST_RECYCLE_MS, a fresh thread
   * takes its slot and it closes its connection and ends, its memory with it. The slot is never
   * empty, so on SQLite a thread with the checkpoint duty (sqlite-db.ts, 'all') always runs.
   */
  private armRecycle(i: number, slot: Slot): void {
    const ms = this.config.MDS_INGEST_RECYCLE_MS;
    if (ms <= 0 || this.closing) return;
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = setTimeout(() => this.recycle(i, slot), ms);
    slot.idle.unref();
  }

  private recycle(i: number, slot: Slot): void {
    slot.idle = null;
    if (this.closing || this.slots[i] !== slot || slot.pending.size > 0) return;
    slot.retired = true;
    this.retiring.add(slot.worker);
    this.spawn(i);
    this.log.debug({ threadId: slot.worker.threadId }, 'idle ingest thread replaced by a fresh one');
    void this.retire(slot.worker, 5000);
  }

  /**
   * Asks a thread to close its connection and end (`ask`: not yet asked); ends it after
   * `graceMs` at the latest.
   */
  private async retire(worker: Worker, graceMs: number, ask = true): Promise<void> {
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    if (ask) worker.postMessage({ id: 0, op: 'close' } satisfies PoolRequest);
    const timer = setTimeout(() => void worker.terminate(), graceMs);
    await exited;
    clearTimeout(timer);
  }

  private logPriority(p: PriorityOutcome): void {
    this.log.info({ tid: p.tid, nice: p.nice, reason: p.reason }, 'ingest thread started');
  }

  /**
   * Sends to the live thread with the fewest requests in flight; its reply as it came, an error
   * as well as a value (the writer process passes it on as it is: writer-process.ts).
   */
  send(req: DistributiveOmit<PoolRequest, 'id'>, transfer: ArrayBuffer[] = []): Promise<Written> {
    let best: Slot | null = null;
    for (const s of this.slots) if (s && (!best || s.pending.size < best.pending.size)) best = s;
    if (!best || this.closing) {
      return Promise.reject(new AppError(5030, 'no ingest worker is running; retry', { retryAfter: 1 }));
    }
    const id = this.nextId++;
    const slot = best;
    if (slot.idle) {
      clearTimeout(slot.idle);
      slot.idle = null;
    }
    const writer = `${process.pid}/${slot.worker.threadId}`;
    return new Promise<Written>((resolve, reject) => {
      slot.pending.set(id, { resolve: (reply) => resolve({ reply, writer }), reject });
      slot.worker.postMessage({ ...req, id }, transfer);
    });
  }

  private async call<T>(req: DistributiveOmit<PoolRequest, 'id'>, transfer: ArrayBuffer[] = []): Promise<T> {
    return replyValue<T>((await this.send(req, transfer)).reply);
  }

  ingestBytes(bytes: Uint8Array): Promise<IngestOutcome> {
    // Moved, not copied, unless the bytes share their memory with others (Node's small-buffer pool).
    const own = ownBytes(bytes);
    return written(this.send({ op: 'ingest', bytes: own }, [own.buffer]), this.events, this.log);
  }

  status(batchId: string): Promise<BatchRecord> {
    if (!this.store) return Promise.reject(new Error('this pool has no store to read batches from'));
    return batchStatus(this.store, batchId);
  }

  revert(batchId: string): Promise<{ record: BatchRecord; counts: RevertCounts }> {
    if (!this.local) return Promise.reject(new Error('this pool has no store to revert batches in'));
    return this.local.revert(batchId);
  }

  /** Creates or upgrades the tables, on a worker thread (SQLite's migration is synchronous). */
  migrate(): Promise<void> {
    return this.call<void>({ op: 'migrate' });
  }

  /** Rows and date range per dataset, counted on a worker thread. */
  coverage(): Promise<DatasetCoverage[]> {
    return this.call<DatasetCoverage[]>({ op: 'coverage' });
  }

  /** Lets each thread close its connection, then ends it (after `graceMs` at the latest). */
  async close(graceMs = 5000): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await Promise.all([
      ...this.slots.flatMap((s) => (s ? [this.retire(s.worker, graceMs)] : [])),
      // Already asked: waited for, and ended after the grace like the others.
      ...[...this.retiring].map((w) => this.retire(w, graceMs, false)),
    ]);
  }
}

/** A reply's value, or its error revived. */
export function replyValue<T>(reply: PoolReply): T {
  if (reply.ok) return reply.value as T;
  throw revive(reply.error);
}

/**
 * A batch's outcome once written (here or in the writer process): its events fed in this process,
 * where the client is answered, and which connection wrote it logged.
 */
export async function written(
  sent: Promise<Written>,
  events: EventEmitter,
  log: Logger,
): Promise<IngestOutcome> {
  const { reply, writer } = await sent;
  const outcome = replyValue<IngestOutcome>(reply);
  if (outcome.kind === 'processed') {
    log.info({ batch_id: outcome.record.batch_id, writer }, 'batch written');
    events.emit('batch', outcome.record);
    if (outcome.steps) events.emit('steps', outcome.steps);
  }
  return outcome;
}
