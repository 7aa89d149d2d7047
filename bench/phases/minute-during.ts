import { INGEST_KEY, QUERY_KEY, log, startService } from '../context.js';
import { batchBody, code, codeRows, tradingDays } from '../data.js';
import { probeRow, startHealthAndPageProbe, type ProbeStats } from '../load.js';
import { requestThreadSeconds, type Server } from '../proc.js';
import type { Row } from '../table.js';
import { pushDay } from './minute.js';

/**
 * Issue 30: what a market day of minute bars being ingested costs the other requests. `/health`
 * and a one-code daily page (etf_daily, 100 rows, another key) are probed every 25 ms each from
 * a process of their own on a fresh connection per request (bench/probe.ts, as the freeze phase),
 * while BENCH_MINUTE_CODES codes (default 5,000) × 240 bars are pushed over HTTP in 100,000-bar
 * batches. Goal: max ≤ 250 ms for both probes. Also the service's request threads' CPU during
 * the push (a loaded machine distorts it less than the probes' times, which mostly measure the
 * load). BENCH_PHASES=minuteduring: SQLite and, with DATABASE_URL, PostgreSQL.
 */
const PROBE_KEY = 'bench-probe-key-0123456789abcdef';
const PROBE_EVERY_MS = 25;

export async function minuteDuringPhase(rows: Row[], database: string, label: string): Promise<void> {
  const codes = Number(process.env.BENCH_MINUTE_CODES ?? 5000);
  const svc: Server = await startService(database, undefined, {
    MDS_QUERY_KEYS: `${QUERY_KEY},${PROBE_KEY}`,
  });
  try {
    // A year of one ETF's daily bars: the page the probe reads (one code, its newest 100 days).
    const days = tradingDays(260);
    const etf = code(1);
    const daily = await fetch(`${svc.url}/api/v1/upstream/ingest/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
      body: batchBody(`minute-during-daily-${process.pid}-${Date.now()}`, codeRows(etf, days, 1)),
    });
    if (daily.status !== 200) throw new Error(`daily push: ${daily.status} ${await daily.text()}`);
    const page = `/api/v1/etf/kline?code=${etf}&limit=100`;
    const probe = startHealthAndPageProbe(svc.url, PROBE_KEY, page, PROBE_EVERY_MS);
    // The probe's process starts (tsx, a loaded machine: seconds) before the push does.
    await new Promise((r) => setTimeout(r, 3000));
    const cpuBefore = requestThreadSeconds(svc.pid);
    // A failed push stops the probe too: its process would otherwise outlive the run.
    const pushed = await pushDay(svc, codes, '2024-03-01').catch(async (err: unknown) => {
      await probe.stop();
      throw err;
    });
    const cpu = requestThreadSeconds(svc.pid) - cpuBefore;
    await new Promise((r) => setTimeout(r, 3000));
    const probes = await probe.stop();
    const push =
      `${pushed.count.toLocaleString('en')} bars in ${pushed.seconds.toFixed(1)} s ` +
      `(${pushed.rate.toFixed(0)} bars/s), service CPU ${pushed.cpu.toFixed(1)} s, request threads' CPU ${cpu.toFixed(1)} s`;
    for (const name of ['health', 'page'] as const) {
      const s = probes[name] as ProbeStats;
      const what = name === 'health' ? '/health' : 'one-code daily page (another key)';
      log(
        `minute during ${label}: ${what} n ${s.n} p50 ${s.p50.toFixed(1)} p99 ${s.p99.toFixed(1)} max ${s.max.toFixed(0)} ms failed ${s.failed}; ${push}`,
      );
      const phase = `${label}: a market day of minute bars pushed (${codes.toLocaleString('en')} codes × 240)`;
      rows.push(probeRow(phase, what, s, `push: ${push}`));
    }
  } finally {
    await svc.stop();
  }
}
