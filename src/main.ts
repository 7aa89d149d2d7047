#!/usr/bin/env node
import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';
import { loadConfig } from './config.js';
import { EXIT_CONFIG } from './exit-codes.js';
import { JOIN_WHEN_READY } from './cluster/primary-link.js';
import { sqliteUrl } from './model/database-url.js';
import { WRITER_SOCKET_ENV } from './ingest/writer-env.js';

/**
 * MDS_WORKERS > 1, or 0 (the default) on a machine of several cores: this process forks the
 * workers, which share the port (node:cluster), restarts one that dies, and passes
 * SIGTERM/SIGINT on. Workers are stateless; what they share without Redis (rate-limit counters,
 * batch events, metrics) goes through this process (cluster/worker-hub.ts). On SQLite it also
 * runs the one writer process every worker hands its batches to (cluster/writer-supervisor.ts).
 */
async function primary(
  workers: number,
  redisUrl: string | undefined,
  sqlite: boolean,
  writerHangMs: number,
): Promise<void> {
  // Imported here, not above: a single process or a worker never loads the hub (nor ioredis).
  const { serveWorkers } = await import('./cluster/worker-hub.js');
  // SQLite: one writer process writes every worker's batches (one connection, so no worker's
  // commit drops another's page cache: docs/performance.md, round eight of issue 31). It
  // listens before the first worker starts, whose migration it runs.
  const writer = sqlite
    ? (await import('./cluster/writer-supervisor.js')).superviseWriter(writerHangMs)
    : null;
  await writer?.ready;
  // Workers accept connections themselves on the shared socket, not through this process
  // (Node's round-robin default on Linux): a stopped or busy primary then delays no new
  // connection. The kernel spreads them less evenly; NODE_CLUSTER_SCHED_POLICY=rr restores
  // round-robin (docs/deployment.md).
  if (!process.env.NODE_CLUSTER_SCHED_POLICY) cluster.schedulingPolicy = cluster.SCHED_NONE;
  let stopping = false;
  // A worker stays in cluster.workers until its channel closes, which may come after its
  // 'exit': the dead are left out by state.
  const alive = (): Worker[] =>
    Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
  // The first worker starts alone (it runs any migration and answers 503 meanwhile); once it
  // serves, the others join, each listening only when its own database is ready.
  let forkedAll = false;
  const hub = serveWorkers({
    // Under Redis the supervisor decides limits for the instance while Redis is unreachable.
    ...(redisUrl ? { redisUrl } : {}),
    onReady: () => {
      if (forkedAll) return;
      forkedAll = true;
      for (let i = 1; i < workers; i++) fork();
    },
  });
  const fork = (): void =>
    void cluster.fork({
      // glibc gives every thread that allocates its own malloc arena, and each keeps what it
      // held: two arenas took 20–30 MB off a worker's peak during a 1M-row Parquet export
      // (docs/deployment.md). An operator's own setting wins; musl ignores it.
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      ...(hub.serving() > 0 ? { [JOIN_WHEN_READY]: '1' } : {}),
      ...(writer ? { [WRITER_SOCKET_ENV]: writer.socket } : {}),
    });
  cluster.on('exit', (worker, code, signal) => {
    if (code === EXIT_CONFIG && !stopping) {
      console.error(`worker ${worker.process.pid} cannot run against this database; stopping`);
      process.exitCode = EXIT_CONFIG;
      stop('SIGTERM');
    }
    if (stopping) {
      if (alive().length === 0) void exit();
      return;
    }
    console.error(`worker ${worker.process.pid} exited (${signal ?? code}); starting another in 1 s`);
    setTimeout(fork, 1000);
  });
  // The writer last: the workers' batches in flight at the signal are still written.
  const exit = async (): Promise<void> => {
    await writer?.stop();
    process.exit(process.exitCode ?? 0);
  };
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    const live = alive();
    if (live.length === 0) void exit();
    for (const w of live) w.process.kill(signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  fork();
}

const config = cluster.isPrimary ? loadConfig() : null;
const requested = config ? config.MDS_WORKERS : 1;
const workers = requested === 0 ? os.availableParallelism() : requested;
if (config && workers > 1) {
  const sqlite = sqliteUrl(config.DATABASE_URL) && !config.DATABASE_URL.endsWith(':memory:');
  primary(workers, config.REDIS_URL || undefined, sqlite, config.MDS_WRITER_HANG_MS).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  // Imported here, not above: a cluster primary never loads the service (about 50 MB less).
  import('./serve.js')
    .then(({ serve }) => serve())
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
