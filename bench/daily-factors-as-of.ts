import { batch } from '../test/helpers/batches.js';
import { get, push, startApp, type Backend } from '../test/helpers/harness.js';

/**
 * Adjusted pages over Tushare-style factors (one factor row per trading day) from another source
 * than the bars, through the HTTP app on a fresh database: one code of `days` bars (source `em`)
 * and as many factors (source `tushare`), then the pages of docs/bars-and-quality.md that read
 * them in SQL — `as_of` with and without a date bound, a sort on a price, `interval=1M` — each
 * timed once. The `as_of` page with a date bound grew with the square of the factor rows on
 * SQLite while each factor lookup chose the bar's factor source again for every factor row it
 * scanned (2,000 days: 32.6 s; with the source chosen once per bar, bars-sql.ts "_s": 0.23 s).
 *
 *   npx tsx bench/daily-factors-as-of.ts sqlite 750
 */
const backend = (process.argv[2] ?? 'sqlite') as Backend;
const count = Number(process.argv[3] ?? 750);
const h = await startApp(backend);
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
const factors = days.map((date, i) => ({
  symbol: '513100',
  date,
  adj_factor: i < count / 2 ? 1 : 5,
  source: 'tushare',
  updated_at: `${date}T08:00:00Z`,
}));
for (let i = 0; i < count; i += 5000) {
  await push(h.app, batch('etf_daily', bars.slice(i, i + 5000), { source: 'em' }));
  await push(h.app, batch('adj_factor', factors.slice(i, i + 5000), { source: 'tushare' }));
}
const asOf = new Date().toISOString();
const kline = '/api/v1/etf/kline?code=513100&adjust=qfq&limit=20';
for (const q of [
  `&as_of=${asOf}&date_from=${days[count - 20] ?? ''}`,
  `&as_of=${asOf}`,
  '&sort=close',
  '&interval=1M',
]) {
  const t0 = performance.now();
  const res = await get(h.app, kline + q);
  const ms = Math.round(performance.now() - t0);
  console.log(`${backend} ${count} days: ${res.statusCode} in ${ms} ms  ${q.replace(asOf, '<now>')}`);
}
await h.close();
