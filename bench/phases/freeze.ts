import net from 'node:net';
import { CFG, QUERY_KEY, log, startService } from '../context.js';
import { code, tradingDays } from '../data.js';
import { AUTH } from '../measure.js';
import { probeRow, startHealthAndPageProbe, type ProbeStats } from '../load.js';
import { requestThreadSeconds, rssMeter, type Server } from '../proc.js';
import { exportUnderIngest, frozenWriter, mcpBatches, unreadMcpBatches, warmMcp } from './isolation-parts.js';
import type { Row } from '../table.js';
import { loadReference } from './bars.js';

/**
 * Issue 24: no valid request of one key freezes a worker. On the default start-up (one worker
 * per core), `/health` and a one-code page of another key are probed every 25 ms each, from a
 * process of their own on a fresh connection per request (so every worker is measured), while
 * one key runs, in turn: 4 full-speed CSV exports of the bench data, 16 distinct deep pages
 * sorted on `close`, an adjusted cross-section with `adjust_source` sorted on `close`, and 100
 * slowly-read exports; then (issue 52) 20 concurrent MCP batches of 100 `query` calls, 40 MCP
 * batch answers never read, a 50k-row export read slowly under a 10-record batch every 2 s, and
 * (SQLite cluster) the writer process frozen for 30 s while a batch is pushed every 2 s. Goal:
 * max ≤ 250 ms for both probes in every part; every heavy request answered (or refused with its
 * code) within the deadline; the largest process's RSS ≤ 1 GB; the export complete; every push
 * answered within its bound (MDS_WRITER_HANG_MS and a ping while the writer is frozen).
 *
 * Each part also gives the CPU its request threads used (bench/proc.ts requestThreadSeconds): on a
 * loaded machine the figure to compare, where the probes' times mostly measure the load.
 *
 * BENCH_PHASES=freeze (SQLite) or freezepg (PostgreSQL, DATABASE_URL); BENCH_FREEZE_PARTS: words,
 * only the parts whose names contain one (and not the export CPU). BENCH_FREEZE_MAIN: another
 * build's dist/main.js to measure instead of this checkout's (the figures before a change);
 * MDS_EXPORT_THREADS=0 in the environment: exports encoded on the request thread.
 */
const PROBE_KEY = 'bench-probe-key-0123456789abcdef';
const PROBE_EVERY_MS = 25;
/** How long the slowly-read exports are held open. */
const SLOW_SEC = CFG.durationSec;

interface Heavy {
  name: string;
  run: (svc: Server) => Promise<string>;
}

export async function freezePhase(rows: Row[], target: string, label: string): Promise<void> {
  const main = process.env.BENCH_FREEZE_MAIN;
  const svc = await startService(
    target,
    undefined,
    { MDS_QUERY_KEYS: `${QUERY_KEY},${PROBE_KEY}` },
    main === undefined || main === '' ? undefined : main,
  );
  try {
    await loadReference(svc);
    const days = tradingDays(CFG.days);
    const last = days.length - 1;
    const page = `/api/v1/etf/kline?code=${code(3)}&date_from=${days[last - 260]}&date_to=${days[last]}&limit=100`;
    const parts: Heavy[] = [
      {
        name: '4 full-speed CSV exports',
        run: (s) => all(4, () => exportAll(s, '/api/v1/etf/kline?format=csv')),
      },
      {
        name: '16 distinct deep pages sorted on close',
        run: (s) =>
          all(16, (i) =>
            timedGet(s, `/api/v1/etf/kline?sort=close&order=desc&offset=${200_000 + i * 1000}&limit=1000`),
          ),
      },
      {
        name: 'adjusted cross-section (adjust=hfq, adjust_source, sort=close, 10 days)',
        run: (s) =>
          all(1, () =>
            timedGet(
              s,
              `/api/v1/etf/kline?date_from=${days[last - 9]}&date_to=${days[last]}&adjust=hfq&adjust_source=bench&sort=close&limit=1000`,
            ),
          ),
      },
      { name: `100 slowly-read exports (${SLOW_SEC} s)`, run: (s) => slowExports(s, 100, SLOW_SEC * 1000) },
      { name: '20 concurrent MCP batches of 100 query calls', run: (s) => mcpBatches(s, 20) },
      {
        name: `40 unread MCP batch answers (${SLOW_SEC} s)`,
        run: (s) => unreadMcpBatches(s, 40, SLOW_SEC * 1000),
      },
      {
        name: '50k-row export under a 10-record batch every 2 s',
        run: (s) => exportUnderIngest(s, 50_000),
      },
      { name: 'the writer frozen for 30 s', run: (s) => frozenWriter(s, 30_000) },
    ];
    // BENCH_FREEZE_PARTS=MCP,writer: only the parts whose names contain one of the words.
    const only = (process.env.BENCH_FREEZE_PARTS ?? '').split(',').filter((w) => w !== '');
    const chosen = only.length === 0 ? parts : parts.filter((p) => only.some((w) => p.name.includes(w)));
    if (only.length === 0) await exportCpu(rows, svc, label);
    // The MCP endpoint is built at each worker's first /mcp request: not part of what is measured.
    await warmMcp(svc);
    for (const part of chosen) {
      const probe = startHealthAndPageProbe(svc.url, PROBE_KEY, page, PROBE_EVERY_MS);
      // The probe's process starts (tsx, a loaded machine: seconds) before the heavy requests do,
      // and runs a few seconds at least: a SIGTERM before it has started would kill it.
      await new Promise((r) => setTimeout(r, 3000));
      const began = Date.now();
      const cpuBefore = requestThreadSeconds(svc.pid);
      const rss = rssMeter(svc.pid);
      let outcome = await part.run(svc);
      // CPU, not time: on a loaded machine the request threads' own work is what can be compared.
      const cpu = requestThreadSeconds(svc.pid) - cpuBefore;
      rss.stop();
      outcome += `; request threads' CPU ${cpu.toFixed(2)} s; largest process RSS ${rss.largest().toFixed(0)} MB`;
      await new Promise((r) => setTimeout(r, Math.max(0, 3000 - (Date.now() - began))));
      const probes = await probe.stop();
      for (const name of ['health', 'page'] as const) {
        const s = probes[name] as ProbeStats;
        const what = name === 'health' ? '/health' : 'one-code page (another key)';
        log(
          `freeze ${label}: ${part.name}: ${what} n ${s.n} p99 ${s.p99.toFixed(1)} max ${s.max.toFixed(0)} ms failed ${s.failed}; ${outcome}`,
        );
        rows.push(probeRow(`${label}: one key runs ${part.name}`, what, s, `heavy: ${outcome}`));
      }
    }
  } finally {
    await svc.stop();
  }
}

