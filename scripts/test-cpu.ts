// `MDS_TEST_CPU_REPORT=<file> npm run test:unit`: where the suite's CPU goes (issue 26), per test
// file and in the shared servers. Each file's process appends its own CPU and that of the
// children it waited for (scripts/file-cpu-preload.mjs); meanwhile this samples the PostgreSQL
// backends of the test server every half second and charges each to the file whose process (or
// a descendant) made the database it serves (createTestDatabase names it after the process id).
// PostgreSQL's and Redis's totals come from their own CPU counters. Linux only (/proc).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';

const TICKS = 100; // USER_HZ on Linux
const SAMPLE_MS = 500;

interface Stat {
  ppid: number;
  /** Own CPU, seconds. */
  cpu: number;
  /** CPU of the children it waited for, seconds. */
  reaped: number;
  start: string;
}

function readStat(pid: number): Stat | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // gone since the listing
  }
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    ppid: Number(f[1]),
    cpu: (Number(f[11]) + Number(f[12])) / TICKS,
    reaped: (Number(f[13]) + Number(f[14])) / TICKS,
    start: f[19] ?? '',
  };
}

function pids(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

async function postmasterPid(): Promise<number | null> {
  const client = new pg.Client({
    connectionString: process.env.MDS_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  });
  try {
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return readStat(rows[0]?.pid ?? 0)?.ppid ?? null;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

async function redisPid(): Promise<number | null> {
  const r = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    const info = await r.info('server');
    const m = /process_id:(\d+)/.exec(info);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  } finally {
    r.disconnect();
  }
}

/** Own plus reaped CPU of a server and of its long-lived children (PostgreSQL's auxiliary processes). */
function serverCpu(pid: number | null, all: number[]): number {
  if (pid === null) return 0;
  const s = readStat(pid);
  if (s === null) return 0;
  let cpu = s.cpu + s.reaped;
  for (const p of all) {
    const c = readStat(p);
    if (c?.ppid === pid) cpu += c.cpu;
  }
  return cpu;
}

export interface CpuSampler {
  /** Stops sampling and prints the table. */
  finish(): Promise<void>;
}

/** Samples until finish(); `report` is the file the test processes append to (the caller empties it). */
export async function startCpuSampler(report: string): Promise<CpuSampler> {
  const started = Date.now();
  const load0 = os.loadavg();
  const [pm, rd] = await Promise.all([postmasterPid(), redisPid()]);
  const all0 = pids();
  const pg0 = serverCpu(pm, all0);
  const redis0 = serverCpu(rd, all0);
  const parent = new Map<number, number>();
  /** Backend (pid:start) -> its database and the CPU last seen. */
  const backends = new Map<string, { db: string; cpu: number }>();
  const dbNames = new Map<number, string>();
  const sample = (): void => {
    for (const p of pids()) {
      const s = readStat(p);
      if (s === null) continue;
      parent.set(p, s.ppid);
      if (pm === null || s.ppid !== pm) continue;
      let db = dbNames.get(p);
      if (db === undefined) {
        // "postgres: 15/main: <user> <database> <client> <state>"; auxiliary processes have no client.
        const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
        const m = /: \S+ (\S+) [\d.:[\]]+\(\d+\)/.exec(cmd);
        if (!m?.[1]) continue;
        db = m[1];
        dbNames.set(p, db);
      }
      const key = `${p}:${s.start}`;
      const b = backends.get(key);
      if (b === undefined) backends.set(key, { db, cpu: s.cpu });
      else b.cpu = Math.max(b.cpu, s.cpu);
    }
  };
  const timer = setInterval(() => {
    try {
      sample();
    } catch {
      // a process gone between listing and reading
    }
  }, SAMPLE_MS);
  return {
    async finish() {
      clearInterval(timer);
      sample();
      const all1 = pids();
      const pgTotal = serverCpu(pm, all1) - pg0;
      const redisTotal = serverCpu(rd, all1) - redis0;
      const lines = fs
        .readFileSync(report, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as { event: string; pid: number; file: string; self?: number; children?: number },
        );
      const filePid = new Map<number, string>();
      const rows = new Map<string, { proc: number; pg: number }>();
      for (const l of lines) {
        if (l.file === undefined) continue; // a worker thread of a file's process (before the preload skipped them)
        const file = path.relative(process.cwd(), l.file);
        if (l.event === 'start') filePid.set(l.pid, file);
        const row = rows.get(file) ?? { proc: 0, pg: 0 };
        if (l.event === 'exit') row.proc = (l.self ?? 0) + (l.children ?? 0);
        rows.set(file, row);
      }
      const owner = (pid: number): string | undefined => {
        for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 50; hops++) {
          const f = filePid.get(p);
          if (f !== undefined) return f;
          p = parent.get(p);
        }
        return undefined;
      };
      let attributed = 0;
      const unattributed = new Map<string, number>();
      for (const { db, cpu } of backends.values()) {
        const m = /_(\d+)_[0-9a-f]{8}$/.exec(db);
        const file = m ? owner(Number(m[1])) : undefined;
        const row = file === undefined ? undefined : rows.get(file);
        if (row === undefined) {
          const k = m ? '(a test database of no file seen)' : db;
          unattributed.set(k, (unattributed.get(k) ?? 0) + cpu);
          continue;
        }
        row.pg += cpu;
        attributed += cpu;
      }
      fs.writeFileSync(`${report}.backends.json`, JSON.stringify([...backends.values()]));
      const sorted = [...rows].sort((a, b) => b[1].proc + b[1].pg - (a[1].proc + a[1].pg));
      const sum = sorted.reduce((s, [, r]) => s + r.proc, 0);
      const w = Math.max(...sorted.map(([f]) => f.length), 4);
      const out = [
        `# CPU per file (s; process = the file's process and the children it waited for; PostgreSQL = the backends of its databases):`,
        `# ${'file'.padEnd(w)}  process  PostgreSQL    total`,
        ...sorted.map(
          ([f, r]) =>
            `# ${f.padEnd(w)} ${r.proc.toFixed(1).padStart(8)} ${r.pg.toFixed(1).padStart(11)} ${(r.proc + r.pg).toFixed(1).padStart(8)}`,
        ),
        `# files: ${sum.toFixed(1)} s; PostgreSQL server ${pgTotal.toFixed(1)} s (backends charged to files ${attributed.toFixed(1)} s; others: ${[
          ...unattributed,
        ]
          .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
          .join(
            ', ',
          )}); Redis ${redisTotal.toFixed(1)} s; runner and sampler ${(process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6).toFixed(1)} s`,
        `# wall ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${load0.map((x) => x.toFixed(1)).join(' ')} -> ${os
          .loadavg()
          .map((x) => x.toFixed(1))
          .join(' ')}`,
      ];
      console.log(out.join('\n'));
    },
  };
}
