// A test reporter beside the usual one (scripts/run-tests.ts adds it): at the end of the run, its
// wall time and the files that took longest, so the suite's time (issue 26) is seen on every run
// rather than measured apart, and then every failed test with its error's first lines: CI shows a
// run's tail, where TAP's own report of a failure may be far above. Plain JavaScript: node loads reporters before `--import tsx` applies.
import path from 'node:path';

/** How many of the longest files are listed. */
const SHOWN = 15;
/** How many failed tests are listed, and how many lines of each one's error. */
const FAILED_SHOWN = 30;
const ERROR_LINES = 6;

/**
 * A file's time is the sum of its top-level tests' and suites' durations: what its tests ran,
 * without its process start-up and file-level hooks. Files run side by side, so the times add
 * up to more than the run's wall time.
 * @param {AsyncIterable<import('node:test/reporters').TestEvent>} source
 * @returns {AsyncGenerator<string>}
 */
export default async function* fileTimes(source) {
  const started = Date.now();
  /** @type {Map<string, number>} */
  const perFile = new Map();
  /** @type {string[]} */
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (event.type === 'test:fail' && !event.data.todo) failed.push(...failure(event.data));
    if (nesting !== 0 || file === undefined) continue;
    perFile.set(file, (perFile.get(file) ?? 0) + details.duration_ms);
  }
  const wall = (Date.now() - started) / 1000;
  const longest = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  const lines = longest.map(
    ([file, ms]) => `#   ${(ms / 1000).toFixed(1).padStart(7)} s  ${path.relative(process.cwd(), file)}`,
  );
  yield `# run: ${wall.toFixed(1)} s wall, ${perFile.size} files; the longest (their tests' time):\n${lines.join('\n')}\n`;
  if (failed.length > 0) {
    const shown = failed.slice(0, FAILED_SHOWN * (ERROR_LINES + 1));
    yield `# failed:\n${shown.join('\n')}\n`;
  }
}

/**
 * A failed test's lines for the end of the run: where and what, then its error's first lines. A
 * suite that failed only because a test in it did is left out (that test is listed).
 * @param {import('node:test/reporters').TestEvent['data'] & { details: { error?: Error & { failureType?: string, cause?: unknown } } }} data
 * @returns {string[]}
 */
function failure(data) {
  const error = data.details.error;
  if (error?.failureType === 'subtestsFailed') return [];
  const where = data.file ? path.relative(process.cwd(), data.file) : '(no file)';
  const cause = error?.cause instanceof Error ? error.cause : error;
  const text = String(cause?.stack ?? cause?.message ?? error ?? 'failed');
  const lines = text
    .split('\n')
    .slice(0, ERROR_LINES)
    .map((l) => `#       ${l}`);
  return [`#   ${where}: ${data.name}`, ...lines];
}
