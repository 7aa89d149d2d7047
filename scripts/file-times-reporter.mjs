// A test reporter beside the usual one (scripts/run-tests.ts adds it): at the end of the run, its
// wall time and the files that took longest, so the suite's time (issue 26) is seen on every run
// rather than measured apart. Plain JavaScript: node loads reporters before `--import tsx` applies.
import path from 'node:path';

/** How many of the longest files are listed. */
const SHOWN = 15;

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
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || file === undefined) continue;
    perFile.set(file, (perFile.get(file) ?? 0) + details.duration_ms);
  }
  const wall = (Date.now() - started) / 1000;
  const longest = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  const lines = longest.map(
    ([file, ms]) => `#   ${(ms / 1000).toFixed(1).padStart(7)} s  ${path.relative(process.cwd(), file)}`,
  );
  yield `# run: ${wall.toFixed(1)} s wall, ${perFile.size} files; the longest (their tests' time):\n${lines.join('\n')}\n`;
}
