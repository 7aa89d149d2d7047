// Issue 26 item 5: under the test runner (MDS_THREADS_FROM_DIST=1) the threads of in-process apps
// start from the built dist/ modules without tsx; run from the sources otherwise they load the .ts
// through tsx, and built they load the .js beside their pool (src/worker-threads.ts).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { threadEntry } from '../../src/worker-threads.js';
import { ROOT } from '../helpers/dist-fresh.js';

const srcPool = pathToFileURL(path.join(ROOT, 'src', 'ingest', 'ingest-pool.ts')).href;
const distPool = pathToFileURL(path.join(ROOT, 'dist', 'ingest', 'ingest-pool.js')).href;
const preload = ['--import', '/somewhere/file-cpu-preload.mjs'];

it('from the sources with MDS_THREADS_FROM_DIST: the built module, and the flags without tsx', () => {
  for (const tsx of [['--import', 'tsx'], ['--import=tsx']]) {
    const entry = threadEntry('./ingest-worker.js', srcPool, true, [
      ...tsx,
      ...preload,
      '--max-old-space-size=512',
    ]);
    assert.equal(fileURLToPath(entry.url), path.join(ROOT, 'dist', 'ingest', 'ingest-worker.js'));
    assert.ok(fs.existsSync(entry.url), 'the built thread module exists');
    assert.deepEqual(entry.execArgv, [...preload, '--max-old-space-size=512']);
  }
});

it('from the sources without it: the .ts through tsx, with the inherited flags', () => {
  const entry = threadEntry('./ingest-worker.js', srcPool, false, ['--import', 'tsx']);
  assert.equal(entry.url.protocol, 'data:');
  const code = decodeURIComponent(entry.url.href.slice('data:text/javascript,'.length));
  assert.match(code, /\.register\(\)/);
  assert.ok(code.includes(pathToFileURL(path.join(ROOT, 'src', 'ingest', 'ingest-worker.ts')).href), code);
  assert.equal(entry.execArgv, undefined);
});

it('built: the .js beside the pool whatever the variable says, with the inherited flags', () => {
  for (const fromDist of [false, true]) {
    const entry = threadEntry('./ingest-worker.js', distPool, fromDist, ['--import', 'tsx']);
    assert.equal(fileURLToPath(entry.url), path.join(ROOT, 'dist', 'ingest', 'ingest-worker.js'));
    assert.equal(entry.execArgv, undefined);
  }
});
