/**
 * What the pools of worker threads (ingest-pool.ts, export/encoder-pool.ts) share: how a thread
 * finds its module, and how bytes cross to or from it without a copy.
 */

/**
 * The URL a `Worker` starts from, for a thread module given beside its pool (`./x.js` relative to
 * the pool's `import.meta.url`): .js once built. Under tsx (dev, tests) the module is .ts, and a
 * worker thread does not get tsx's loader from the `--import tsx` it inherits, so a one-line
 * module registers it first (a URL, not `eval`, so the thread still runs the other `--import`s).
 */
export function threadModuleUrl(jsName: string, poolUrl: string): URL {
  if (!poolUrl.endsWith('.ts')) return new URL(jsName, poolUrl);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const target = JSON.stringify(new URL(jsName.replace(/\.js$/, '.ts'), poolUrl).href);
  const code = `const m = await import(${tsx}); m.register(); await import(${target});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
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
