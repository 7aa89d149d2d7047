import http from 'node:http';
import fs from 'node:fs';
import type { ProbeSpec, ProbeStats } from './load.js';

/**
 * Latency probes, run as their own process so a busy server cannot hide behind the bench's own
 * event loop. Open loop: each request is sent at its scheduled time whether or not earlier ones
 * have answered, and its latency counts from that time (no coordinated omission).
 *
 *   probe.ts <spec.json>   spec: ProbeSpec; stops on SIGTERM (or after durationSec), then prints
 *                          one JSON line: { [name]: { n, p50, p99, max, failed } } in ms
 *                          (and `samples` when the spec asks for them).
 */
const spec = JSON.parse(fs.readFileSync(process.argv[2] as string, 'utf8')) as ProbeSpec;
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const latencies = new Map<string, number[]>();
const samples = new Map<string, [number, number][]>();
const failures = new Map<string, number>();
const pending = new Set<Promise<void>>();
let stopping = false;

function get(name: string, path: string, scheduled: number): void {
  const p = new Promise<void>((resolve) => {
    const headers = spec.streamHeaders?.[name] ?? spec.headers;
    const options = spec.fresh
      ? { agent: false as const, headers: { ...headers, connection: 'close' } }
      : { agent, headers };
    const req = http.get(spec.url + path, options, (res) => {
      res.resume();
      res.on('end', () => {
        const ms = performance.now() - scheduled;
        latencies.get(name)!.push(ms);
        if (spec.samples) samples.get(name)!.push([performance.timeOrigin + scheduled, ms]);
        if (res.statusCode !== 200) failures.set(name, (failures.get(name) ?? 0) + 1);
        resolve();
      });
    });
    req.on('error', () => {
      failures.set(name, (failures.get(name) ?? 0) + 1);
      resolve();
    });
  });
  pending.add(p);
  void p.then(() => pending.delete(p));
}

const start = performance.now();
const timers: NodeJS.Timeout[] = [];
for (const s of spec.streams) {
  latencies.set(s.name, []);
  samples.set(s.name, []);
  for (let c = 0; c < s.clients; c++) {
    let k = 0;
    // Clients of one stream are spread evenly over the period.
    const first = start + (s.everyMs * c) / s.clients;
    const tick = (): void => {
      if (stopping) return;
      const scheduled = first + k * s.everyMs;
      get(s.name, s.paths[(k * s.clients + c) % s.paths.length] as string, scheduled);
      k++;
      timers.push(setTimeout(tick, Math.max(0, first + k * s.everyMs - performance.now())));
    };
    timers.push(setTimeout(tick, Math.max(0, first - performance.now())));
  }
}

function stats(xs: number[]): Omit<ProbeStats, 'failed' | 'samples'> {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { n: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1] ?? 0 };
}

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  for (const t of timers) clearTimeout(t);
  // Requests still out count too (a stalled one is the point), until they answer or 60 s.
  await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, 60_000))]);
  const out: Record<string, ProbeStats> = {};
  for (const [name, xs] of latencies) {
    out[name] = {
      ...stats(xs),
      failed: failures.get(name) ?? 0,
      ...(spec.samples ? { samples: samples.get(name) } : {}),
    };
  }
  agent.destroy();
  // Exit once written: a long line (samples) to a pipe is written in parts.
  process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(0));
}

process.on('SIGTERM', () => void stop());
if (spec.durationSec > 0) setTimeout(() => void stop(), spec.durationSec * 1000);
