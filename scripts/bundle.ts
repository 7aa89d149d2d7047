// The bundle (dist/bundle/): every entry point of src/runtime-paths.ts — the server, `mds`, the
// ingest and export threads, SQLite's reader and writer processes — built by esbuild from the
// sources, the code they share in chunks and what they import lazily in chunks of its own (so
// the MCP SDK, Arrow or ioredis still load only when first used). Why: Node 20 loads a module
// graph of a few hundred files (TypeBox, Fastify and their dependencies are most of it) in about
// 0.4 s of CPU, the same code as one file in about 0.13 s, and every process and thread pays it
// (docs/performance.md, "Start-up: the bundle"). `npm run build:emit` and `npm run build` run this
// after tsc; the library's exports (dist/index.js, dist/client/) stay tsc's modules.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { NODE_BUNDLE } from './esbuild-options.js';
import { ENTRY_POINTS } from '../src/runtime-paths.js';

const ROOT = path.join(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'dist', 'bundle');

/**
 * Left to Node's resolution: a native addon (better-sqlite3), pg's optional native binding, and
 * the packages that read files of their own directory through `__dirname` (which an ES module
 * does not have): Swagger and its UI, ioredis (its package.json), parquet-wasm (its .wasm).
 * (pino and thread-stream use it only for log transports, which the service does not start.)
 */
const EXTERNAL = [
  'better-sqlite3',
  'pg-native',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  'ioredis',
  'parquet-wasm',
];

fs.rmSync(OUT, { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: Object.fromEntries(ENTRY_POINTS.map((e) => [e, path.join('src', `${e}.ts`)])),
  outdir: OUT,
  ...NODE_BUNDLE,
  external: EXTERNAL,
});
