import { batch } from '../test/helpers/batches.js';
import { get, push, startApp, type Backend } from '../test/helpers/harness.js';

/**
 * Adjusted pages over Tushare-style factors (one factor row per trading day) from another source
 * than the bars, through the HTTP app on a fresh database: one code of `days` bars (source `em`)
 * and as many factors (source `tushare`), then the pages of docs/bars-and-quality.md that read
 * them in SQL — `as_of` with and without a date bound, a sort on a price, `interval=1M` — each
 * timed once. The same pages are then timed on a second fresh database whose factors are one row
 * per change (the same two factors, two rows), and the ratio daily ÷ per change printed.
 *
 *   npx tsx bench/daily-factors-as-of.ts sqlite 750
 */
const backend = (process.argv[2] ?? 'sqlite') as Backend;
const count = Number(process.argv[3] ?? 750);
const days: string[] = [];
for (let t = Date.parse('2015-01-05T00:00:00Z'); days.length < count; t += 86_400_000) {
  const d = new Date(t);
  if (d.getUTCDay() % 6 !== 0) days.push(d.toISOString().slice(0, 10));
}
const bars = days.map((date, i) => ({
  symbol: '513100',
  date,
  open: 1 + i / 1000,
  high: 1.1 + i / 1000,
  low: 0.9 + i / 1000,
  close: 1 + i / 1000,
  pre_close: 1,
  change: 0,
  pct_chg: 0,
  volume: 1000,
  amount: 1000,
  source: 'em',
  updated_at: `${date}T08:00:00Z`,
}));
// A 1:5 split half-way: every day its own factor row, as Tushare publishes them.
const split = Math.ceil(count / 2);
const factors = days.map((date, i) => ({
  symbol: '513100',
  date,
  adj_factor: i < split ? 1 : 5,
  source: 'tushare',
  updated_at: `${date}T08:00:00Z`,
}));
const layouts = {
  daily: factors,
  'per change': factors.filter((_, i) => i === 0 || i === split),
};
const pages = (asOf: string): string[] => [
  `&as_of=${asOf}&date_from=${days[count - 20] ?? ''}`,
  `&as_of=${asOf}`,
  '&sort=close',
  '&interval=1M',
];
const kline = '/api/v1/etf/kline?code=513100&adjust=qfq&limit=20';
const ms: Record<string, number[]> = {};
for (const [layout, rows] of Object.entries(layouts)) {
  const h = await startApp(backend);
  for (let i = 0; i < count; i += 5000) {
    await push(h.app, batch('etf_daily', bars.slice(i, i + 5000), { source: 'em' }));
    await push(h.app, batch('adj_factor', rows.slice(i, i + 5000), { source: 'tushare' }));
  }
  const asOf = new Date().toISOString();
  ms[layout] = [];
  for (const q of pages(asOf)) {
    const t0 = performance.now();
    const res = await get(h.app, kline + q);
    const t = Math.round(performance.now() - t0);
    ms[layout].push(t);
    console.log(
      `${backend} ${count} days, ${layout}: ${res.statusCode} in ${t} ms  ${q.replace(asOf, '<now>')}`,
    );
  }
  await h.close();
}
pages('<now>').forEach((q, i) => {
  const [d, c] = [ms.daily?.[i] ?? 0, ms['per change']?.[i] ?? 0];
  console.log(`daily ÷ per change: ${(d / Math.max(c, 1)).toFixed(1)}×  ${q}`);
});
