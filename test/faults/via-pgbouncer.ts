// Issue 28: the PostgreSQL fault suites again, through PgBouncer in transaction mode — batch
// exactly-once under concurrency and kills, reverts and point in time, exports, store parity.
// Each file runs in a test process of its own with MDS_TEST_VIA_PGBOUNCER=1 (its databases
// reached through a PgBouncer of that process, the service with MDS_PG_POOLER=pgbouncer:
// test/helpers/postgres.ts), its PostgreSQL tests only. Skipped, saying so, without pgbouncer
// (MDS_REQUIRE_PGBOUNCER=1, as CI sets, makes that a failure). Two test files share the suites
// between them (faults-via-pgbouncer-crash.test.ts, faults-via-pgbouncer.test.ts), so that the
// runner runs the crash suite, the longest, beside the others.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { postgresAvailable } from '../helpers/postgres.js';
import { pgBouncerAvailable } from '../helpers/private-servers.js';
import { testFileToRun } from '../helpers/repo-root.js';

/** The longest a suite may take through PgBouncer before its process group is killed. */
const SUITE_TIMEOUT_MS = 1_500_000;

const postgres = await postgresAvailable();
const bouncer = postgres && pgBouncerAvailable();
if (postgres && !bouncer) {
  console.warn('# pgbouncer is not installed: the fault suites through PgBouncer are SKIPPED');
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/**
 * This process's environment with MDS_TEST_VIA_PGBOUNCER=1, less NODE_TEST_CONTEXT: with it (set
 * by the runner that started this file) a nested runner reports to it in its own protocol and
 * prints no TAP summary.
 */
function viaEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MDS_TEST_VIA_PGBOUNCER: '1' };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/** `file`'s PostgreSQL tests through PgBouncer; its whole process group is killed on `signal`. */
function runVia(file: string, signal: AbortSignal): Promise<Run> {
  // Its compiled copy when this file runs compiled (the runner), else the source under tsx.
  const run = testFileToRun(file);
  const child = spawn(
    process.execPath,
    [
      ...run.execArgv,
      '--test',
      '--test-concurrency=1',
      '--test-reporter=tap',
      '--test-name-pattern=/postgres/i',
      run.file,
    ],
    // A group of its own: servers and PgBouncers it started die with it if it is stopped.
    {
      env: viaEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const stop = (): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  signal.addEventListener('abort', stop, { once: true });
  return new Promise((resolve) => {
    child.once('exit', (code, sig) => {
      signal.removeEventListener('abort', stop);
      resolve({ code, signal: sig, output });
    });
  });
}

/** A TAP summary count (`# pass 12`), or -1 when the run printed none. */
function count(output: string, what: 'pass' | 'fail'): number {
  const m = new RegExp(`^# ${what} (\\d+)$`, 'm').exec(output);
  return m ? Number(m[1]) : -1;
}

/** The PostgreSQL tests of `suites` (test files), one after another, each through a PgBouncer of its own. */
export function viaPgBouncer(suites: readonly string[]): void {
  describe(
    'the PostgreSQL fault suites through PgBouncer in transaction mode',
    {
      skip: !bouncer && (postgres ? 'pgbouncer is not installed' : 'no PostgreSQL'),
      timeout: suites.length * SUITE_TIMEOUT_MS,
      // One suite at a time: each starts servers of its own.
      concurrency: 1,
    },
    () => {
      for (const file of suites) {
        it(file, { timeout: SUITE_TIMEOUT_MS }, async (t) => {
          const run = await runVia(file, t.signal);
          const failed = run.output
            .split('\n')
            .filter((l) => /^\s*not ok |^\s+error: |^# Error/.test(l))
            .join('\n');
          t.diagnostic(`${file}: pass ${count(run.output, 'pass')}, fail ${count(run.output, 'fail')}`);
          assert.equal(run.code, 0, `${file} through PgBouncer: exit ${run.code ?? run.signal}\n${failed}`);
          assert.equal(count(run.output, 'fail'), 0, failed);
          // The name pattern matched: PostgreSQL tests ran, none was silently left out.
          assert.ok(
            count(run.output, 'pass') > 0,
            `${file}: no PostgreSQL test ran\n${run.output.slice(-2000)}`,
          );
        });
      }
    },
  );
}
