// Loaded into every test file's process when MDS_TEST_CPU_REPORT names a file (scripts/run-tests.ts):
// at exit, appends the process's CPU and that of the children it waited for (servers, CLIs,
// python), so the suite's CPU is seen per file rather than only as the run's total (issue 26).
// Plain JavaScript: it is loaded before `--import tsx` applies. Linux only (/proc).
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const report = process.env.MDS_TEST_CPU_REPORT;
// Only the runner's children (a file's process) report, NODE_TEST_CONTEXT marks them; once, from
// the main thread (an ingest or export worker loads this too, and /proc/self is the whole process).
if (report !== undefined && process.env.NODE_TEST_CONTEXT !== undefined && isMainThread) {
  const file = process.argv[1];
  const ticks = 100; // USER_HZ on Linux
  fs.appendFileSync(
    report,
    `${JSON.stringify({ event: 'start', pid: process.pid, file, at: Date.now() })}\n`,
  );
  process.once('exit', () => {
    // Fields after the command's closing parenthesis: utime is the 14th field of stat.
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(f[i]) / ticks);
    fs.appendFileSync(
      report,
      `${JSON.stringify({ event: 'exit', pid: process.pid, file, at: Date.now(), self: utime + stime, children: cutime + cstime })}\n`,
    );
  });
}
