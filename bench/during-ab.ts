import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CFG, DATA_DIR, log, startService } from './context.js';
import { buildQueryDatabase } from './data.js';
import { randomPaths } from './measure.js';
import { pacedIdleThenBusy } from './phases/during-ingest.js';

/**
 * The `during` phase's paced pages (idle, then while 10k-record batches are pushed back to
 * back) for several service settings, in alternating rounds on one copy of the query data: on a
 * shared machine only settings measured side by side can be compared.
 *
 *   npx tsx bench/during-ab.ts <rounds> <seconds> <name>:<VAR>=<value>[,<VAR>=<value>…] …
 *   e.g. npx tsx bench/during-ab.ts 3 10 same:MDS_INGEST_NICE=0 lower:MDS_INGEST_NICE=10
 *
 * Per round and setting: idle and busy p50/p99, the ratio of the p99s (goal ≤ 3), records
 * pushed, and from /proc (Linux) for the idle and the busy part: the CPU seconds of the request
 * thread and of the service's other threads, and how long the request thread waited for a CPU
 * while it was ready to run (schedstat's run-queue wait).
 */
interface Variant {
  name: string;
  env: Record<string, string>;
}

function parseVariant(arg: string): Variant {
  const [name, assignments = ''] = arg.split(/:(.*)/s);
  const env: Record<string, string> = {};
  for (const a of assignments.split(',').filter(Boolean)) {
    const [k, v] = a.split(/=(.*)/s);
    if (!k || v === undefined) throw new Error(`not VAR=value: ${a}`);
    env[k] = v;
  }
  return { name: name as string, env };
}

const read = (file: string): string => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return ''; // not Linux, or ended
  }
};

/** CPU seconds of one thread. */
function threadCpu(pid: number, tid: number): number {
  const stat = read(`/proc/${pid}/task/${tid}/stat`);
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11] ?? 0) + Number(f[12] ?? 0)) / 100;
}

interface Sample {
  main: number;
  all: number;
  /** Seconds the request thread waited on a run queue. */
  wait: number;
}

function sample(pid: number): Sample {
  let all = 0;
  for (const tid of safeList(`/proc/${pid}/task`)) all += threadCpu(pid, Number(tid));
  const wait = Number(read(`/proc/${pid}/task/${pid}/schedstat`).split(' ')[1] ?? 0) / 1e9;
  return { main: threadCpu(pid, pid), all, wait };
}

function safeList(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

const usage = (a: Sample, b: Sample): string =>
  `request thread ${(b.main - a.main).toFixed(1)} s CPU, waited ${((b.wait - a.wait) * 1000).toFixed(0)} ms; ` +
  `other threads ${(b.all - a.all - (b.main - a.main)).toFixed(1)} s`;

const [roundsArg, secondsArg, ...variantArgs] = process.argv.slice(2);
const rounds = Number(roundsArg);
const seconds = Number(secondsArg);
if (!(rounds > 0 && seconds > 0 && variantArgs.length > 0)) {
  throw new Error('usage: during-ab.ts <rounds> <seconds> <name>:<VAR>=<value>,… …');
}
const variants = variantArgs.map(parseVariant);
const file = await buildQueryDatabase(DATA_DIR, CFG.codes, CFG.days, false, log);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-during-ab-'));
const results = new Map<string, number[]>(variants.map((v) => [v.name, []]));
try {
  const copy = path.join(dir, 'service.db');
  fs.copyFileSync(file, copy);
  const paths = randomPaths(200_000, 777);
  for (let r = 1; r <= rounds; r++) {
    for (const [i, v] of variants.entries()) {
      const svc = await startService(copy, undefined, v.env);
      try {
        // Paths shifted per round: no round reads pages another one left in the caches.
        const offset = ((r - 1) * 7919) % 40_000;
        const shifted = [...paths.slice(offset), ...paths.slice(0, offset)];
        const marks = new Map<string, Sample>();
        const { idle, busy, pushed } = await pacedIdleThenBusy(svc.url, shifted, seconds, {
          prefix: `8${r}${i}`,
          mark: (at) => marks.set(at, sample(svc.pid)),
        });
        const [m0, m1, m2] = (['idle', 'busy', 'end'] as const).map((k) => marks.get(k) as Sample);
        const ratio = busy.p99 / idle.p99;
        results.get(v.name)?.push(ratio);
        console.log(
          `round ${r} ${v.name}: idle p50 ${idle.p50.toFixed(1)} p99 ${idle.p99.toFixed(1)} ms; ` +
            `busy p50 ${busy.p50.toFixed(1)} p99 ${busy.p99.toFixed(1)} max ${busy.max.toFixed(0)} ms; ` +
            `ratio ${ratio.toFixed(2)}; ${pushed} records pushed` +
            (busy.failed + idle.failed > 0 ? `; FAILED ${busy.failed + idle.failed}` : '') +
            `\n  idle: ${usage(m0 as Sample, m1 as Sample)}\n  busy: ${usage(m1 as Sample, m2 as Sample)}`,
        );
      } finally {
        await svc.stop();
      }
    }
  }
  for (const [name, ratios] of results) {
    const sorted = [...ratios].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
    console.log(
      `${name}: busy p99 ÷ idle p99 per round ${ratios.map((x) => x.toFixed(2)).join(', ')}; median ${median.toFixed(2)}`,
    );
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
