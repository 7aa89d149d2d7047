import { type Random, round } from './random.js';

/** Price paths: geometric random walks with plausible OHLC, volume and derived statistics. */

export interface Bar {
  date: string;
  open: number;
  high: number;
  low: number;
  close: number;
  preClose: number;
  change: number;
  pctChg: number;
  volume: number;
  amount: number;
}

/**
 * Daily bars: log-returns ~ N(drift, vol), an overnight gap for the open, and a high/low that
 * always contain open and close. `digits` is the quote precision (3 for ETFs, 2 for stocks).
 */
export function walk(
  rng: Random,
  days: readonly string[],
  start: number,
  opts: { vol: number; drift?: number; digits: number; volume: number },
): Bar[] {
  const bars: Bar[] = [];
  let prev = start;
  for (const date of days) {
    const ret = (opts.drift ?? 0.0002) + opts.vol * rng.normal();
    const open = prev * Math.exp(opts.vol * 0.3 * rng.normal());
    const close = prev * Math.exp(ret);
    const spread = Math.abs(opts.vol * 0.6 * rng.normal());
    const high = Math.max(open, close) * (1 + spread * rng.next());
    const low = Math.min(open, close) * (1 - spread * rng.next());
    const volume = Math.round(opts.volume * Math.exp(0.35 * rng.normal()) * (1 + 8 * Math.abs(ret)));
    const o = round(open, opts.digits);
    const c = round(close, opts.digits);
    const pc = round(prev, opts.digits);
    const bar: Bar = {
      date,
      open: o,
      high: Math.max(round(high, opts.digits), o, c),
      low: Math.min(round(low, opts.digits), o, c),
      close: c,
      preClose: pc,
      change: round(c - pc, opts.digits),
      pctChg: round(((c - pc) / pc) * 100, 2),
      volume,
      amount: round((volume * (o + c)) / 2, 2),
    };
    bars.push(bar);
    prev = close;
  }
  return bars;
}

export const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / (xs.length || 1);

export function stdev(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
}

/** Simple returns of closes. */
export const returns = (bars: readonly Bar[]): number[] =>
  bars.map((b, i) => (i === 0 ? 0 : b.close / (bars[i - 1] as Bar).close - 1));

/** Return over the last n bars ending at i, or null when the history is too short. */
export function retN(bars: readonly Bar[], i: number, n: number): number | null {
  const base = bars[i - n];
  const now = bars[i];
  return base && now ? round((now.close / base.close - 1) * 100, 4) : null;
}

/** Moving average of closes over n bars ending at i. */
export function ma(bars: readonly Bar[], i: number, n: number): number | null {
  if (i + 1 < n) return null;
  return round(mean(bars.slice(i + 1 - n, i + 1).map((b) => b.close)), 4);
}

/** Annualised volatility of daily returns over n bars ending at i, percent. */
export function vol(rets: readonly number[], i: number, n: number): number | null {
  if (i < n) return null;
  return round(stdev(rets.slice(i + 1 - n, i + 1)) * Math.sqrt(252) * 100, 4);
}

/** Wilder's RSI over n bars ending at i. */
export function rsi(rets: readonly number[], i: number, n: number): number | null {
  if (i < n) return null;
  const window = rets.slice(i + 1 - n, i + 1);
  const gain = mean(window.map((r) => Math.max(r, 0)));
  const loss = mean(window.map((r) => Math.max(-r, 0)));
  if (loss === 0) return 100;
  return round(100 - 100 / (1 + gain / loss), 2);
}

/** Exponential moving averages of closes (for MACD). */
export function ema(bars: readonly Bar[], span: number): number[] {
  const k = 2 / (span + 1);
  const out: number[] = [];
  bars.forEach((b, i) => out.push(i === 0 ? b.close : b.close * k + (out[i - 1] as number) * (1 - k)));
  return out;
}

/** Largest peak-to-trough fall of closes over n bars ending at i, percent (negative). */
export function maxDrawdown(bars: readonly Bar[], i: number, n: number): number {
  let peak = -Infinity;
  let worst = 0;
  for (let j = Math.max(0, i + 1 - n); j <= i; j++) {
    const c = (bars[j] as Bar).close;
    peak = Math.max(peak, c);
    worst = Math.min(worst, c / peak - 1);
  }
  return round(worst * 100, 4);
}
