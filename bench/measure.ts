import { code, tradingDays, yearAfter } from './data.js';
import { CFG, CONNECTIONS, QUERY_KEY, ROUNDS, log } from './context.js';
import { generatorBound, runLoad, type LoadResult } from './load.js';
import { cpuSeconds, rssMeter, type Server } from './proc.js';
import type { Row } from './table.js';

/** Load rounds against servers, and the table rows they give. */

/** One-year windows of random codes: the random pages every query server is loaded with. */
export function randomPaths(n: number, seed: number): string[] {
  const days = tradingDays(CFG.days);
  const out: string[] = [];
  let s = seed;
  const rand = (k: number): number => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s % k;
  };
  for (let i = 0; i < n; i++) {
    const from = days[rand(days.length - 260)] as string;
    const to = yearAfter(from);
    out.push(
      `/api/v1/etf/kline?code=${code(rand(CFG.codes))}&date_from=${from}&date_to=${to}&limit=100&offset=${rand(2) * 100}`,
    );
  }
  return out;
}

export const REPEATED = `/api/v1/etf/kline?code=${code(7)}&date_from=2017-03-01&date_to=2018-02-28&limit=100`;
export const AUTH = { 'Q-API-KEY': QUERY_KEY };

export interface Measured {
  load: LoadResult;
  /** Peak RSS of all the server's processes. */
  rssMb: number;
  /** Peak RSS of its largest process (a cluster worker; the per-process goal). */
  largestMb: number;
  /** CPU time of the server (all its processes) per request, ms: robust to a busy machine. */
  cpuMs: number;
}

export interface Load {
  server: Server;
  paths: string[];
  headers?: Record<string, string>;
  warmPaths?: string[];
}

/**
 * Loads several servers in alternating rounds (A B C, A B C, …) of CFG.durationSec / ROUNDS
 * seconds each, so that a busy spell of this shared machine falls on all of them alike; each
 * server gets CFG.durationSec of load in all. Rates are summed over the rounds, p50 is the mean
 * of the rounds' p50, p99 the worst round's; the generator's CPU is the rounds' highest.
 */
export async function measureTogether(loads: Load[]): Promise<Measured[]> {
  // A short warm-up (JIT, page cache) outside the measured window, on other paths.
  for (const l of loads) {
    await runLoad({
      url: l.server.url,
      paths: l.warmPaths ?? l.paths,
      headers: l.headers ?? {},
      connections: CONNECTIONS,
      durationSec: 1,
    });
  }
  const meters = loads.map((l) => rssMeter(l.server.pid));
  const cpu = loads.map(() => 0);
  const results: LoadResult[][] = loads.map(() => []);
  const seconds = CFG.durationSec / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, l] of loads.entries()) {
      const before = cpuSeconds(l.server.pid);
      // Each round starts further down the path list, so no page repeats across rounds.
      const start = Math.min(round * 150_000, Math.max(0, l.paths.length - 1));
      const r = await runLoad({
        url: l.server.url,
        paths: l.paths.slice(start),
        headers: l.headers ?? {},
        connections: CONNECTIONS,
        durationSec: seconds,
      });
      cpu[i]! += cpuSeconds(l.server.pid) - before;
      results[i]!.push(r);
    }
  }
  return loads.map((l, i) => {
    const rs = results[i]!;
    const requests = rs.reduce((n, r) => n + r.requests, 0);
    const statuses: Record<string, number> = {};
    for (const r of rs) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
    const load: LoadResult = {
      rps: requests / CFG.durationSec,
      p50: rs.reduce((n, r) => n + r.p50, 0) / rs.length,
      p99: Math.max(...rs.map((r) => r.p99)),
      requests,
      statuses,
      errors: rs.reduce((n, r) => n + r.errors, 0),
      generator: rs[0]!.generator,
      generatorCpu: Math.max(...rs.map((r) => r.generatorCpu)),
    };
    const rssMb = meters[i]!.stop();
    const largestMb = meters[i]!.largest();
    const cpuMs = (cpu[i]! * 1000) / Math.max(1, requests);
    const ok = (statuses['2xx'] ?? 0) + (statuses['3xx'] ?? 0);
    if (ok < requests * 0.99 || load.errors > 0) {
      throw new Error(
        `${l.server.name}: ${JSON.stringify(statuses)}, ${load.errors} errors — not a valid run`,
      );
    }
    log(
      `${l.server.name}: ${load.rps.toFixed(0)} req/s p50 ${load.p50.toFixed(1)} ms p99 ${load.p99.toFixed(1)} ms rss ${rssMb.toFixed(0)} MB cpu ${cpuMs.toFixed(3)} ms/req; ${load.generator} ${load.generatorCpu.toFixed(2)} cores`,
    );
    return { load, rssMb, largestMb, cpuMs };
  });
}

export async function measure(
  server: Server,
  paths: string[],
  headers: Record<string, string> = {},
  warmPaths: string[] = paths,
): Promise<Measured> {
  return (await measureTogether([{ server, paths, headers, warmPaths }]))[0]!;
}

export const queryRow = (phase: string, server: string, m: Measured, extra: Partial<Row> = {}): Row => ({
  phase,
  server,
  rate: m.load.rps,
  unit: 'req/s',
  p50: m.load.p50,
  p99: m.load.p99,
  rssMb: m.rssMb,
  cpuMs: m.cpuMs,
  genCpu: m.load.generatorCpu,
  genBound: generatorBound(m.load),
  ...extra,
});

/**
 * Median wall time (ms) of sequential requests, one distinct URL each (`path(i)`), so the
 * response cache never answers: this measures the database path.
 */
export async function medianMs(
  server: Server,
  path: (i: number) => string,
  runs: number,
): Promise<{ ms: number; bodies: unknown[] }> {
  const times: number[] = [];
  const bodies: unknown[] = [];
  for (let i = 0; i < runs; i++) {
    const p = path(i);
    const t = performance.now();
    const r = await fetch(server.url + p, { headers: AUTH });
    const body = await r.json();
    if (r.status !== 200) throw new Error(`${p}: ${r.status} ${JSON.stringify(body)}`);
    times.push(performance.now() - t);
    bodies.push(body);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)] as number, bodies };
}
