import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, cpuSeconds, tsxArgs } from './proc.js';
import type { Row } from './table.js';

/**
 * The load generator: wrk (C, one thread per core it is given) when it can be had, else
 * autocannon in its own Node process. autocannon saturates before a fast route does (measured:
 * 12,600 req/s against 28,800 with wrk on the same pre-serialised route), which flattered every
 * ratio to a ceiling; the table says which generator ran and flags runs it limited.
 */
export interface LoadSpec {
  url: string;
  /** Requests take the paths in order (a repeat could be answered by the response cache). */
  paths: string[];
  headers: Record<string, string>;
  connections: number;
  durationSec: number;
}

export interface LoadResult {
  rps: number;
  /** ms */
  p50: number;
  /** ms */
  p99: number;
  requests: number;
  statuses: Record<string, number>;
  errors: number;
  generator: 'wrk' | 'autocannon';
  /** CPU the generator used, in cores (1 = one core busy the whole run). */
  generatorCpu: number;
}

/** wrk threads: one; the server under test gets the other core of a 2-core machine. */
const WRK_THREADS = 1;

let wrkPath: string | null | undefined;

/**
 * wrk's path, installing it from the system's packages when missing and allowed (root, apt-get,
 * BENCH_NO_INSTALL unset); null when it cannot be had (autocannon is used, and the table says so).
 */
export function ensureWrk(log: (s: string) => void = () => {}): string | null {
  if (wrkPath !== undefined) return wrkPath;
  const which = (): string | null => {
    const r = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
    return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : null;
  };
  wrkPath = process.env.BENCH_LOAD === 'autocannon' ? null : which();
  if (
    wrkPath === null &&
    process.env.BENCH_LOAD !== 'autocannon' &&
    process.env.BENCH_NO_INSTALL !== '1' &&
    process.getuid?.() === 0
  ) {
    log('wrk not found: installing it with apt-get (BENCH_NO_INSTALL=1 to skip)');
    const r = spawnSync(
      'sh',
      ['-c', 'apt-get install -y -qq wrk || (apt-get update -qq && apt-get install -y -qq wrk)'],
      { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } },
    );
    if (r.status !== 0) log(`apt-get install wrk failed: ${(r.stderr || r.stdout).slice(-400)}`);
    wrkPath = which();
  }
  if (wrkPath === null) log('wrk unavailable: falling back to autocannon (the table says so)');
  return wrkPath;
}

export function loadGeneratorName(): string {
  return ensureWrk()
    ? `wrk (${WRK_THREADS} thread, own process)`
    : 'autocannon 8 (own process; wrk unavailable)';
}

/** A generator using ≥ 90% of the cores it was given was the limit, not the server. */
export function generatorBound(r: LoadResult): boolean {
  return r.generatorCpu >= 0.9 * (r.generator === 'wrk' ? WRK_THREADS : 1);
}

const luaString = (s: string): string => JSON.stringify(s);

/** A wrk script: headers, the path list read once per thread, and a JSON summary. */
function wrkScript(pathsFile: string | null, headers: Record<string, string>): string {
  const lines = Object.entries(headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`);
  if (pathsFile) {
    lines.push(
      'local paths = {}',
      'local i = 0',
      `for line in io.lines(${luaString(pathsFile)}) do paths[#paths + 1] = line end`,
      'request = function()',
      '  i = i + 1',
      '  if i > #paths then i = 1 end',
      '  return wrk.format("GET", paths[i])',
      'end',
    );
  }
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'\\nWRKJSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\\n\',',
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),',
    '    e.status, e.connect, e.read, e.write, e.timeout))',
    'end',
  );
  return lines.join('\n') + '\n';
}

interface WrkSummary {
  requests: number;
  duration_us: number;
  p50_us: number;
  p99_us: number;
  status: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
}

