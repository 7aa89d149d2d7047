import type { Socket } from 'node:net';
import v8 from 'node:v8';
import type { PoolReply } from './ingest-pool.js';

/**
 * The framed protocol between a SQLite cluster's workers and its one writer process
 * (remote-ingest.ts → writer-process.ts) over a Unix-domain socket: not the cluster's IPC
 * channel, which carries the rate-limit questions and must never queue behind a 100 MB body.
 * A frame is two little-endian u32 lengths (head, body), the head (v8-serialised, as the
 * thread boundary clones it) and the body's raw bytes (a batch's; empty otherwise).
 */

/** What a worker asks: the ingest thread's own requests (ingest-pool.ts), the batch as the body. */
export interface WriterRequest {
  id: number;
  op: 'ingest' | 'migrate' | 'coverage';
}

/** The ingest thread's reply as it came (`id`: the worker's), and who wrote (`pid/threadId`). */
export interface WriterReply {
  reply: PoolReply;
  writer: string;
}

const EMPTY = new Uint8Array(0);

export function writeFrame(
  socket: Socket,
  head: WriterRequest | WriterReply,
  body: Uint8Array = EMPTY,
): void {
  const headBytes = v8.serialize(head);
  const lengths = Buffer.allocUnsafe(8);
  lengths.writeUInt32LE(headBytes.length, 0);
  lengths.writeUInt32LE(body.length, 4);
  socket.cork();
  socket.write(lengths);
  socket.write(headBytes);
  // Written as it is, not concatenated with the head: no copy of a large body in this process.
  if (body.length > 0) socket.write(body);
  socket.uncork();
}

/**
 * Reassembles frames from a socket's chunks. The body goes into memory of its own (one copy,
 * from the chunks), so the writer can move it to its ingest thread without another.
 */
export class FrameReader {
  private readonly lengths = Buffer.alloc(8);
  private lengthsFill = 0;
  /** The frame being read: head then body, and how much of each is in. */
  private parts: [Uint8Array, Uint8Array] | null = null;
  private part = 0;
  private fill = 0;

  constructor(private readonly onFrame: (head: unknown, body: Uint8Array<ArrayBuffer>) => void) {}

  push(chunk: Uint8Array): void {
    let at = 0;
    for (;;) {
      if (!this.parts) {
        const n = Math.min(8 - this.lengthsFill, chunk.length - at);
        this.lengths.set(chunk.subarray(at, at + n), this.lengthsFill);
        this.lengthsFill += n;
        at += n;
        if (this.lengthsFill < 8) return;
        this.lengthsFill = 0;
        const head = new Uint8Array(this.lengths.readUInt32LE(0));
        const body = new Uint8Array(new ArrayBuffer(this.lengths.readUInt32LE(4)));
        this.parts = [head, body];
        this.part = 0;
        this.fill = 0;
      }
      const target = this.parts[this.part] as Uint8Array;
      const n = Math.min(target.length - this.fill, chunk.length - at);
      target.set(chunk.subarray(at, at + n), this.fill);
      this.fill += n;
      at += n;
      if (this.fill < target.length) return;
      this.fill = 0;
      if (this.part === 0) {
        this.part = 1;
        continue;
      }
      const [head, body] = this.parts;
      this.parts = null;
      this.onFrame(v8.deserialize(head), body as Uint8Array<ArrayBuffer>);
      if (at === chunk.length) return;
    }
  }
}
