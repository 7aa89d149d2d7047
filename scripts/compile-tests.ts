// The test runner's compile step (issue 26, docs/testing.md "The compiled run"): test/ bundled
// by esbuild into .cache/test-js/ at the start of every run, so that each test file's process
// runs plain `node`, without tsx's loader hooks, and loads one file per test and a few shared
// chunks rather than a few hundred modules (about 0.25 s of CPU less a file than tsc's modules).
//
// What the tree holds:
// - test/**/*.test.js: one module per test file, its imports (its helpers, src/ from the sources,
//   the heaviest packages) in chunks shared between them (chunks/), with source maps. A test
//   file's process has one copy of every module, as from the sources.
// - scripts/run-test-files.js, the runner's child, with what it imports.
// - scripts/*.mjs linked beside it (the CPU preload is given by path).
// No output is trusted from an earlier run: the tree is removed and built whole (about 1 s).
import fs from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { NODE_BUNDLE } from './esbuild-options.js';
import { ROOT, TEST_TREE } from '../test/helpers/repo-root.js';

export const TREE = TEST_TREE;

/**
 * The packages bundled into the tests' chunks: the ones every test file's app loads, whose many
 * small files are most of its loading time. Every other package is left to Node's resolution from
 * node_modules, so that one that reads files of its own directory (Playwright, Swagger, ioredis,
 * parquet-wasm, the OpenAPI tools) finds them.
 */
const BUNDLED_PACKAGES: ReadonlySet<string> = new Set([
  '@fastify/fast-json-stringify-compiler',
  '@modelcontextprotocol/sdk',
  '@sinclair/typebox',
  'ajv',
  'apache-arrow',
  'commander',
  'csv-parse',
  'csv-stringify',
  'fastify',
  'find-my-way',
  'hyparquet',
  'pg',
  'pg-copy-streams',
  'pino',
  'prom-client',
  'secure-json-parse',
]);

/** The sources bundled into the tree, relative to the root: every test file and the runner's child. */
function sources(): string[] {
  const tests = fs
    .readdirSync(path.join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => path.join('test', f));
  return [...tests, path.join('scripts', 'run-test-files.ts')];
}

/** A source's compiled file in the tree (a file of test/, or of scripts/ that the tree holds). */
export function compiledPath(source: string): string {
  const rel = path.relative(ROOT, path.resolve(ROOT, source));
  if (!rel.startsWith(`test${path.sep}`) && !rel.startsWith(`scripts${path.sep}`)) {
    throw new Error(`${source}: not a file of test/, which the runner compiles`);
  }
  return path.join(TREE, rel.replace(/\.ts$/, '.js'));
}

/** The source of a file in the tree (its .ts), or the file itself if it is not in the tree. */
export function sourcePath(file: string): string {
  const rel = path.relative(TREE, file);
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : path.join(ROOT, rel.replace(/\.js$/, '.ts'));
}

/** A symbolic link at `at` to `target`, replacing whatever is there. */
function link(target: string, at: string): void {
  fs.rmSync(at, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.symlinkSync(target, at);
}

/** The package a bare import names (`@scope/name/sub` → `@scope/name`). */
const packageOf = (specifier: string): string =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/**
 * A package our code (test/, src/, scripts/) imports stays in node_modules unless it is one of
 * BUNDLED_PACKAGES; what a bundled package imports is bundled with it, or most of its loading
 * would be left.
 */
const packagesLeftOut: Plugin = {
  name: 'packages-left-out',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.importer.includes(`${path.sep}node_modules${path.sep}`) ||
      BUNDLED_PACKAGES.has(packageOf(args.path))
        ? undefined
        : { path: args.path, external: true },
    );
  },
};

/** Bundles the tests into TREE, whole (the tree of an earlier run removed first). */
export async function compileTests(): Promise<void> {
  fs.rmSync(TREE, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: sources(),
    outdir: TREE,
    outbase: ROOT,
    ...NODE_BUNDLE,
    // better-sqlite3 (a native addon) among them.
    plugins: [packagesLeftOut],
  });
  for (const f of fs.readdirSync(path.join(ROOT, 'scripts'))) {
    if (f.endsWith('.mjs')) link(path.join(ROOT, 'scripts', f), path.join(TREE, 'scripts', f));
  }
}
