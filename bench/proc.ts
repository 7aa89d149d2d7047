import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Child processes of the bench: servers, the load generator, and their memory. */

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(BENCH_DIR, '..');
const TSX = ['--import', 'tsx'];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Server {
  name: string;
  pid: number;
  port: number;
  url: string;
  stop(): Promise<void>;
}

async function waitFor(
  url: string,
  child: ChildProcess,
  log: () => string,
  timeoutMs = 120_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}):\n${log()}`);
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not ready at ${url}:\n${log()}`);
}

/** Starts `node <args>` with `env`, waits until `readyPath` answers below 500. */
export async function startServer(
  name: string,
  args: string[],
  env: Record<string, string>,
  port: number,
  readyPath: string,
): Promise<Server> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (b: Buffer): void => {
    output = (output + b.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url + readyPath, child, () => output);
  return {
    name,
    pid: child.pid as number,
    port,
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export const tsxArgs = (file: string, ...rest: string[]): string[] => [
  ...TSX,
  path.join(BENCH_DIR, file),
  ...rest,
];

function comm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** The process and all its descendants (cluster workers), by scanning /proc. */
export function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = parents.get(ppid) ?? [];
      list.push(Number(entry));
      parents.set(ppid, list);
    } catch {
      // the process ended while we looked
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    // tsx's esbuild helper is not part of the service.
    if (p !== root && comm(p) === 'esbuild') return;
    out.push(p);
    for (const c of parents.get(p) ?? []) walk(c);
  };
  walk(root);
  return out;
}

function statusKb(pid: number, field: string): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * Peak RSS per phase: resets each process's high-water mark (clear_refs 5, Linux ≥ 4.0) and also
 * samples VmRSS every 200 ms in case the reset is not allowed; `stop()` returns the
 * larger figure, in MB, summed over the process tree; `largest()`, after it, the largest single
 * process's peak (the per-process goals; a cluster's primary and idle workers are not the
 * process doing the work).
 */
export function rssMeter(root: number): { stop(): number; largest(): number } {
  // The process list is read once (a /proc scan costs CPU the servers should have); a cluster
  // forks its workers before it answers, so the list is complete by the time a phase starts.
  const pids = processTree(root);
  for (const p of pids) {
    try {
      fs.writeFileSync(`/proc/${p}/clear_refs`, '5');
    } catch {
      // sampling below still measures
    }
  }
  let sampled = 0;
  const each = new Map<number, number>();
  const sample = (): void => {
    let sum = 0;
    for (const p of pids) {
      const kb = statusKb(p, 'VmRSS');
      sum += kb;
      each.set(p, Math.max(each.get(p) ?? 0, kb));
    }
    sampled = Math.max(sampled, sum);
  };
  sample();
  const timer = setInterval(sample, 200);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      let hwm = 0;
      for (const p of pids) {
        const kb = statusKb(p, 'VmHWM');
        hwm += kb;
        each.set(p, Math.max(each.get(p) ?? 0, kb));
      }
      return Math.max(hwm, sampled) / 1024;
    },
    largest: () => Math.max(0, ...each.values()) / 1024,
  };
}

/** CPU seconds (user + system) of a stat file (a process's, or one thread's under task/). */
function statSeconds(file: string): number {
  try {
    const stat = fs.readFileSync(file, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), counted from the state field (3).
    return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return 0; // ended
  }
}

/** CPU seconds (user + system) used so far by the process tree, from /proc/<pid>/stat. */
export function cpuSeconds(root: number): number {
  return processTree(root).reduce((sum, p) => sum + statSeconds(`/proc/${p}/stat`), 0);
}

/**
 * CPU seconds used so far by the service's request threads: the main thread of each of its
 * processes (the supervisor, the workers), not their ingest or export encoding threads, nor the
 * SQLite reader processes (storage/sqlite/reader-process.ts).
 */
export function requestThreadSeconds(root: number): number {
  let sum = 0;
  for (const p of processTree(root)) {
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmd.includes('reader-process')) sum += statSeconds(`/proc/${p}/task/${p}/stat`);
  }
  return sum;
}
