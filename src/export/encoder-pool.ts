import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Field } from '../catalog/catalog.js';
import { startThread } from '../worker-threads.js';
import { EXPORT_FORMATS, exportStream, type ExportFormat, type ExportSource } from './export-formats.js';
import { BATCH_ROWS, type ColumnChunk } from './column-batch.js';
import { movable, type ValueColumns } from '../model/value-columns.js';

/**
 * Exports are encoded (CSV, NDJSON, Arrow, Parquet) on worker threads, so that a running export
 * never holds the thread that answers requests and /health: the request thread reads each chunk
 * of rows (on SQLite from a reader process, storage/sqlite/reader-pool.ts) and hands it on; the
 * encoding thread turns it into bytes and hands those back, moved rather than copied. Measured
 * (docs/reliability.md): the request thread's CPU per exported row fell to a fraction, the rest
 * is the rows' structured clones and the socket writes.
 *
 * Each export is one session on one thread (the encoders keep state from chunk to chunk: the
 * Arrow writer, the Parquet file's row groups), on the thread with the fewest. The thread asks
 * for rows only when its encoder needs them and the request thread asks for bytes only when the
 * client has taken the last ones, so back-pressure reaches the row reads as before. Threads start
 * with the first export (a process that never exports pays nothing) and run below the request
 * thread's priority (ENCODER_NICE). MDS_EXPORT_THREADS=0 encodes on the request thread.
 */

/** Nice steps below the request thread, as the reader processes: /health gets the CPU first. */
export const ENCODER_NICE = 5;

/** How the encoder reads rows: objects, value arrays, or chunks of typed columns (ExportSource). */
export type RowsKind = 'objects' | 'arrays' | 'columns';

export type EncoderRequest =
  /** `columns`: the source has typed columns (ExportSource.columns) for the encoder to ask for. */
  | { t: 'open'; id: number; format: ExportFormat; fields: readonly Field[]; columns: boolean }
  /** The next piece of bytes, please. */
  | { t: 'pull'; id: number }
  | { t: 'rows'; id: number; rows: unknown[] }
  /** The next chunk of `arrays` as columns (ExportSource.columns), its buffers moved. */
  | { t: 'columns'; id: number; chunk: ValueColumns }
  | { t: 'end'; id: number }
  /** The export ends early (client gone, rows failed): drop it. */
  | { t: 'close'; id: number };

export type EncoderReply =
  /** The encoder wants the next chunk of rows, read this way. */
  | { t: 'need'; id: number; kind: RowsKind }
  | { t: 'piece'; id: number; bytes: Uint8Array }
  | { t: 'done'; id: number }
  | { t: 'error'; id: number; message: string };

/** The replies of one session, waited for one at a time. */
class Inbox {
  private readonly queue: EncoderReply[] = [];
  private waiter: ((m: EncoderReply) => void) | null = null;

  put(m: EncoderReply): void {
    const w = this.waiter;
    this.waiter = null;
    if (w) w(m);
    else this.queue.push(m);
  }

  next(): Promise<EncoderReply> {
    const m = this.queue.shift();
    if (m) return Promise.resolve(m);
    return new Promise((resolve) => (this.waiter = resolve));
  }
}

interface Slot {
  worker: Worker;
  sessions: Map<number, Inbox>;
}

function rowsOf(source: ExportSource, kind: RowsKind): AsyncIterable<unknown[] | ValueColumns> {
  if (kind === 'objects') return source.objects();
  // Chunks of columns travel as a list (a structured clone of typed arrays, no value per row).
  if (kind === 'columns' && source.columns) return source.columns() as AsyncIterable<unknown[]>;
  return source.arrays();
}

export class ExportEncoders {
  private readonly slots: (Slot | null)[];
  private nextId = 1;
  private closing = false;

  constructor(
    /** Encoding threads; 0: exports are encoded on the request thread. */
    threads: number,
    private readonly log?: Logger,
  ) {
    this.slots = Array.from({ length: Math.max(0, threads) }, () => null);
  }

  /**
   * The body of an export, as `exportStream` makes it (the same bytes), encoded on a thread:
   * `fields` of every row `source` yields, in `format`.
   */
  encode(
    format: ExportFormat,
    fields: readonly Field[],
    source: ExportSource,
  ): AsyncIterable<string | Uint8Array> {
    if (this.slots.length === 0 || this.closing) return exportStream(format, fields, source);
    const columns = source.columns;
    if (columns && EXPORT_FORMATS[format].columns) return this.small(format, fields, source, columns);
    return this.session(format, fields, source);
  }

