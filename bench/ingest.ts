import { DEFAULT_CONCURRENCY } from '../src/client/push-runner.js';
import type { IngestBatch } from './data.js';
import { cpuSeconds, rssMeter, type Server } from './proc.js';
import type { Row } from './table.js';

/**
 * Pushes one batch and checks it was accepted whole; returns records per second. A `503` (on
 * SQLite, a batch that waited out `MDS_SQLITE_BUSY_TIMEOUT_MS` for the other worker's write lock
 * on a loaded machine) is retried after its `Retry-After`, as `mds push` retries it: the time
 * counts, the retry is logged.
 */
export async function pushOne(url: string, key: string, b: IngestBatch): Promise<number> {
  const t = performance.now();
  for (let attempt = 1; ; attempt++) {
    const r = await fetch(`${url}/api/v1/upstream/ingest/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'UP-API-KEY': key },
      body: b.body,
    });
    const body = (await r.json()) as { status?: string; accepted?: number };
    if (r.status === 503 && attempt < 5) {
      const wait = Number(r.headers.get('retry-after') ?? '1');
      process.stderr.write(`[bench] ingest: 503 ${JSON.stringify(body)}: retried after ${wait} s\n`);
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      continue;
    }
    if (r.status !== 200 || body.status !== 'accepted' || body.accepted !== b.rows.length) {
      throw new Error(`ingest: HTTP ${r.status} ${JSON.stringify(body).slice(0, 500)}`);
    }
    return b.rows.length / ((performance.now() - t) / 1000);
  }
}

/**
 * Pushes the batches, `inFlight` at a time (1: one after another). `mds push` sends two at once
 * when no key is in two batches (src/client/push-runner.ts), so one batch's parsing overlaps
 * another's write; the bench's shapes never repeat a key, so either order applies the same rows.
 */
export async function pushBatches(
  url: string,
  key: string,
  batches: readonly IngestBatch[],
  inFlight = 1,
): Promise<number> {
  // One warm-up push of the first batch's first rows is not needed: every batch is new data,
  // and the first includes JIT warm-up as a real client's first push would.
  const t = performance.now();
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let b = batches[next++]; b; b = batches[next++]) await pushOne(url, key, b);
  };
  await Promise.all(Array.from({ length: Math.max(1, inFlight) }, lane));
  const n = batches.reduce((sum, b) => sum + b.rows.length, 0);
  return n / ((performance.now() - t) / 1000);
}

/**
 * The service's line of an ingest phase: the batches pushed end to end, its peak RSS, and its
 * rate against the raw ceiling of the same run (goal: at least `goal` × the ceiling).
 */
export async function serviceIngestRow(
  phase: string,
  svc: Server,
  key: string,
  batches: readonly IngestBatch[],
  ceiling: number,
  goal: number,
  inFlight = DEFAULT_CONCURRENCY,
): Promise<Row> {
  const meter = rssMeter(svc.pid);
  const cpu0 = cpuSeconds(svc.pid);
  const rate = await pushBatches(svc.url, key, batches, inFlight);
  const records = batches.reduce((n, b) => n + b.rows.length, 0);
  // Per record: steadier than the rate on a shared machine.
  const cpuMs = ((cpuSeconds(svc.pid) - cpu0) * 1000) / records;
  const rssMb = meter.stop();
  return {
    phase,
    server: `${svc.name} over HTTP (end to end, ${inFlight === 1 ? 'one batch at a time' : `${inFlight} in flight as mds push sends them`})`,
    rate,
    unit: 'rec/s',
    rssMb,
    cpuMs,
    ratio: rate / ceiling,
    vs: 'raw ceiling',
    goal: `≥ ${goal}× raw ceiling`,
    met: rate >= goal * ceiling,
  };
}

/**
 * Seconds the service spent per batch step so far (`mds_batch_step_seconds_sum` in /metrics,
 * summed over its processes); null when the build has no such metric.
 */
export async function stepProfile(url: string): Promise<Map<string, number> | null> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^mds_batch_step_seconds_sum\{step="([a-z_]+)"\} (\S+)$/gm)) {
    out.set(m[1] as string, Number(m[2]));
  }
  return out.size > 0 || text.includes('mds_batch_step_seconds') ? out : null;
}

/**
 * The profile of an ingest phase's batches: µs per record of each step (the difference of two
 * stepProfile readings), as one note row.
 */
export function stepRows(
  phase: string,
  before: Map<string, number> | null,
  after: Map<string, number> | null,
  records: number,
): Row[] {
  if (!after) return [];
  const parts = [...after]
    .map(([step, s]) => [step, ((s - (before?.get(step) ?? 0)) * 1e6) / records] as const)
    .filter(([, us]) => us > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = parts.reduce((n, [, us]) => n + us, 0);
  const text = parts.map(([step, us]) => `${step} ${us.toFixed(1)}`).join(', ');
  return [
    {
      phase,
      server: `where a batch's time went, µs per record (${total.toFixed(1)} in all): ${text}`,
      rate: null,
    },
  ];
}
