import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { currentQueryContext, QueryAbortedError } from '../../request-context.js';
import { entryModule } from '../../runtime-paths.js';
import type { ValueColumns } from '../../model/value-columns.js';
import type { DbRow, ReadDb, ShortPage } from '../db.js';
import { SQLITE, compile, type Sql } from '../sql.js';
import { QueryTimeoutError, StoreUnavailableError } from '../store.js';

/**
 * Reads of dataset rows (pages, totals, exports' chunks, quality reports, revision trails) run
 * in reader processes, each with its own read-only connection to the SQLite file (WAL: readers
 * never wait for the writer or each other), so no statement — a sort on an unindexed field, a
 * deep offset, an adjusted cross-section — ever runs on the thread that answers requests and
 * /health. The request thread compiles the statement and sends its text and values; the rows
 * come back over the IPC channel (structured clone). One statement per reader at a time, so a
 * statement can be stopped alone: better-sqlite3 cannot interrupt one, and a worker thread
 * cannot be ended inside a native call (terminate() waits for the statement: a 5 s sort went on
 * for 5 s), so readers are processes: past its deadline (MDS_QUERY_TIMEOUT_MS), or when its
 * client has gone, a reader is killed (SIGKILL: the statement stops at once) and a fresh one
 * takes its place. Statements wait in one queue, taken in order, except that one owner (a query
 * key) never holds more than all readers but one: another key's request always finds a reader
 * within one statement's time.
 */

/** `columns`: the rows as arrays, sent column by column (model/value-columns.ts). */
export type ReadMode = 'rows' | 'arrays' | 'values' | 'columns';

/** What a reader runs: one statement, or a page with its count (run unless the page tells its total). */
export type ReadStatement =
  | { mode: ReadMode; sql: string; params: unknown[] }
  | {
      mode: 'page';
      sql: string;
      params: unknown[];
      count: { sql: string; params: unknown[]; short: ShortPage };
    };

export type ReadRequest = ReadStatement & { id: number };

export type ReadReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { unavailable: boolean; condition: string; message: string } };

export interface ReaderInit {
  file: string;
}

/**
 * How long a statement whose client has gone may still finish before its reader is killed: a
 * reader is not replaced (a process start, ~0.1 s of CPU) for a statement about to end, and a
 * client that leaves and comes back cannot make the service start readers without end.
 */
const ABORT_GRACE_MS = 1000;
/** Pause before a reader that died on its own is replaced (one that keeps dying must not spin). */
const RESPAWN_AFTER_CRASH_MS = 500;

interface Job {
  req: ReadStatement;
  owner: string;
  signal: AbortSignal | null;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout | null;
  onAbort: (() => void) | null;
  settled: boolean;
}

interface Slot {
  reader: ChildProcess;
  job: Job | null;
  /** Ended by the pool (deadline, abort, close): its exit is expected. */
  ended: boolean;
}

export class ReaderPool {
  private readonly slots: (Slot | null)[];
  /**
   * Slots below this were started, in order. A slot starts when a statement finds no idle
   * reader, not with the pool (a process start is about 0.1 s of CPU: a server that reads one
   * statement at a time never starts its second); once started, it is kept filled.
   */
  private started = 0;
  private readonly queue: Job[] = [];
  private readonly running = new Map<string, number>();
  private readonly perOwner: number;
  private nextId = 1;
  private closing = false;

  constructor(
    private readonly file: string,
    readers: number,
    /** ms a statement may take, its wait for a reader included; 0: no limit. */
    private readonly timeoutMs: number,
  ) {
    this.slots = Array.from({ length: Math.max(1, readers) }, () => null);
    this.perOwner = Math.max(1, this.slots.length - 1);
  }

  get readers(): number {
    return this.slots.length;
  }