  /**
   * An answer of typed columns shorter than one batch (BATCH_ROWS: a code's month of minute bars)
   * is encoded here, not on a thread: its encoding (≈ 1–2 ms) cost less than the hand-over to
   * the thread and back (docs/minute-bars.md, measured), and it is bounded by the batch. Knowing
   * it reads nothing the encoder would not have asked for before its first bytes: it fills its
   * first batch from the same chunks. A longer answer goes to a thread with those chunks first.
   */
  private async *small(
    format: ExportFormat,
    fields: readonly Field[],
    source: ExportSource,
    columns: () => AsyncIterable<readonly ColumnChunk[]>,
  ): AsyncGenerator<string | Uint8Array> {
    const it = columns()[Symbol.asyncIterator]();
    try {
      const head: (readonly ColumnChunk[])[] = [];
      let rows = 0;
      let done = false;
      while (rows < BATCH_ROWS) {
        const next = await it.next();
        if (next.done === true) {
          done = true;
          break;
        }
        head.push(next.value);
        for (const c of next.value) rows += c.length;
      }
      async function* replay(): AsyncGenerator<readonly ColumnChunk[]> {
        yield* head;
        if (done) return;
        for (let next = await it.next(); next.done !== true; next = await it.next()) yield next.value;
      }
      const read: ExportSource = { ...source, columns: replay };
      yield* done ? exportStream(format, fields, read) : this.session(format, fields, read);
    } finally {
      // Ended early (client gone, an error): the reads stop as a session's do.
      await it.return?.(undefined);
    }
  }

  private async *session(
    format: ExportFormat,
    fields: readonly Field[],
    source: ExportSource,
  ): AsyncGenerator<Uint8Array> {
    const slot = this.leastBusy();
    const id = this.nextId++;
    const inbox = new Inbox();
    slot.sessions.set(id, inbox);
    slot.worker.ref();
    const post = (m: EncoderRequest): void => slot.worker.postMessage(m);
    let rows: AsyncIterator<unknown[] | ValueColumns> | null = null;
    let ended = false;
    try {
      post({ t: 'open', id, format, fields, columns: source.columns !== undefined });
      post({ t: 'pull', id });
      for (;;) {
        const m = await inbox.next();
        if (m.t === 'need') {
          rows ??= rowsOf(source, m.kind)[Symbol.asyncIterator]();
          // A failing read (deadline, a batch landed mid-export) fails the export here, with
          // its own error, as when encoding on this thread.
          const next = await rows.next();
          if (next.done === true) post({ t: 'end', id });
          else if (Array.isArray(next.value)) post({ t: 'rows', id, rows: next.value });
          else {
            const { chunk, transfer } = movable(next.value);
            slot.worker.postMessage({ t: 'columns', id, chunk } satisfies EncoderRequest, transfer);
          }
        } else if (m.t === 'piece') {
          yield m.bytes;
          post({ t: 'pull', id });
        } else if (m.t === 'done') {
          ended = true;
          return;
        } else {
          ended = true;
          throw new Error(`export encoding failed: ${m.message}`);
        }
      }
    } finally {
      slot.sessions.delete(id);
      if (slot.sessions.size === 0) slot.worker.unref();
      if (!ended && this.slots.includes(slot)) post({ t: 'close', id });
      // Ended early (client gone, stall, error): the store's reads stop (their finally runs).
      await rows?.return?.(undefined);
    }
  }

  /** The thread with the fewest exports, started when its slot is empty. */
  private leastBusy(): Slot {
    let best = -1;
    for (let i = 0; i < this.slots.length; i++) {
      const s = this.slots[i];
      if (!s) {
        best = i;
        break;
      }
      const b = this.slots[best];
      if (best < 0 || (b && s.sessions.size < b.sessions.size)) best = i;
    }
    return this.slots[best] ?? this.spawn(best);
  }

  private spawn(i: number): Slot {
    const worker = startThread('export/encoder-thread');
    const slot: Slot = { worker, sessions: new Map() };
    this.slots[i] = slot;
    worker.on('message', (m: EncoderReply) => slot.sessions.get(m.id)?.put(m));
    worker.on('error', (err) => this.log?.error({ err }, 'export encoding thread failed'));
    worker.on('exit', (code) => {
      // Its exports are cut (a client sees a body without its end); the next export starts another.
      if (this.slots[i] === slot) this.slots[i] = null;
      for (const [id, inbox] of slot.sessions)
        inbox.put({ t: 'error', id, message: `its thread stopped (${code})` });
    });
    // Only a thread with exports keeps the process alive (an idle one lets it end).
    worker.unref();
    return slot;
  }

  /** Ends the threads; exports still running are cut (shutdown stops them first). */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.slots.map((s) => s?.worker.terminate()));
  }
}
