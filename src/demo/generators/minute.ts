import type { RowData } from '../../client/batch-builder.js';
import type { DatasetName } from '../../client/query-client.js';
import { type Generator, bars, dailyRow } from '../demo-market.js';
import type { Bar } from '../market.js';
import { type Random, round } from '../random.js';
import { ETFS, INDEXES, STOCKS } from '../universe.js';
import { hhmm } from '../../ingest/minute-bars.js';

// Intraday bars (issue 30): the last trading days of each demo code as 1-minute bars that add
// up to its daily bar — open at 09:31 (the call auction is in the first bar), close at 15:00,
// the day's high and low touched, volume U-shaped over the day and summing to the daily volume,
// nothing in the lunch break; a limit-up day stays pinned at its high once reached.

/** Trading days of minute bars per code: a few weeks. */
export const DEMO_MINUTE_DAYS = 15;

const END_MINUTES = [...range(571, 690), ...range(781, 900)];

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** One daily bar as 240 minute bars whose open, high, low, close, volume and amount are the day's. */
function minuteDay(rng: Random, code: string, day: Bar, digits: number): RowData[] {
  const n = END_MINUTES.length;
  // A Brownian bridge from the open to the close.
  const walk: number[] = [0];
  for (let i = 1; i < n; i++) walk.push((walk[i - 1] as number) + rng.normal());
  const last = walk[n - 1] as number;
  const sigma = (day.high - day.low) / 6 || 0.001;
  const path = walk.map(
    (w, i) => day.open + ((day.close - day.open) * i) / (n - 1) + sigma * 0.15 * (w - (last * i) / (n - 1)),
  );
  path[n - 1] = day.close;
  const clipped = path.map((p) => Math.min(day.high, Math.max(day.low, p)));
  // The day's extremes are reached inside the day (not at the ends unless the open or close is one).
  const inner = (pick: (a: number, b: number) => boolean): number => {
    let at = 1;
    for (let i = 1; i < n - 1; i++) if (pick(clipped[i] as number, clipped[at] as number)) at = i;
    return at;
  };
  const hi = inner((a, b) => a > b);
  const lo = inner((a, b) => a < b);
  clipped[hi] = day.high;
  if (lo !== hi) clipped[lo] = day.low;
  // A limit-up close: pinned at the high from the first time it is reached.
  if (day.pctChg >= 9.9 && day.close === day.high) {
    const first = clipped.findIndex((p) => p >= day.high);
    for (let i = Math.max(first, 0); i < n; i++) clipped[i] = day.high;
  }
  const weights = END_MINUTES.map(
    (_, i) => (1 + 2.5 * ((i - 119.5) / 119.5) ** 2) * (i === 0 ? 3 : 1) * rng.between(0.7, 1.3),
  );
  const total = weights.reduce((s, w) => s + w, 0);
  const volumes = weights.map((w) => Math.floor((day.volume * w) / total / 100) * 100);
  volumes[n - 1] = day.volume - volumes.slice(0, -1).reduce((s, v) => s + v, 0);
  const amounts = volumes.map((v) => (day.volume > 0 ? round((day.amount * v) / day.volume, 2) : 0));
  amounts[n - 1] = round(day.amount - amounts.slice(0, -1).reduce((s, a) => s + a, 0), 2);
  let prev = day.open;
  return END_MINUTES.map((m, i) => {
    const open = i === 0 ? day.open : prev;
    const close = round(clipped[i] as number, digits);
    prev = close;
    const hiBar = i === hi ? day.high : Math.max(open, close);
    const loBar = i === lo ? day.low : Math.min(open, close);
    return dailyRow(code, day.date, {
      time: `${day.date}T${hhmm(m)}:00+08:00`,
      open,
      high: round(Math.max(hiBar, open, close), digits),
      low: round(Math.min(loBar, open, close), digits),
      close: i === n - 1 ? day.close : close,
      volume: volumes[i] as number,
      amount: amounts[i] as number,
    });
  });
}

function minuteBars(
  m: Parameters<Generator>[0],
  series: Map<string, Bar[]>,
  codes: readonly string[],
  digits: number,
): RowData[] {
  const rng = m.rng(`minute:${digits}`);
  return codes.flatMap((code) =>
    bars(series, code)
      .slice(-DEMO_MINUTE_DAYS)
      .flatMap((day) => minuteDay(rng.fork(`${code}:${day.date}`), code, day, digits)),
  );
}

export const minuteGenerators = {
  stock_minute: (m) =>
    minuteBars(
      m,
      m.stockBars,
      STOCKS.map((s) => s.code),
      2,
    ),
  etf_minute: (m) =>
    minuteBars(
      m,
      m.etfBars,
      ETFS.map((e) => e.code),
      3,
    ),
  index_minute: (m) =>
    minuteBars(
      m,
      m.indexBars,
      INDEXES.map((i) => i.code),
      2,
    ),
} satisfies Partial<Record<DatasetName, Generator>>;