/** Runs a generator process to its end: its stdout, exit code and the CPU it used (seconds). */
async function runGenerator(
  command: string,
  args: string[],
  opts: { cwd?: string } = {},
): Promise<{ code: number | null; out: string; cpu: number }> {
  const child = spawn(command, args, { ...opts, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  // Sampled until it exits (the last < 200 ms are not counted).
  let cpu = 0;
  const timer = setInterval(() => {
    const c = cpuSeconds(child.pid as number);
    if (c > 0) cpu = c;
  }, 200);
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  clearInterval(timer);
  return { code, out, cpu };
}

async function runWrk(bin: string, spec: LoadSpec): Promise<LoadResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-wrk-'));
  try {
    const single = spec.paths.length === 1;
    let pathsFile: string | null = null;
    if (!single) {
      pathsFile = path.join(dir, 'paths.txt');
      fs.writeFileSync(pathsFile, spec.paths.join('\n') + '\n');
    }
    const script = path.join(dir, 'load.lua');
    fs.writeFileSync(script, wrkScript(pathsFile, spec.headers));
    const target = single ? spec.url + (spec.paths[0] as string) : spec.url;
    const { code, out, cpu } = await runGenerator(bin, [
      `-t${WRK_THREADS}`,
      `-c${spec.connections}`,
      `-d${Math.max(1, Math.round(spec.durationSec))}s`,
      '--timeout',
      '10s',
      '-s',
      script,
      target,
    ]);
    const line = out.split('\n').find((l) => l.startsWith('WRKJSON '));
    if (code !== 0 || !line) throw new Error(`wrk failed (${code}): ${out.slice(-500)}`);
    const s = JSON.parse(line.slice('WRKJSON '.length)) as WrkSummary;
    const seconds = s.duration_us / 1e6;
    return {
      rps: s.requests / seconds,
      p50: s.p50_us / 1000,
      p99: s.p99_us / 1000,
      requests: s.requests,
      // wrk counts answers ≥ 400 as status errors; 2xx and 3xx are not told apart.
      statuses: { '2xx': s.requests - s.status, '4xx+5xx': s.status },
      errors: s.connect + s.read + s.write + s.timeout,
      generator: 'wrk',
      generatorCpu: cpu / seconds,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const file = path.join(os.tmpdir(), `mds-bench-load-${process.pid}-${Date.now()}.json`);
  fs.writeFileSync(file, JSON.stringify(spec));
  try {
    const { code, out, cpu } = await runGenerator(process.execPath, tsxArgs('load-autocannon.ts', file), {
      cwd: ROOT,
    });
    if (code !== 0) throw new Error(`load generator failed (${code})`);
    const r = JSON.parse(out.trim().split('\n').pop() as string) as Omit<
      LoadResult,
      'generator' | 'generatorCpu'
    >;
    return { ...r, generator: 'autocannon', generatorCpu: cpu / spec.durationSec };
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** Runs the load generator in its own process and returns its figures. */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const bin = ensureWrk();
  return bin ? runWrk(bin, spec) : runAutocannon(spec);
}

/** A latency probe's plan (bench/probe.ts). */
export interface ProbeSpec {
  url: string;
  headers: Record<string, string>;
  /** Each stream sends one request every `everyMs`, taking its paths in order. */
  streams: { name: string; paths: string[]; everyMs: number; clients: number }[];
  /** Stop by itself after this long (0: only on SIGTERM). */
  durationSec: number;
  /** Also return every request's scheduled time and latency (ProbeStats.samples). */
  samples?: boolean;
  /**
   * A fresh connection per request (no keep-alive): in a cluster each one may go to another
   * worker, so every worker is measured, not just the one a kept connection sticks to.
   */
  fresh?: boolean;
  /** Per stream name: headers instead of `headers` (another key). */
  streamHeaders?: Record<string, Record<string, string>>;
}

export interface ProbeStats {
  n: number;
  p50: number;
  p99: number;
  max: number;
  /** Answers other than 200. */
  failed: number;
  /** With ProbeSpec.samples: [scheduled send time (ms since the epoch), latency ms] per request. */
  samples?: [number, number][];
}

/**
 * `/health` and one page, each every `everyMs`, on a fresh connection per request (so every
 * worker is measured), as `key`: the probe of the freeze and minuteduring phases.
 */
export function startHealthAndPageProbe(
  url: string,
  key: string,
  page: string,
  everyMs: number,
): ReturnType<typeof startProbe> {
  return startProbe({
    url,
    headers: { 'Q-API-KEY': key },
    streams: [
      { name: 'health', paths: ['/health'], everyMs, clients: 1 },
      { name: 'page', paths: [page], everyMs, clients: 1 },
    ],
    durationSec: 0,
    fresh: true,
  });
}

/** One probe's figures as a row of the table, against the goal max ≤ 250 ms with no failure. */
export function probeRow(phase: string, what: string, s: ProbeStats, detail: string): Row {
  return {
    phase,
    server: `${what}: n ${s.n}, failed ${s.failed}, max ${s.max.toFixed(0)} ms; ${detail}`,
    rate: null,
    p50: s.p50,
    p99: s.p99,
    goal: 'max ≤ 250 ms',
    met: s.max <= 250 && s.failed === 0,
  };
}

/** A running latency probe (bench/probe.ts); `stop()` ends it and returns its figures. */
export function startProbe(spec: ProbeSpec): {
  stop(): Promise<Record<string, ProbeStats>>;
  done: Promise<Record<string, ProbeStats>>;
} {
  const file = path.join(os.tmpdir(), `mds-bench-probe-${process.pid}-${Date.now()}.json`);
  fs.writeFileSync(file, JSON.stringify(spec));
  const child = spawn(process.execPath, tsxArgs('probe.ts', file), {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const done = new Promise<Record<string, ProbeStats>>((resolve, reject) => {
    child.once('exit', (code) => {
      fs.rmSync(file, { force: true });
      const line = out.trim().split('\n').pop();
      if (code !== 0 || !line) reject(new Error(`probe failed (${code}): ${out.slice(-300)}`));
      else resolve(JSON.parse(line) as Record<string, ProbeStats>);
    });
  });
  return {
    done,
    stop: async () => {
      child.kill('SIGTERM');
      return done;
    },
  };
}
