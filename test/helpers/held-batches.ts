import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshDatabaseUrl, type Backend } from './harness.js';
import { sleep, startServer, type ServerProcess } from './server-process.js';

/**
 * A server process on a fresh database whose batches can be held inside their transaction, every
 * row written, before commit (test/helpers/ingest-hooks.mjs, MDS_TEST_HOLD_FILE).
 */
export interface HoldingServer {
  server: ServerProcess;
  /** DATABASE_URL of its database. */
  databaseUrl: string;
  /** The next batch stops before its commit (a server may hold several in turn). */
  hold(): void;
  /** Resolves with the held batch's id once a batch is held. */
  held(timeoutMs?: number): Promise<string>;
  /** Whether a batch is still held. */
  holding(): boolean;
  /** Lets the held batch commit. */
  release(): void;
  close(): Promise<void>;
}

export async function holdingServer(
  backend: Backend,
  env: Record<string, string> = {},
): Promise<HoldingServer> {
  const db = await freshDatabaseUrl(backend, { migrated: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-hold-'));
  const file = path.join(dir, 'hold');
  const server = await startServer({
    databaseUrl: db.url,
    env: { MDS_TEST_HOLD_FILE: file, LOG_LEVEL: 'warn', ...env },
    hooks: true,
  });
  return {
    server,
    databaseUrl: db.url,
    hold: () => {
      // The last hold's marker would pass for this one's.
      fs.rmSync(`${file}.held`, { force: true });
      fs.writeFileSync(file, '');
    },
    async held(timeoutMs = 60_000) {
      for (const deadline = Date.now() + timeoutMs; !fs.existsSync(`${file}.held`); await sleep(20)) {
        if (Date.now() > deadline) throw new Error('no batch reached the hold');
      }
      return fs.readFileSync(`${file}.held`, 'utf8');
    },
    holding: () => fs.existsSync(file) && fs.existsSync(`${file}.held`),
    release: () => fs.rmSync(file, { force: true }),
    async close() {
      fs.rmSync(file, { force: true });
      await server.kill('SIGTERM');
      await db.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