  private spawn(i: number): Slot {
    this.started = Math.max(this.started, i + 1);
    const init: ReaderInit = { file: this.file };
    const reader = fork(fileURLToPath(entryModule('storage/sqlite/reader-process')), [JSON.stringify(init)], {
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const slot: Slot = { reader, job: null, ended: false };
    this.slots[i] = slot;
    reader.on('message', (m: ReadReply) => {
      const job = slot.job;
      slot.job = null;
      if (job) {
        this.release(job);
        if (!job.settled) {
          if (m.ok) this.settle(job, null, m.value);
          else this.settle(job, revive(m.error));
        }
      }
      this.dispatch();
    });
    reader.on('error', () => {
      // Reported by 'exit' below: the statement fails, the reader is replaced.
    });
    reader.on('exit', () => {
      const job = slot.job;
      slot.job = null;
      if (job) {
        this.release(job);
        this.settle(
          job,
          new StoreUnavailableError('reader process stopped', { condition: 'reader_stopped' }),
        );
      }
      if (this.slots[i] !== slot || this.closing) return;
      this.slots[i] = null;
      if (slot.ended) this.spawn(i);
      else
        setTimeout(
          () => !this.closing && this.slots[i] === null && this.spawn(i),
          RESPAWN_AFTER_CRASH_MS,
        ).unref();
      this.dispatch();
    });
    return slot;
  }

  /** A statement on the next free reader, for the current request's owner (request-context.ts). */
  read(mode: ReadMode, s: Sql): Promise<unknown> {
    return this.submit({ mode, ...compile(s, SQLITE) });
  }

  /**
   * A page and its total in one message: a round trip costs more CPU than the statements of an
   * ordinary page (bench/phases/query.ts), and both see one snapshot.
   */
  async page(page: Sql, count: Sql, short: ShortPage): Promise<{ rows: DbRow[]; total: number }> {
    const c = compile(count, SQLITE);
    const r = await this.submit({ mode: 'page', ...compile(page, SQLITE), count: { ...c, short } });
    return r as { rows: DbRow[]; total: number };
  }

  private submit(req: ReadStatement): Promise<unknown> {
    const ctx = currentQueryContext();
    if (this.closing) return Promise.reject(new QueryAbortedError('shutdown'));
    if (ctx?.signal.aborted) return Promise.reject(abortReason(ctx.signal));
    return new Promise((resolve, reject) => {
      const job: Job = {
        req,
        owner: ctx?.owner ?? '',
        signal: ctx?.signal ?? null,
        resolve,
        reject,
        timer: null,
        onAbort: null,
        settled: false,
      };
      if (this.timeoutMs > 0) {
        job.timer = setTimeout(
          () => this.stop(job, new QueryTimeoutError(this.timeoutMs), 0),
          this.timeoutMs,
        );
      }
      if (job.signal) {
        const signal = job.signal;
        job.onAbort = () => this.stop(job, abortReason(signal), ABORT_GRACE_MS);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Gives every free reader the first queued statement whose owner is under its share. */
  private dispatch(): void {
    for (const [i, current] of this.slots.entries()) {
      // Empty and started: a crashed reader waiting to be replaced.
      if (current ? current.job || current.ended : i < this.started || this.closing) continue;
      const at = this.queue.findIndex((j) => (this.running.get(j.owner) ?? 0) < this.perOwner);
      if (at < 0) return;
      const slot = current ?? this.spawn(i);
      const [job] = this.queue.splice(at, 1) as [Job];
      slot.job = job;
      this.running.set(job.owner, (this.running.get(job.owner) ?? 0) + 1);
      slot.reader.send({ ...job.req, id: this.nextId++ } satisfies ReadRequest);
    }
  }

  /**
   * Fails a statement (deadline, client gone): a queued one leaves the queue; a running one's
   * reader is killed after `graceMs` if it is still on it.
   */
  private stop(job: Job, err: Error, graceMs: number): void {
    if (job.settled) return;
    this.settle(job, err);
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      return;
    }
    const end = (): void => {
      const slot = this.slots.find((s) => s?.job === job);
      if (!slot || slot.ended) return;
      slot.ended = true;
      slot.reader.kill('SIGKILL');
    };
    if (graceMs > 0) setTimeout(end, graceMs).unref();
    else end();
  }

  private settle(job: Job, err: Error | null, value?: unknown): void {
    if (job.settled) return;
    job.settled = true;
    if (job.timer) clearTimeout(job.timer);
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    if (err) job.reject(err);
    else job.resolve(value);
  }

  /** The owner's share back once its statement has left its reader. */
  private release(job: Job): void {
    const n = (this.running.get(job.owner) ?? 1) - 1;
    if (n > 0) this.running.set(job.owner, n);
    else this.running.delete(job.owner);
  }

  /** Kills every reader at once: what they run is a read, nothing is lost. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const job of this.queue.splice(0)) this.settle(job, new QueryAbortedError('shutdown'));
    for (const s of this.slots) {
      if (!s) continue;
      s.ended = true;
      s.reader.kill('SIGKILL');
    }
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new QueryAbortedError('disconnected');
}

function revive(e: { unavailable: boolean; condition: string; message: string }): Error {
  return e.unavailable
    ? new StoreUnavailableError(e.message, { condition: e.condition })
    : new Error(e.message);
}

/** The reads of a SQLite store's dataset rows, on the pool's readers (the `Db` read methods). */
export class ThreadReads implements ReadDb {
  readonly backend = 'sqlite' as const;
  readonly dialect = SQLITE;

  constructor(private readonly pool: ReaderPool) {}

  async rows(s: Sql): Promise<DbRow[]> {
    return (await this.pool.read('rows', s)) as DbRow[];
  }

  async arrays(s: Sql): Promise<unknown[][]> {
    return (await this.pool.read('arrays', s)) as unknown[][];
  }

  /** An export's chunk: made column by column in the reader, so the IPC copies buffers, not values. */
  async columns(s: Sql): Promise<ValueColumns> {
    return (await this.pool.read('columns', s)) as ValueColumns;
  }

  async values(s: Sql): Promise<unknown[]> {
    return (await this.pool.read('values', s)) as unknown[];
  }

  pageAndCount(page: Sql, count: Sql, short: ShortPage): Promise<{ rows: DbRow[]; total: number }> {
    return this.pool.page(page, count, short);
  }
}