/**
 * The request threads' CPU per 1,000 rows of one whole export in each format, nothing else
 * running (the probes of the parts below would be counted with it): what an export costs the
 * thread that answers /health, where exports are encoded on it or not (MDS_EXPORT_THREADS).
 */
async function exportCpu(rows: Row[], svc: Server, label: string): Promise<void> {
  const n = CFG.codes * CFG.days;
  for (const format of ['csv', 'parquet']) {
    const before = requestThreadSeconds(svc.pid);
    const r = await exportAll(svc, `/api/v1/etf/kline?format=${format}`);
    const ms = ((requestThreadSeconds(svc.pid) - before) * 1e6) / n;
    log(
      `freeze ${label}: one ${format} export of ${n} rows alone: request threads' CPU ${ms.toFixed(2)} ms per 1,000 rows`,
    );
    rows.push({
      phase: `${label}: one ${format} export alone (${n} rows, ${(r.ms / 1000).toFixed(1)} s)`,
      server: `request threads' CPU ${ms.toFixed(2)} ms per 1,000 rows`,
      rate: null,
    });
  }
}

/** `n` heavy requests at once; their statuses and the slowest one's time, as text. */
async function all(n: number, one: (i: number) => Promise<{ status: number; ms: number }>): Promise<string> {
  const r = await Promise.all(Array.from({ length: n }, (_, i) => one(i)));
  const statuses = new Map<number, number>();
  for (const x of r) statuses.set(x.status, (statuses.get(x.status) ?? 0) + 1);
  const slowest = Math.max(...r.map((x) => x.ms));
  return `${[...statuses].map(([s, k]) => `${k}× ${s}`).join(', ')}, slowest ${(slowest / 1000).toFixed(1)} s`;
}

async function timedGet(svc: Server, path: string): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  const r = await fetch(svc.url + path, { headers: AUTH });
  await r.arrayBuffer();
  return { status: r.status, ms: performance.now() - t };
}

/** A whole export read as fast as it comes. */
async function exportAll(svc: Server, path: string): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  const r = await fetch(svc.url + path, { headers: AUTH });
  let bytes = 0;
  for await (const chunk of r.body ?? []) bytes += (chunk as Uint8Array).length;
  if (bytes === 0) throw new Error('an empty export');
  return { status: r.status, ms: performance.now() - t };
}

/**
 * `n` whole exports whose clients take in what has arrived every 500 ms and otherwise leave it in
 * the socket (slow readers: the server waits for each to drain), for `forMs`; then they leave.
 * Their status lines, as text.
 */
async function slowExports(svc: Server, n: number, forMs: number): Promise<string> {
  const port = Number(new URL(svc.url).port);
  const statuses = new Map<string, number>();
  await Promise.all(
    Array.from({ length: n }, () => {
      return new Promise<void>((resolve) => {
        const socket = net.connect({ host: '127.0.0.1', port });
        let head = '';
        socket.on('error', () => {});
        socket.setNoDelay(true);
        socket.write(
          `GET /api/v1/etf/kline?format=csv HTTP/1.1\r\nHost: x\r\nQ-API-KEY: ${QUERY_KEY}\r\n\r\n`,
        );
        socket.on('data', (d: Buffer) => {
          if (head.length < 12) head += d.toString('latin1', 0, 12);
          socket.pause();
        });
        const tick = setInterval(() => socket.resume(), 500);
        setTimeout(() => {
          clearInterval(tick);
          const status = head.slice(9, 12) || 'none';
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          socket.destroy();
          resolve();
        }, forMs);
      });
    }),
  );
  return [...statuses].map(([s, k]) => `${k}× ${s}`).join(', ');
}
