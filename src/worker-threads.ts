import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * What the pools of worker threads (ingest-pool.ts, export/encoder-pool.ts) share: how a thread
 * is started from its module, and how bytes cross to or from it without a copy.
 */

/**
 * src/ and dist/ beside it, whether this file runs from the sources or built (the test runner's
 * compiled tests import the built modules: docs/testing.md), so that threadEntry answers the same.
 */
const SRC = new URL(import.meta.url.endsWith('.ts') ? './' : '../src/', import.meta.url);
const DIST = new URL('../dist/', import.meta.url);

/**
 * Where a thread of a pool (ingest-pool.ts, export/encoder-pool.ts) starts from, its module given
 * beside the pool (`./x.js` relative to the pool's `import.meta.url`). Built, that is the .js
 * file. Under tsx (dev, tests) it is the .ts, and a worker thread does not get tsx's loader from
 * the `--import tsx` it inherits, so a one-line module registers it first (a URL, not `eval`, so
 * the thread still runs the other `--import`s): about 0.6 s of CPU a thread, tsx and the sources
 * loaded again. `fromDist` (MDS_THREADS_FROM_DIST=1, which the test runner sets once dist/ is
 * fresh: docs/testing.md): the built module instead, without tsx's flag — about 0.2 s.
 */
export function threadEntry(
  jsName: string,
  poolUrl: string,
  fromDist: boolean,
  execArgv: readonly string[] = process.execArgv,
): { url: URL; execArgv?: string[] } {
  if (!poolUrl.endsWith('.ts')) return { url: new URL(jsName, poolUrl) };
  if (fromDist && poolUrl.startsWith(SRC.href)) {
    const built = new URL(jsName, new URL(poolUrl.slice(SRC.href.length), DIST));
    return { url: built, execArgv: withoutTsx(execArgv) };
  }
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const target = JSON.stringify(new URL(jsName.replace(/\.js$/, '.ts'), poolUrl).href);
  const code = `const m = await import(${tsx}); m.register(); await import(${target});`;
  return { url: new URL(`data:text/javascript,${encodeURIComponent(code)}`) };
}

/** A pool's thread (threadEntry), started. */
export function startThread(jsName: string, poolUrl: string, options: WorkerOptions = {}): Worker {
  const entry = threadEntry(jsName, poolUrl, process.env.MDS_THREADS_FROM_DIST === '1');
  return new Worker(entry.url, entry.execArgv ? { ...options, execArgv: entry.execArgv } : options);
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
