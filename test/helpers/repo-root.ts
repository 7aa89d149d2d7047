import fs from 'node:fs';
import path from 'node:path';

/**
 * The checkout's root. A test runs from test/ (one file by hand, under tsx) or from the runner's
 * compiled copy in .cache/test-js/test/ (scripts/compile-tests.ts), so a path relative to the
 * test's own URL would lead into that copy: files of the repository (docs/, clients/, src/'s .ts
 * sources, README.md) are found from here instead. The first folder above with a package.json:
 * the compiled copy has none.
 */
export const ROOT = ((): string => {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${import.meta.dirname}`);
  }
})();

/** Whether this process runs the compiled copy of the tests (plain JavaScript, no tsx). */
export const COMPILED = import.meta.url.endsWith('.js');

/**
 * The runner's bundle of the tests (scripts/compile-tests.ts). Not found from this module's URL:
 * bundled, its code is in a shared chunk.
 */
export const TEST_TREE = path.join(ROOT, '.cache', 'test-js');

/**
 * A file of the compiled tree (a test file, `test/<area>/<name>.test.ts`, or the runner's
 * `scripts/run-test-files.ts`, from the root) as this process would run it: its compiled copy when
 * this process runs compiled, else the source under tsx; and the Node flags that takes.
 */
export function testFileToRun(file: string): { file: string; execArgv: string[] } {
  if (!COMPILED) return { file: path.join(ROOT, file), execArgv: ['--import', 'tsx'] };
  return { file: path.join(TEST_TREE, file.replace(/\.ts$/, '.js')), execArgv: [] };
}
