// The test runner's compile step (issue 26, docs/testing.md "The compiled run"): test/ as
// JavaScript in .cache/test-js/, compiled at the start of every run, so that each test file's
// process runs plain `node`, without tsx's loader hooks (about 0.7 s of CPU a process).
//
// What the tree holds:
// - test/**: tsc's emit of tsconfig.test-js.json (`--noCheck`: `npm run checks` type-checks;
//   incremental, so a run recompiles only what changed). A file's imports are left as written.
// - src → ../../dist: the tests' `../../src/x.js` imports reach the built modules, which the runner
//   has just made fresh (test/helpers/dist-fresh.ts). The same code as the servers the tests start,
//   and a pool's thread starts from the .js beside it without tsx (src/worker-threads.ts).
// - scripts/run-test-files.js, the runner's child, with what it imports (this file, the .mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../test/helpers/repo-root.js';

export const TREE = path.join(ROOT, '.cache', 'test-js');
const CONFIG = path.join(ROOT, 'tsconfig.test-js.json');
/** Kept inside the tree: a tree removed is compiled whole again, never trusted from old info. */
const BUILD_INFO = path.join(TREE, '.tsbuildinfo');

/** The sources compiled into the tree, relative to the root. */
function sources(): string[] {
  const tests = fs
    .readdirSync(path.join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join('test', f));
  return [...tests, path.join('scripts', 'run-test-files.ts'), path.join('scripts', 'compile-tests.ts')];
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

/** The sources whose compiled file is missing or older than they are. */
function stale(files: readonly string[]): string[] {
  return files.filter((f) => {
    const built = fs.statSync(compiledPath(f), { throwIfNoEntry: false })?.mtimeMs ?? 0;
    return built < fs.statSync(path.join(ROOT, f)).mtimeMs;
  });
}

function tsc(): void {
  const bin = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [bin, '-p', CONFIG, '--noCheck'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`compiling the tests failed: tsc -p ${CONFIG} --noCheck`);
}

/** A symbolic link at `at` to `target`, replacing whatever is there. */
function link(target: string, at: string): void {
  if (fs.lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink() && fs.readlinkSync(at) === target) return;
  fs.rmSync(at, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.symlinkSync(target, at);
}

/**
 * Compiles the tests into TREE and checks that every one of them is there and not older than its
 * source. tsc's incremental build skips a file whose text it saw before even when its output is
 * gone (or its source was touched by a checkout), so when the check finds one, the tree is
 * compiled whole once more rather than trusted.
 */
export function compileTests(): void {
  const files = sources();
  tsc();
  if (stale(files).length > 0) {
    fs.rmSync(BUILD_INFO, { force: true });
    tsc();
    const left = stale(files);
    if (left.length > 0) throw new Error(`compiled tests older than their sources: ${left.join(', ')}`);
  }
  removeOrphans(new Set(files.map(compiledPath)));
  link(path.join('..', '..', 'dist'), path.join(TREE, 'src'));
  for (const f of fs.readdirSync(path.join(ROOT, 'scripts'))) {
    if (f.endsWith('.mjs')) link(path.join(ROOT, 'scripts', f), path.join(TREE, 'scripts', f));
  }
}

/** Compiled files whose source was deleted or renamed: an import of one must fail as it would from the sources. */
function removeOrphans(wanted: ReadonlySet<string>): void {
  const dir = path.join(TREE, 'test');
  for (const f of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(dir, f);
    const js = file.replace(/\.js\.map$/, '.js');
    if ((file.endsWith('.js') || file.endsWith('.js.map')) && !wanted.has(js)) fs.rmSync(file);
  }
}
