import fs from 'node:fs';
import net from 'node:net';
import { CATALOG } from '../catalog/catalog.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { IngestPool, serialiseError, type Written } from './ingest-pool.js';
import { writerSocket } from './writer-env.js';
import { FrameReader, writeFrame, type WriterRequest } from './writer-socket.js';

/**
 * The one writer of a SQLite cluster (main.ts forks it; cluster/writer-supervisor.ts): one
 * ingest thread, so one connection writes every batch of the service, and the workers hand it
 * theirs over a Unix-domain socket (writer-socket.ts). Its own thread keeps this process's event
 * loop free to read the next body while a batch is written. It runs the migration and the
 * coverage recount the workers ask for, one at a time like the batches.
 *
 * It stops when its primary says so (after every worker has exited, so a batch in flight at
 * SIGTERM is still written), and exits at once when its channel to the primary closes without
 * that word; signals sent to the whole process group (Ctrl-C) are left to the primary. It
 * answers the primary's pings (the hang check: cluster/writer-supervisor.ts).
 */
const socketPath = writerSocket();
if (!socketPath) throw new Error('writer-process.ts is started by the cluster primary (main.ts)');
const config = loadConfig();
const log = createLogger(config);
const pool = new IngestPool(config, CATALOG, null, log, 1);
let inFlight = 0;
let stopping = false;
let drained: (() => void) | null = null;

const server = net.createServer((socket) => {
  // A worker that went away: its batches' outcomes are dropped, the close says enough.
  socket.on('error', () => {});
  const reader = new FrameReader((head, body) => {
    const req = head as WriterRequest;
    inFlight++;
    const sent: Promise<Written> =
      req.op === 'ingest'
        ? pool.send({ op: 'ingest', bytes: body }, [body.buffer])
        : pool.send({ op: req.op });
    void sent
      .catch((err: unknown): Written => ({
        reply: { id: 0, ok: false, error: serialiseError(err) },
        writer: '',
      }))
      .then(({ reply, writer }) => {
        if (!socket.destroyed) writeFrame(socket, { reply: { ...reply, id: req.id }, writer });
      })
      .finally(() => {
        if (--inFlight === 0) drained?.();
      });
  });
  socket.on('data', (chunk: Buffer) => reader.push(chunk));
});

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  server.close();
  const grace = setTimeout(() => process.exit(1), config.MDS_SHUTDOWN_GRACE_MS);
  grace.unref();
  if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
  await pool.close();
  log.info('writer stopped');
  process.exit(0);
}

process.on('message', (m: unknown) => {
  const kind = typeof m === 'object' && m !== null ? (m as { mds?: unknown }).mds : undefined;
  if (kind === 'writer-stop') void stop();
  // The supervisor's liveness check (cluster/writer-supervisor.ts): answered by this event loop.
  if (kind === 'writer-ping') process.send?.({ mds: 'writer-pong' });
});
// The primary gone without a word (SIGKILL, a crash): its workers are gone too, so no one waits
// for the batch in flight; exit now rather than hold the database open (the batch rolls back).
process.on('disconnect', () => {
  if (stopping) return;
  log.warn({ inFlight }, 'writer: the cluster primary is gone; exiting (a batch in flight rolls back)');
  process.exit(1);
});
process.on('SIGTERM', () => log.info('SIGTERM: the writer stops when the cluster primary says so'));
process.on('SIGINT', () => {});

// A socket file left by a writer that was killed would refuse the listen.
fs.rmSync(socketPath, { force: true });
server.listen(socketPath, () => {
  log.info({ socket: socketPath }, 'writer started');
  process.send?.({ mds: 'writer-ready' });
});
