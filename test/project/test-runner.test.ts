// The runner (scripts/run-test-files.ts) on files of its own: its exit code, and the list of
// failed tests it ends with. CI shows the tail of a run; a failure reported only far above it was
// not found once (a failed run whose shown part named no failing test). And the compiled run's
// names: a failure is reported under the test's .ts source, not its compiled copy.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, testFileToRun } from '../helpers/repo-root.js';
import { TREE, compiledPath, sourcePath } from '../../scripts/compile-tests.js';

function runFiles(
  sources: Record<string, string>,
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-runner-')),
): { status: number | null; out: string } {
  try {
    const files = Object.entries(sources).map(([name, text]) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, text);
      return file;
    });
    // Compiled when this file runs compiled (its test files' processes then without tsx too).
    const runner = testFileToRun(path.join('scripts', 'run-test-files.ts'));
    const r = spawnSync(process.execPath, [...runner.execArgv, runner.file, ...files], {
      cwd: ROOT,
      encoding: 'utf8',
      // Without the variable node:test sets in a test's process: run() would see itself called
      // from inside a test file and run nothing.
      env: { ...withoutTestContext(process.env), MDS_TEST_CONCURRENCY: '2' },
    });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function withoutTestContext(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _context, ...rest } = env;
  return rest;
}

const PASSING = `import { it } from 'node:test';\nit('holds', () => {});\n`;
const FAILING = [
  `import { describe, it } from 'node:test';`,
  `import assert from 'node:assert/strict';`,
  `describe('a suite', () => {`,
  `  it('a test that fails', () => { assert.equal(1, 2, 'one is not two'); });`,
  `  it('a test that passes', () => {});`,
  `});`,
  '',
].join('\n');

it('ends a run with a failure listing each failed test with its error, and exits 1', () => {
  const { status, out } = runFiles({ 'pass.test.mjs': PASSING, 'fail.test.mjs': FAILING });
  assert.equal(status, 1, out);
  const tail = out.slice(out.lastIndexOf('# run:'));
  assert.match(
    tail,
    /# failed:\n# {3}\S*fail\.test\.mjs: a test that fails\n# {7}AssertionError.*one is not two/,
  );
  // The suite failed only through its test: not listed again; the passing ones never.
  assert.doesNotMatch(tail, /: a suite\n|a test that passes|: holds/);
});

it('exits 0 and lists no failure when every test passes', () => {
  const { status, out } = runFiles({ 'pass.test.mjs': PASSING });
  assert.equal(status, 0, out);
  assert.doesNotMatch(out, /# failed:/);
});

it('names a failed test of the compiled tree by its .ts source', () => {
  // A folder of the compiled tree (scripts/compile-tests.ts) that no source has: only this test.
  const dir = path.join(TREE, 'test', `runner-names-${process.pid}`);
  fs.mkdirSync(dir, { recursive: true });
  const { status, out } = runFiles({ 'fail.test.js': FAILING }, dir);
  assert.equal(status, 1, out);
  const tail = out.slice(out.lastIndexOf('# run:'));
  const source = path.join('test', `runner-names-${process.pid}`, 'fail.test.ts');
  assert.ok(tail.includes(`# failed:\n#   ${source}: a test that fails\n`), tail);
  assert.ok(!fs.existsSync(dir), 'the folder is removed');
});

it('maps a test file to its compiled copy and back, and refuses a file it does not compile', () => {
  const source = path.join('test', 'ingest', 'ingest.test.ts');
  assert.equal(compiledPath(source), path.join(TREE, 'test', 'ingest', 'ingest.test.js'));
  assert.equal(sourcePath(compiledPath(source)), path.join(ROOT, source));
  assert.equal(sourcePath('/tmp/elsewhere.test.mjs'), '/tmp/elsewhere.test.mjs');
  assert.throws(() => compiledPath('src/app.ts'), /not a file of test\//);
});

it('no test file finds a file through its own URL: from the compiled tree that is not the repository', () => {
  // test/helpers/repo-root.ts's ROOT instead (createRequire's module lookup is the same from both).
  const found: string[] = [];
  for (const f of fs.readdirSync(path.join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.ts') || f === path.join('helpers', 'repo-root.ts')) continue;
    const text = fs.readFileSync(path.join(ROOT, 'test', f), 'utf8');
    if (/import\.meta\.(dirname|filename)|new URL\([^)]*import\.meta\.url/.test(text)) found.push(f);
  }
  assert.deepEqual(found, []);
});
