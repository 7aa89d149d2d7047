import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { SERVER_MAIN } from '../helpers/built.js';
import { PYTHON, pythonAvailable, runPythonFull } from '../helpers/python.js';
import { ROOT } from '../helpers/repo-root.js';

/**
 * Issue 18: the Python client's own suite (clients/python/tests, `python3 -m unittest`), which
 * starts the service itself and reads and pushes through it. Its pandas / polars / pyarrow
 * parts say so when skipped; here the skip lines are repeated so they show in `npm test`. It
 * starts the built server (MDS_SERVER_MAIN), not the sources through tsx.
 */
const DIR = path.join(ROOT, 'clients', 'python');

test('clients/python: python3 -m unittest passes', { skip: !pythonAvailable() }, async () => {
  let out: string;
  try {
    out = (
      await runPythonFull(['-m', 'unittest', '-v'], {
        cwd: DIR,
        env: { ...process.env, PYTHONWARNINGS: 'ignore', MDS_SERVER_MAIN: SERVER_MAIN },
      })
    ).stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    assert.fail(`${PYTHON} -m unittest failed:\n${e.stdout ?? ''}${e.stderr ?? String(err)}`);
  }
  for (const line of out.split('\n')) if (/skipped/i.test(line)) console.log(line.trim());
});
