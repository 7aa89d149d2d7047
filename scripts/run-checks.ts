// `npm test`'s steps before the test runner: the type check, lint, format check and the emit of
// dist/ (package.json's scripts), side by side rather than one after another. None reads what
// another writes, and none waits on anything but the CPU, so on two cores they take about half
// their summed CPU time in wall time (docs/testing.md). Every step runs to its end, its output
// printed as one block when it ends; the exit status is 1 if any failed, so `npm test` stops
// before the suites. Step names given as arguments run instead of all.
import { spawn } from 'node:child_process';

/** The steps, longest first (CPU measured, docs/testing.md), so that none starts last and ends alone. */
const STEPS = ['format:check', 'typecheck', 'lint', 'build:emit'];

interface Outcome {
  step: string;
  status: number;
  seconds: number;
  output: string;
}

function runStep(step: string): Promise<Outcome> {
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', step], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    const done = (status: number): void =>
      resolve({
        step,
        status,
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
        output: Buffer.concat(chunks).toString('utf8'),
      });
    child.on('error', (err) => {
      chunks.push(Buffer.from(`${err.message}\n`));
      done(1);
    });
    child.on('close', (code, signal) => done(code ?? (signal === null ? 1 : 128)));
  });
}

const given = process.argv.slice(2);
const unknown = given.filter((s) => !STEPS.includes(s));
if (unknown.length > 0)
  throw new Error(`unknown step(s) ${unknown.join(', ')}: the steps are ${STEPS.join(', ')}`);
const steps = given.length > 0 ? given : STEPS;

const started = process.hrtime.bigint();
const outcomes = await Promise.all(
  steps.map(async (step) => {
    const outcome = await runStep(step);
    const verdict = outcome.status === 0 ? 'ok' : `FAILED (exit ${outcome.status})`;
    process.stdout.write(`${outcome.output}# ${step}: ${verdict}, ${outcome.seconds.toFixed(1)} s wall\n`);
    return outcome;
  }),
);
const wall = Number(process.hrtime.bigint() - started) / 1e9;
const failed = outcomes.filter((o) => o.status !== 0).map((o) => o.step);
process.stdout.write(
  `# checks: ${wall.toFixed(1)} s wall, ${failed.length === 0 ? 'all passed' : `failed: ${failed.join(', ')}`}\n`,
);
process.exit(failed.length === 0 ? 0 : 1);
