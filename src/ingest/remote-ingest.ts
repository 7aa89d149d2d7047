import { EventEmitter } from 'node:events';
import net from 'node:net';
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import { AppError } from '../errors.js';
import type { BatchRecord, RevertCounts } from '../model/batch.js';
import type { DatasetCoverage, Store } from '../storage/store.js';
import { replyValue, written, type Written } from './ingest-pool.js';
import { IngestService, batchStatus, type BatchIngest, type IngestOutcome } from './ingest-service.js';
import { FrameReader, writeFrame, type WriterReply, type WriterRequest } from './writer-socket.js';

interface Connection {
  socket: net.Socket;
  pending: Map<number, { resolve: (w: Written) => void; reject: (e: Error) => void }>;
}

/** What a client is told while the writer is down or restarting: retry shortly. */
function writerGone(): AppError {
  return new AppError(5030, 'the database writer is not running; retry', { retryAfter: 1 });
}

/**
 * A SQLite cluster worker's ingest: every batch, the migration and the coverage recount go to
 * the one writer process over its Unix socket (writer-process.ts), so one connection writes
 * them all. As with the ingest threads, the request thread only reads the body and passes its
 * bytes on; events and metrics are fed here, in the worker that answers the client. A writer
 * that dies takes the batches it was writing with it (their transactions roll back): they are
 * answered 503 with Retry-After, and the next request connects to the writer the primary starts
 * in its place. Status lookups are reads on this worker's store; a revert (a rare admin
 * operation) is written by this worker's own connection, as before.
 */
export class RemoteIngest implements BatchIngest {
  readonly events = new EventEmitter();
  private connection: Promise<Connection> | null = null;
  private nextId = 1;
  private closing = false;
  private readonly local: IngestService;

  constructor(
    private readonly socketPath: string,
    catalog: Catalog,
    private readonly store: Pick<Store, 'batches' | 'revisions'>,
    private readonly log: Logger,
    maxRecords: number,
  ) {
    this.events.setMaxListeners(0);
    this.local = new IngestService(catalog, store, { maxRecords });
    this.local.events.on('revert', (ev: unknown) => this.events.emit('revert', ev));
  }

  /** The connection to the writer, opened on first use and again after the writer went away. */
  private connect(): Promise<Connection> {
    if (this.connection) return this.connection;
    const attempt = new Promise<Connection>((resolve, reject) => {
      const socket = net.createConnection(this.socketPath);
      const conn: Connection = { socket, pending: new Map() };
      const reader = new FrameReader((head) => {
        const { reply, writer } = head as WriterReply;
        const p = conn.pending.get(reply.id);
        if (!p) return;
        conn.pending.delete(reply.id);
        p.resolve({ reply, writer });
      });
      socket.on('data', (chunk: Buffer) => reader.push(chunk));
      socket.once('connect', () => resolve(conn));
      socket.on('error', (err) => this.log.debug({ err }, 'writer connection failed'));
      socket.on('close', () => {
        if (this.connection === attempt) this.connection = null;
        reject(writerGone());
        for (const p of conn.pending.values()) p.reject(writerGone());
        conn.pending.clear();
      });
    });
    this.connection = attempt;
    return attempt;
  }

  private async send(op: WriterRequest['op'], body?: Uint8Array): Promise<Written> {
    if (this.closing) throw writerGone();
    const conn = await this.connect();
    const id = this.nextId++;
    return new Promise<Written>((resolve, reject) => {
      conn.pending.set(id, { resolve, reject });
      writeFrame(conn.socket, { id, op }, body);
    });
  }

  ingestBytes(bytes: Uint8Array): Promise<IngestOutcome> {
    return written(this.send('ingest', bytes), this.events, this.log);
  }

  status(batchId: string): Promise<BatchRecord> {
    return batchStatus(this.store, batchId);
  }

  revert(batchId: string): Promise<{ record: BatchRecord; counts: RevertCounts }> {
    return this.local.revert(batchId);
  }

  async migrate(): Promise<void> {
    replyValue<void>((await this.send('migrate')).reply);
  }

  async coverage(): Promise<DatasetCoverage[]> {
    return replyValue<DatasetCoverage[]>((await this.send('coverage')).reply);
  }

  /** After the HTTP server closed (no batch in flight): the connection ends. */
  async close(): Promise<void> {
    this.closing = true;
    const conn = await this.connection?.catch(() => null);
    conn?.socket.end();
  }
}
