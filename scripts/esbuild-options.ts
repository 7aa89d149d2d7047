// What the two esbuild bundles share — the service's (scripts/bundle.ts) and the test runner's
// (scripts/compile-tests.ts): ES modules for Node 20, shared code in chunks, source maps.
import type { BuildOptions } from 'esbuild';

export const NODE_BUNDLE: BuildOptions = {
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // CommonJS dependencies call require() for Node's modules; an ES module has none of its own.
  banner: {
    js: "import { createRequire as __mdsCreateRequire } from 'node:module'; const require = __mdsCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
};
