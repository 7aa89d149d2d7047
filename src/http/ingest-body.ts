import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { IngestReservation } from '../access/budgets.js';

/**
 * The ingest body as bytes, never as text or a parsed value: the batch is parsed off the
 * request thread, and its checksum covers the bytes as sent. `Content-Encoding` gzip or
 * deflate is undone here, as a stream on libuv's thread pool, and `limit` (MDS_BODY_LIMIT)
 * applies to the decompressed size: a decompression bomb is cut off at the limit, so memory
 * stays bounded by it. Any other encoding: 415 / 4151.
 */

const DECODERS: Record<string, (() => zlib.Gunzip | zlib.Inflate) | null> = {
  identity: null,
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  // HTTP's "deflate" is the zlib format (RFC 9110 8.4.1.2).
  deflate: () => zlib.createInflate(),
};

function decoderFor(header: string | undefined): (() => zlib.Gunzip | zlib.Inflate) | null {
  const name = (header ?? 'identity').trim().toLowerCase() || 'identity';
  const decoder = DECODERS[name];
  if (decoder === undefined) {
    throw new AppError(4151, `unsupported Content-Encoding "${name}"; send gzip, deflate or none`);
  }
  return decoder;
}

const tooLarge = (limit: number): AppError =>
  new AppError(4130, `request body too large: more than ${limit} bytes (decompressed)`);

/**
 * Reads the whole body, decompressed, refusing more than `limit` bytes. `memory` covers what is
 * read (MDS_INGEST_MEMORY_BUDGET): a declared length is reserved before the first byte is read,
 * and the reservation grows with what arrives beyond it (chunked or compressed bodies); past
 * the budget the body is refused (503 / 5032). The caller releases it once the batch is answered.
 */
export function readIngestBody(
  req: FastifyRequest,
  payload: IncomingMessage,
  limit: number,
  memory: IngestReservation,
): Promise<Buffer> {
  const decoder = decoderFor(req.headers['content-encoding']);
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  try {
    if (declared > 0) memory.cover(declared);
  } catch (err) {
    return Promise.reject(err as AppError);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const source: Readable = decoder ? payload.pipe(decoder()) : payload;
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (err: AppError): void => {
      if (done) return;
      done = true;
      if (source !== payload) source.destroy();
      // Stop reading the upload; the error answer closes the connection (error-handler.ts).
      payload.pause();
      payload.unpipe();
      reject(err);
    };
    payload.on('error', () => fail(new AppError(4001, 'the request body was cut off')));
    source.on('error', (err) => {
      fail(new AppError(4001, `the body could not be decompressed (${(err as Error).message})`));
    });
    source.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) return fail(tooLarge(limit));
      try {
        memory.cover(size);
      } catch (err) {
        return fail(err as AppError);
      }
      chunks.push(chunk);
    });
    source.on('end', () => {
      if (done) return;
      done = true;
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
  });
}
