import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WRITER_SOCKET_ENV } from '../ingest/writer-env.js';
import { entryModule } from '../runtime-paths.js';

/** How long after the writer died another is started, ms (as the pool restarts a thread). */
const RESTART_MS = 500;
/** Pings per hang bound: a writer is asked this many times before it is found hung. */
const PINGS_PER_BOUND = 4;

export interface Writer {
  /** The Unix socket the workers reach it on (WRITER_SOCKET_ENV in their environment). */
  readonly socket: string;
  /** Resolves once a writer listens (the first worker then starts: it asks it to migrate). */
  readonly ready: Promise<void>;
  /** Lets the writer finish what it was given and waits for it to end (workers gone first). */
  stop(): Promise<void>;
}

/**
 * A SQLite cluster's one writer process (ingest/writer-process.ts), run by the primary beside its
 * workers: forked, restarted when it dies, stopped last. Its own process, not a thread of the
 * primary: the primary stays small (it never loads the service) and a writer that crashes takes
 * no worker and not the cluster with it.
 *
 * Watched while it runs: asked `writer-ping` over its channel every `hangMs / 4`, answered by its
 * event loop, which a batch never holds (batches are written on its ingest thread). A writer that
 * has answered nothing for `hangMs` (MDS_WRITER_HANG_MS) is hung — stopped (SIGSTOP), or its
 * event loop stuck — and is killed: its transaction rolls back whole, the workers' batches in
 * flight are answered 503 with Retry-After when its socket closes (ingest/remote-ingest.ts), and
 * another writer starts, where the clients' retries are applied once.
 */
export function superviseWriter(hangMs: number): Writer {
  // A directory only this user can enter: the socket accepts batches without a key.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-writer-'));
  const socket = path.join(dir, 'writer.sock');
  const entry = fileURLToPath(entryModule('ingest/writer-process'));
  let child: ChildProcess | null = null;
  let stopping = false;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const start = (): void => {
    const c = fork(entry, [], { env: { ...process.env, [WRITER_SOCKET_ENV]: socket } });
    child = c;
    let heard = 0;
    let watch: NodeJS.Timeout | undefined;
    const check = (): void => {
      if (!c.connected) return;
      if (Date.now() - heard > hangMs) {
        console.error(
          `writer ${c.pid} answered nothing for ${hangMs} ms (MDS_WRITER_HANG_MS): hung; killing it`,
        );
        clearInterval(watch);
        c.kill('SIGKILL');
        return;
      }
      c.send({ mds: 'writer-ping' });
    };
    c.on('message', (m: unknown) => {
      const kind = typeof m === 'object' && m !== null ? (m as { mds?: unknown }).mds : undefined;
      heard = Date.now();
      // Watched from when it listens: before, it is still loading (and no worker waits on it).
      if (kind === 'writer-ready') {
        markReady();
        watch ??= setInterval(check, Math.max(1, Math.floor(hangMs / PINGS_PER_BOUND)));
        watch.unref();
      }
    });
    c.on('exit', (code, signal) => {
      clearInterval(watch);
      if (child === c) child = null;
      if (stopping) return;
      console.error(`writer ${c.pid} exited (${signal ?? code}); starting another in ${RESTART_MS} ms`);
      setTimeout(() => {
        if (!stopping) start();
      }, RESTART_MS);
    });
  };
  start();

  return {
    socket,
    ready,
    async stop() {
      stopping = true;
      const c = child;
      if (c && c.exitCode === null && c.signalCode === null) {
        const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
        if (c.connected) c.send({ mds: 'writer-stop' });
        else c.kill('SIGKILL');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
