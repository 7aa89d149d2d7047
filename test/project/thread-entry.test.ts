// Issue 26 item 5: under the test runner (MDS_THREADS_FROM_DIST=1) the threads of in-process apps
// start from the bundle without tsx; run from the sources otherwise they load the .ts through
// tsx, and built they load the bundle's module (src/worker-threads.ts, src/runtime-paths.ts).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { threadEntry } from '../../src/worker-threads.js';
import { ENTRY_POINTS, LAYOUT, PACKAGE_ROOT } from '../../src/runtime-paths.js';
import { ROOT } from '../helpers/dist-fresh.js';

const bundled = path.join(ROOT, 'dist', 'bundle', 'ingest', 'ingest-worker.js');
const preload = ['--import', '/somewhere/file-cpu-preload.mjs'];

it('the package root is found from whichever layout runs', () => {
  assert.equal(fileURLToPath(PACKAGE_ROOT), `${ROOT}${path.sep}`);
  assert.ok(['src', 'dist'].includes(LAYOUT), LAYOUT);
});

it('every entry point has its module in the bundle', () => {
  for (const entry of ENTRY_POINTS)
    assert.ok(
      fs.existsSync(path.join(ROOT, 'dist', 'bundle', `${entry}.js`)),
      `${entry} is not in dist/bundle/`,
    );
});

it('from the sources with MDS_THREADS_FROM_DIST: the bundled module, and the flags without tsx', () => {
  for (const tsx of [['--import', 'tsx'], ['--import=tsx']]) {
    const entry = threadEntry(
      'ingest/ingest-worker',
      true,
      [...tsx, ...preload, '--max-old-space-size=512'],
      'src',
    );
    assert.equal(fileURLToPath(entry.url), bundled);
    assert.deepEqual(entry.execArgv, [...preload, '--max-old-space-size=512']);
  }
});

it('from the sources without it: the .ts through tsx, with the inherited flags', () => {
  const entry = threadEntry('ingest/ingest-worker', false, ['--import', 'tsx'], 'src');
  assert.equal(entry.url.protocol, 'data:');
  const code = decodeURIComponent(entry.url.href.slice('data:text/javascript,'.length));
  assert.match(code, /\.register\(\)/);
  assert.ok(code.includes(pathToFileURL(path.join(ROOT, 'src', 'ingest', 'ingest-worker.ts')).href), code);
  assert.equal(entry.execArgv, undefined);
});

it('built: the bundled module whatever the variable says, with the inherited flags', () => {
  for (const [fromDist, layout] of [
    [false, 'dist'],
    [true, 'dist'],
    [false, 'bundle'],
  ] as const) {
    const entry = threadEntry('ingest/ingest-worker', fromDist, ['--import', 'tsx'], layout);
    assert.equal(fileURLToPath(entry.url), bundled);
    assert.equal(entry.execArgv, undefined);
  }
});
