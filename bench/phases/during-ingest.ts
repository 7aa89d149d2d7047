import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CFG, INGEST_KEY, QUERY_KEY, log, startService } from '../context.js';
import { ingestBatches, type IngestBatch } from '../data.js';
import { pushOne } from '../ingest.js';
import { startProbe, type ProbeStats } from '../load.js';
import { randomPaths } from '../measure.js';
import { rssMeter } from '../proc.js';
import type { Row } from '../table.js';

/** Paced random pages: 8 clients, one page each every 25 ms (320 req/s, far below capacity). */
const PACED = { clients: 8, everyMs: 25 };
/** Probes during the big push: a query and a /health every 20 ms. */
const PROBE_MS = 20;

/**
 * Queries during ingest (SQLite, default start-up settings, on a copy of the query data):
 * - the p99 of paced random pages while idle, then while 10k-record batches are pushed back
 *   to back (goal ≤ 3× idle);
 * - a query and a /health probe every 20 ms during one 100k-record push (goal: none waits
 *   more than 250 ms), and the whole service's peak RSS during that push.
 */
export async function duringIngestPhase(rows: Row[], file: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-during-'));
  try {
    const copy = path.join(dir, 'service.db');
    fs.copyFileSync(file, copy);
    const svc = await startService(copy, undefined);
    try {
      const paths = randomPaths(200_000, 777);
      const headers = { 'Q-API-KEY': QUERY_KEY };
      const { idle, busy, pushed } = await pacedIdleThenBusy(svc.url, paths, CFG.pacedSec);
      const phase = 'queries during ingest';
      rows.push({
        phase,
        server: `paced random pages, idle (${PACED.clients} clients × 1 per ${PACED.everyMs} ms)`,
        rate: idle.n / CFG.pacedSec,
        unit: 'req/s',
        p50: idle.p50,
        p99: idle.p99,
      });
      rows.push({
        phase,
        server: `paced random pages while 10k batches are pushed back to back (${pushed.toLocaleString('en')} records)`,
        rate: busy.n / CFG.pacedSec,
        unit: 'req/s',
        p50: busy.p50,
        p99: busy.p99,
        ratio: busy.p99 / idle.p99,
        vs: 'idle p99',
        goal: 'p99 ≤ 3× idle p99',
        met: busy.p99 <= 3 * idle.p99 && busy.failed === 0,
      });

      const big = ingestBatches('99', 1, CFG.bigBatch)[0]!;
      const probe = startProbe({
        url: svc.url,
        headers,
        streams: [
          { name: 'query', paths: paths.slice(100_000), everyMs: PROBE_MS, clients: 1 },
          { name: 'health', paths: ['/health'], everyMs: PROBE_MS, clients: 1 },
        ],
        durationSec: 0,
      });
      await new Promise((r) => setTimeout(r, 300));
      const meter = rssMeter(svc.pid);
      const t = performance.now();
      await pushOne(svc.url, INGEST_KEY, big);
      const pushMs = performance.now() - t;
      const rss = meter.stop();
      await new Promise((r) => setTimeout(r, 200));
      const probes = await probe.stop();
      const label = `one ${CFG.bigBatch.toLocaleString('en')}-record push (${(pushMs / 1000).toFixed(1)} s)`;
      for (const name of ['query', 'health'] as const) {
        const s = probes[name] as ProbeStats;
        log(`${name} probe during ${label}: n ${s.n} p99 ${s.p99.toFixed(1)} max ${s.max.toFixed(0)} ms`);
        rows.push({
          phase,
          server: `${name === 'query' ? 'a query' : '/health'} every ${PROBE_MS} ms during ${label}`,
          rate: null,
          p50: s.p50,
          p99: s.p99,
          ...(name === 'query' ? { rssMb: rss } : {}),
          goal: `max ≤ 250 ms (max ${s.max.toFixed(0)} ms)`,
          met: s.max <= 250 && s.failed === 0,
        });
      }
    } finally {
      await svc.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface PacedResult {
  idle: ProbeStats;
  busy: ProbeStats;
  /** Records pushed while `busy` was measured. */
  pushed: number;
}

/**
 * The paced random pages (PACED) against the service at `url`: a 2 s warm-up (JIT, page
 * cache), `seconds` idle, then `seconds` while 10k-record batches are pushed back to back.
 * Also run alone, in alternating rounds per setting, by bench/during-ab.ts.
 */
export async function pacedIdleThenBusy(
  url: string,
  paths: string[],
  seconds: number,
  opts: {
    /** Starts the pushed records' codes and batch ids: new keys, new batches per call. */
    prefix?: string;
    /** Called as the idle and the busy measurement start, and when both are done. */
    mark?: (at: 'idle' | 'busy' | 'end') => void;
    /** Every request's send time and latency in the results (ProbeStats.samples). */
    samples?: boolean;
  } = {},
): Promise<PacedResult> {
  const { prefix = '9', mark = () => {}, samples = false } = opts;
  const headers = { 'Q-API-KEY': QUERY_KEY };
  const paced = (offset: number): ProbeSpecStream => ({
    name: 'page',
    paths: paths.slice(offset),
    everyMs: PACED.everyMs,
    clients: PACED.clients,
  });
  await startProbe({ url, headers, streams: [paced(150_000)], durationSec: 2 }).done;
  mark('idle');
  const idle = (await startProbe({ url, headers, streams: [paced(0)], durationSec: seconds, samples }).done)
    .page as ProbeStats;
  log(
    `paced pages idle: p50 ${idle.p50.toFixed(1)} p99 ${idle.p99.toFixed(1)} max ${idle.max.toFixed(0)} ms`,
  );

  const perBatch = 10_000;
  let supply: IngestBatch[] = ingestBatches(`${prefix}1`, Math.ceil(seconds * 4), perBatch);
  mark('busy');
  const busyProbe = startProbe({ url, headers, streams: [paced(50_000)], durationSec: seconds, samples });
  let pushing = true;
  let pushed = 0;
  void busyProbe.done.finally(() => (pushing = false));
  let round = 0;
  while (pushing) {
    const b = supply.shift();
    if (!b) {
      supply = ingestBatches(`${prefix}${2 + round++}`, 4, perBatch);
      continue;
    }
    await pushOne(url, INGEST_KEY, b);
    pushed += b.rows.length;
  }
  const busy = (await busyProbe.done).page as ProbeStats;
  mark('end');
  log(
    `paced pages during ingest (${pushed} records pushed): p50 ${busy.p50.toFixed(1)} p99 ${busy.p99.toFixed(1)} max ${busy.max.toFixed(0)} ms`,
  );
  return { idle, busy, pushed };
}

type ProbeSpecStream = Parameters<typeof startProbe>[0]['streams'][number];
