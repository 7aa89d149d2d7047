import path from 'node:path';
import { CFG, QUERY_KEY, log, startService } from '../context.js';
import { tradingDays } from '../data.js';
import { BENCH_DIR, rssMeter, type Server } from '../proc.js';
import type { Row } from '../table.js';
import { PYTHON, pythonHasAll, runPython } from '../python.js';

/**
 * Issue 18's goals, on the bench's SQLite etf_daily: a pull of ~1,000,000 rows (the latest
 * days of every code; BENCH_COLUMNAR_ROWS to change) into a pandas DataFrame with the Python
 * client, by Arrow and by Parquet download against paging the JSON API (goal ≥ 3× faster);
 * the Parquet answer's bytes against the CSV export's (goal ≤ 0.25×); the service's peak RSS
 * while it streams the Arrow and Parquet answers (goal ≤ 250 MB).
 */
export async function columnarPhase(rows: Row[], file: string): Promise<void> {
  const target = Number(process.env.BENCH_COLUMNAR_ROWS ?? 1_000_000);
  const days = tradingDays(CFG.days);
  const take = Math.min(days.length, Math.max(1, Math.ceil(target / CFG.codes)));
  const dateFrom = days[days.length - take] as string;
  const n = take * CFG.codes;
  const phase = `columnar (${n.toLocaleString('en')} etf_daily rows)`;
  const svc: Server = await startService(file, undefined);
  try {
    const url = (format: string) => `${svc.url}/api/v1/etf/kline?date_from=${dateFrom}&format=${format}`;
    // Bytes and service RSS: each answer read to the end by a client that keeps nothing.
    const bytes: Record<string, number> = {};
    for (const format of ['csv', 'arrow', 'parquet']) {
      const meter = rssMeter(svc.pid);
      const started = performance.now();
      const res = await fetch(url(format), { headers: { 'Q-API-KEY': QUERY_KEY } });
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) size += chunk.byteLength;
      const sec = (performance.now() - started) / 1000;
      const rss = meter.stop();
      bytes[format] = size;
      log(
        `${phase}: format=${format} ${(size / 1e6).toFixed(1)} MB in ${sec.toFixed(1)} s, service RSS ${rss.toFixed(0)} MB`,
      );
      rows.push({
        phase,
        server: `format=${format}: ${(size / 1e6).toFixed(1)} MB in ${sec.toFixed(1)} s`,
        rate: n / sec,
        unit: 'rec/s',
        rssMb: rss,
        ...(format === 'csv' ? {} : { goal: 'service RSS ≤ 250 MB', met: rss <= 250 }),
      });
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
    const out = JSON.parse(
      await runPython([path.join(BENCH_DIR, 'columnar_pull.py'), svc.url, QUERY_KEY, dateFrom]),
    ) as Record<string, number>;
    const json = out.json as number;
    rows.push({
      phase: `${phase}: Python DataFrame`,
      server: `JSON pages (cursor): ${json.toFixed(1)} s`,
      rate: n / json,
      unit: 'rec/s',
    });
    for (const via of ['arrow', 'parquet']) {
      const sec = out[via] as number;
      rows.push({
        phase: `${phase}: Python DataFrame`,
        server: `${via} download: ${sec.toFixed(1)} s`,
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
