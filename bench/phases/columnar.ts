import path from 'node:path';
import { CFG, QUERY_KEY, log, startService } from '../context.js';
import { tradingDays } from '../data.js';
import { BENCH_DIR, cpuSeconds, rssMeter, type Server } from '../proc.js';
import type { Row } from '../table.js';
import { PYTHON, pythonHasAll, runPython } from '../python.js';

/**
 * Issue 18's goals, on the bench's SQLite etf_daily: a pull of ~1,000,000 rows (the latest
 * days of every code; BENCH_COLUMNAR_ROWS to change) into a pandas DataFrame with the Python
 * client, by Arrow and by Parquet download against paging the JSON API (goal ≥ 3× faster;
 * BENCH_COLUMNAR_ROUNDS alternating rounds, default 2, best of each); the Parquet answer's
 * bytes against the CSV export's (goal ≤ 0.25×); the service's peak RSS while it streams the
 * Arrow and Parquet answers (goal ≤ 250 MB). Each format's export runs in a service of its own,
 * started for it: a process's RSS does not shrink back after an export, so one service for all
 * formats measured each format on top of the previous ones' high-water mark.
 */
export async function columnarPhase(rows: Row[], file: string): Promise<void> {
  const target = Number(process.env.BENCH_COLUMNAR_ROWS ?? 1_000_000);
  const rounds = Math.max(1, Number(process.env.BENCH_COLUMNAR_ROUNDS ?? 2));
  const days = tradingDays(CFG.days);
  const take = Math.min(days.length, Math.max(1, Math.ceil(target / CFG.codes)));
  const dateFrom = days[days.length - take] as string;
  const n = take * CFG.codes;
  const phase = `columnar (${n.toLocaleString('en')} etf_daily rows)`;
  const path_ = `/api/v1/etf/kline?date_from=${dateFrom}&format=`;
  // Bytes, service RSS and CPU: each answer read to the end by a client that keeps nothing.
  const bytes: Record<string, number> = {};
  for (const format of ['csv', 'arrow', 'parquet']) {
    const svc: Server = await startService(file, undefined);
    try {
      const meter = rssMeter(svc.pid);
      const cpu0 = cpuSeconds(svc.pid);
      const started = performance.now();
      const res = await fetch(svc.url + path_ + format, { headers: { 'Q-API-KEY': QUERY_KEY } });
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) size += chunk.byteLength;
      const sec = (performance.now() - started) / 1000;
      const cpu = cpuSeconds(svc.pid) - cpu0;
      // The per-process goal: the worker that streams the answer (a cluster's others idle).
      meter.stop();
      const rss = meter.largest();
      bytes[format] = size;
      log(
        `${phase}: format=${format} ${(size / 1e6).toFixed(1)} MB in ${sec.toFixed(1)} s, service CPU ${cpu.toFixed(1)} s, RSS ${rss.toFixed(0)} MB`,
      );
      rows.push({
        phase,
        server: `format=${format}: ${(size / 1e6).toFixed(1)} MB in ${sec.toFixed(1)} s (fresh service)`,
        rate: n / sec,
        unit: 'rec/s',
        rssMb: rss,
        cpuMs: cpu * 1000,
        ...(format === 'csv' ? {} : { goal: 'service RSS ≤ 250 MB', met: rss <= 250 }),
      });
    } finally {
      await svc.stop();
    }
  }
  rows.push({
    phase,
    server: `Parquet bytes ÷ CSV bytes`,
    rate: null,
    ratio: (bytes.parquet as number) / (bytes.csv as number),
    vs: 'csv',
    goal: '≤ 0.25× CSV',
    met: (bytes.parquet as number) <= 0.25 * (bytes.csv as number),
  });

  if (!pythonHasAll(['pandas', 'pyarrow'])) {
    rows.push({ phase, server: `Python pull: skipped (${PYTHON} lacks pandas or pyarrow)`, rate: null });
    return;
  }
  const svc: Server = await startService(file, undefined);
  try {
    const out = JSON.parse(
      await runPython([
        path.join(BENCH_DIR, 'columnar_pull.py'),
        svc.url,
        QUERY_KEY,
        dateFrom,
        String(rounds),
        String(svc.pid),
      ]),
    ) as Record<string, number>;
    const json = out.json as number;
    const best = rounds > 1 ? `, best of ${rounds} alternating rounds` : '';
    const cpu = (via: string): string =>
      `; CPU: service ${(out[`cpu_service_${via}`] as number).toFixed(1)} s, client ${(out[`cpu_client_${via}`] as number).toFixed(1)} s`;
    rows.push({
      phase: `${phase}: Python DataFrame`,
      server: `JSON pages (cursor): ${json.toFixed(1)} s${best}${cpu('json')}`,
      rate: n / json,
      unit: 'rec/s',
    });
    for (const via of ['arrow', 'parquet']) {
      const sec = out[via] as number;
      rows.push({
        phase: `${phase}: Python DataFrame`,
        server: `${via} download: ${sec.toFixed(1)} s${best}${cpu(via)}`,
        rate: n / sec,
        unit: 'rec/s',
        ratio: json / sec,
        vs: 'JSON pages',
        goal: '≥ 3× faster than JSON pages',
        met: json >= 3 * sec,
      });
    }
  } finally {
    await svc.stop();
  }
}
