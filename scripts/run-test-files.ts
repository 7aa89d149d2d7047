// The test runner's child (scripts/run-tests.ts starts its compiled copy, or the source with
// `--import tsx` when MDS_TEST_COMPILED=0): node:test's run()
// over the files in the order given. `node --test` sorts the files it is given by name, so the
// longest-first order of run-tests.ts had no effect before: the fault suites started after
// test/docs and the run ended on whichever long file came last alphabetically. run() keeps the
// order, and each file's process inherits this one's flags (tsx when run from the sources, the
// CPU preload, source maps).
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';
import { PassThrough, Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import fileTimes from './file-times-reporter.mjs';
import { sourcePath } from './compile-tests.js';

const concurrency = Number(process.env.MDS_TEST_CONCURRENCY ?? 4);
const files = process.argv.slice(2);

const events = run({ files, concurrency });
let failed = false;
events.on('test:fail', (data: { todo?: string | boolean }) => {
  if (data.todo === undefined || data.todo === false) failed = true;
});
// Two reporters read every event: the usual one (spec on a terminal, TAP otherwise, as
// `node --test` picks) and the run's wall time with its longest files.
// Every event names the test's source, not its compiled copy (scripts/compile-tests.ts): the list
// of failed tests at the end of the run, and TAP's, lead to the file to open.
const named = events.pipe(
  new Transform({
    objectMode: true,
    transform(event: { data?: { file?: string } }, _encoding, done) {
      if (event.data?.file !== undefined) event.data.file = sourcePath(event.data.file);
      done(null, event);
    },
  }),
);
const usual = named.pipe(new PassThrough({ objectMode: true }));
const times = named.pipe(new PassThrough({ objectMode: true }));
const reporters = [usual.compose(process.stdout.isTTY ? new spec() : tap), times.compose(fileTimes)];
for (const r of reporters) r.pipe(process.stdout);
await Promise.all(reporters.map((r) => finished(r)));
process.exitCode = failed ? 1 : 0;
