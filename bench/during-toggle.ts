import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CFG, DATA_DIR, log, startService } from './context.js';
import { buildQueryDatabase } from './data.js';
import type { ProbeStats } from './load.js';
import { randomPaths } from './measure.js';
import { pacedIdleThenBusy } from './phases/during-ingest.js';

/**
 * One service, its ingest threads' nice value switched between A and B every `periodMs` while
 * the `during` phase's paced pages run (idle, then under back-to-back pushes). Each request
 * counts under the value in force when it was sent, so both values see the same machine at the
 * same moments: on a machine shared with other work, runs minutes apart are not comparable.
 * The idle part is the control (no batch is written: A and B should not differ).
 * Linux, as root (or with CAP_SYS_NICE): going back from B to A raises a thread's priority.
 *
 *   npx tsx bench/during-toggle.ts [seconds=20] [niceA=0] [niceB=10] [periodMs=1000]
 */
const [seconds = 20, niceA = 0, niceB = 10, periodMs = 1000] = process.argv.slice(2).map(Number);
if (!(niceB > niceA)) throw new Error('niceB must be above niceA (the threads are found by it)');

const niceOf = (pid: number, tid: string): number => {
  const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
};

function summary(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return `n ${s.length} p50 ${at(0.5).toFixed(1)} p99 ${at(0.99).toFixed(1)} max ${(s[s.length - 1] ?? NaN).toFixed(0)} ms`;
}

const file = await buildQueryDatabase(DATA_DIR, CFG.codes, CFG.days, false, log);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-during-toggle-'));
try {
  const copy = path.join(dir, 'service.db');
  fs.copyFileSync(file, copy);
  const svc = await startService(copy, undefined, { MDS_INGEST_NICE: String(niceB) });
  try {
    const base = niceOf(svc.pid, String(svc.pid));
    let tids: number[] = [];
    for (let tries = 0; tids.length === 0 && tries < 100; tries++) {
      tids = fs
        .readdirSync(`/proc/${svc.pid}/task`)
        .filter((t) => niceOf(svc.pid, t) === Math.min(19, base + niceB))
        .map(Number);
      if (tids.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    if (tids.length === 0) throw new Error('no ingest thread found at the lower priority');
    log(
      `ingest threads ${tids.join(', ')}; switching between nice ${niceA} and ${niceB} every ${periodMs} ms`,
    );

    // [epoch ms, nice from then on]
    const flips: [number, number][] = [];
    let current = niceB;
    const flip = (): void => {
      current = current === niceA ? niceB : niceA;
      for (const tid of tids) os.setPriority(tid, Math.min(19, base + current));
      flips.push([performance.timeOrigin + performance.now(), current]);
    };
    flip();
    const timer = setInterval(flip, periodMs);
    let result;
    try {
      result = await pacedIdleThenBusy(svc.url, randomPaths(200_000, 777), seconds, { samples: true });
    } finally {
      clearInterval(timer);
    }
    const niceAt = (t: number): number | null => {
      let v: number | null = null;
      for (const [at, n] of flips) if (at <= t) v = n;
      return v;
    };
    const byNice = (p: ProbeStats): Map<number, number[]> => {
      const m = new Map<number, number[]>([
        [niceA, []],
        [niceB, []],
      ]);
      for (const [t, ms] of p.samples ?? []) {
        const n = niceAt(t);
        if (n !== null) m.get(n)?.push(ms);
      }
      return m;
    };
    const idle = byNice(result.idle);
    const busy = byNice(result.busy);
    console.log(
      `${result.pushed} records pushed while busy; failed requests ${result.idle.failed + result.busy.failed}`,
    );
    for (const n of [niceA, niceB]) {
      console.log(`nice ${n}: idle ${summary(idle.get(n) ?? [])}; busy ${summary(busy.get(n) ?? [])}`);
    }
    const p99 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(0.99 * xs.length)] ?? NaN;
    const idleAll = p99([...(idle.get(niceA) ?? []), ...(idle.get(niceB) ?? [])]);
    for (const n of [niceA, niceB]) {
      console.log(
        `nice ${n}: busy p99 ÷ idle p99 (both halves) ${(p99(busy.get(n) ?? []) / idleAll).toFixed(2)}`,
      );
    }
  } finally {
    await svc.stop();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
