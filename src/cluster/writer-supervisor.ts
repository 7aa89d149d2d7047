import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WRITER_SOCKET_ENV } from '../ingest/writer-env.js';
import { entryModule } from '../runtime-paths.js';

/** How long after the writer died another is started, ms (as the pool restarts a thread). */
const RESTART_MS = 500;

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
 */
export function superviseWriter(): Writer {
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
    c.on('message', (m: unknown) => {
      if (typeof m === 'object' && m !== null && (m as { mds?: unknown }).mds === 'writer-ready') markReady();
    });
    c.on('exit', (code, signal) => {
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
