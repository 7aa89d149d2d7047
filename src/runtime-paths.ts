import { existsSync } from 'node:fs';

/**
 * Where the code runs from, and so where its processes' and threads' modules are. Three layouts:
 * the sources under tsx (`src/*.ts`), the bundle (`dist/bundle/`: what `npm start` and `mds`
 * run, scripts/bundle.ts) and any other built JavaScript ('dist': tsc's `dist/*.js`, the library's
 * exports; the test runner's bundle of the tests, scripts/compile-tests.ts). In a bundle a
 * module's code sits in a shared chunk, so no path may be taken relative to a module's own URL:
 * every one is taken from the package's root.
 */

/**
 * The modules that start a process or a thread: the bundle's entry points (scripts/bundle.ts),
 * named by their path under src/ without the extension.
 */
export const ENTRY_POINTS = [
  'main',
  'cli/main',
  'ingest/ingest-worker',
  'ingest/writer-process',
  'export/encoder-thread',
  'storage/sqlite/reader-process',
] as const;
export type EntryPoint = (typeof ENTRY_POINTS)[number];

const BUNDLE_DIR = '/dist/bundle/';
const here = import.meta.url;

/** Which of the three layouts this code was loaded from. */
export const LAYOUT: 'src' | 'dist' | 'bundle' = here.includes(BUNDLE_DIR)
  ? 'bundle'
  : here.endsWith('.ts')
    ? 'src'
    : 'dist';

/**
 * The package's root (package.json, src/, dist/), a directory URL: the first directory above this
 * code with a package.json (src/, dist/ and the bundle's folders have none; nor has the test
 * runner's bundle of the tests, scripts/compile-tests.ts).
 */
export const PACKAGE_ROOT: URL = ((): URL => {
  for (let dir = new URL('./', here); ; dir = new URL('../', dir)) {
    if (existsSync(new URL('package.json', dir))) return dir;
    if (new URL('../', dir).href === dir.href) throw new Error(`no package.json above ${here}`);
  }
})();

/** An entry point's bundled module. */
export function bundledEntry(entry: EntryPoint): URL {
  return new URL(`dist/bundle/${entry}.js`, PACKAGE_ROOT);
}

/** An entry point's source (run under tsx). */
export function sourceEntry(entry: EntryPoint): URL {
  return new URL(`src/${entry}.ts`, PACKAGE_ROOT);
}

/**
 * The module a process of `entry` is started from: the source under tsx (the child inherits
 * `--import tsx`), else the bundle's. Built modules (dist/) start bundled children: a process
 * shares no module with its parent, and the bundle loads in about a third of the CPU
 * (docs/performance.md, "Start-up: the bundle").
 */
export function entryModule(entry: EntryPoint): URL {
  return LAYOUT === 'src' ? sourceEntry(entry) : bundledEntry(entry);
}
