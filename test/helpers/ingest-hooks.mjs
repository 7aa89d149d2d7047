import diagnosticsChannel from 'node:diagnostics_channel';
import fs from 'node:fs';

/**
 * TEST ONLY, loaded with `--import` into a server under test (test/helpers/server-process.ts;
 * worker threads inherit it, so it runs where batches are written). It subscribes to the
 * ingest's before-commit channel (src/ingest/ingest-service.ts BEFORE_COMMIT), which fires inside
 * the batch transaction once every row is written, and, per the environment:
 * - MDS_TEST_PAUSE_BEFORE_COMMIT_MS: prints `PAUSE_MARKER <batch_id>` to stderr and blocks
 *   that long (the crash suite SIGKILLs the process at exactly that point);
 * - MDS_TEST_HOLD_FILE: writes `<file>.held` (the batch_id) and blocks while `<file>` exists
 *   (a test proves queries and /health are answered meanwhile, then deletes the file); with
 *   MDS_TEST_HOLD_AT=known, not there but once the changes' known instant is recorded (the
 *   after-known channel: the last thing before COMMIT).
 * The production code knows nothing of these variables. Plain JavaScript: worker threads load
 * it before they can load TypeScript.
 */

const PAUSE_MARKER = 'MDS_TEST_PAUSE_BEFORE_COMMIT';

const pauseMs = Number(process.env.MDS_TEST_PAUSE_BEFORE_COMMIT_MS ?? 0);
const holdFile = process.env.MDS_TEST_HOLD_FILE ?? '';
const cell = new Int32Array(new SharedArrayBuffer(4));

const holdAtKnown = process.env.MDS_TEST_HOLD_AT === 'known';

function onBeforeCommit(message) {
  const { batchId } = message;
  if (pauseMs > 0) {
    // stderr is a pipe in tests, written synchronously on Linux: the marker is out before the wait.
    process.stderr.write(`${PAUSE_MARKER} ${batchId}\n`);
    Atomics.wait(cell, 0, 0, pauseMs);
  }
  if (!holdAtKnown) hold(batchId);
}

function hold(batchId) {
  if (holdFile && fs.existsSync(holdFile)) {
    fs.writeFileSync(`${holdFile}.held`, batchId);
    // Synchronous on purpose: the transaction (and this thread) stays where it is.
    while (fs.existsSync(holdFile)) Atomics.wait(cell, 0, 0, 20);
  }
}

if (pauseMs > 0 || holdFile) diagnosticsChannel.subscribe('mds:ingest:before-commit', onBeforeCommit);
if (holdFile && holdAtKnown)
  diagnosticsChannel.subscribe('mds:ingest:after-known', ({ batchId }) => hold(batchId));
