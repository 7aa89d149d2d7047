import { Worker, type WorkerOptions } from 'node:worker_threads';
import { bundledEntry, LAYOUT, sourceEntry, type EntryPoint } from './runtime-paths.js';

/**
 * What the pools of worker threads (ingest-pool.ts, export/encoder-pool.ts) share: how a thread
 * is started from its module, and how bytes cross to or from it without a copy.
 */

/**
 * Where a pool's thread (ingest-pool.ts, export/encoder-pool.ts) starts from. Built (dist/ or the
 * bundle), the bundle's module (runtime-paths.ts). Under tsx (dev, tests) it is the .ts, and a
 * worker thread does not get tsx's loader from the `--import tsx` it inherits, so a one-line
 * module registers it first (a URL, not `eval`, so the thread still runs the other `--import`s):
 * about 0.6 s of CPU a thread, tsx and the sources loaded again. `fromDist`
 * (MDS_THREADS_FROM_DIST=1, which the test runner sets once dist/ is fresh: docs/testing.md): the
 * bundle's module instead, without tsx's flag.
 */
export function threadEntry(
  entry: EntryPoint,
  fromDist: boolean,
  execArgv: readonly string[] = process.execArgv,
  layout: typeof LAYOUT = LAYOUT,
): { url: URL; execArgv?: string[] } {
  if (layout !== 'src') return { url: bundledEntry(entry) };
  if (fromDist) return { url: bundledEntry(entry), execArgv: withoutTsx(execArgv) };
  return { url: throughTsx(sourceEntry(entry).href) };
}

/** A thread's module that registers tsx's loader, then imports the TypeScript module `href`. */
export function throughTsx(href: string): URL {
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const code = `const m = await import(${tsx}); m.register(); await import(${JSON.stringify(href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}

/** A pool's thread (threadEntry), started. */
export function startThread(entry: EntryPoint, options: WorkerOptions = {}): Worker {
  const start = threadEntry(entry, process.env.MDS_THREADS_FROM_DIST === '1');
  return new Worker(start.url, start.execArgv ? { ...options, execArgv: start.execArgv } : options);
}

/** Node's flags without `--import tsx` (a thread of built modules has no use for its loader). */
function withoutTsx(argv: readonly string[]): string[] {
  return argv.filter(
    (a, i) =>
      a !== '--import=tsx' &&
      !(a === '--import' && argv[i + 1] === 'tsx') &&
      !(a === 'tsx' && argv[i - 1] === '--import'),
  );
}

/**
 * `bytes` in memory of their own, so that their buffer can be moved to another thread (a
 * transfer) rather than copied: as they are when they already own it, else copied once. A view
 * into a shared buffer (Node's small-buffer pool, a slab) must never be transferred: that would
 * detach the memory of every other view.
 */
export function ownBytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.byteOffset === 0 &&
    bytes.byteLength === bytes.buffer.byteLength &&
    bytes.buffer instanceof ArrayBuffer
    ? (bytes as Uint8Array<ArrayBuffer>)
    : (Uint8Array.prototype.slice.call(bytes) as Uint8Array<ArrayBuffer>);
}
