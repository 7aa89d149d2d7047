import type { RowData } from '../client/batch-builder.js';
import { type Bar, walk } from './market.js';
import { Random, addDays, quarterEnds, round, tradingDays } from './random.js';
import { COMPANIES, ETFS, FX_PAIRS, INDEXES, STOCKS } from './universe.js';
import { EXTRA_STOCKS, trades } from './security-master.js';

/**
 * The shared state of the demo data: the price paths every dataset derives from, and the
 * helpers the generators (one file per catalog folder, in ./generators) share.
 */

export interface DemoOptions {
  /** Last trading day (YYYY-MM-DD). */
  end: string;
  /** Trading days of daily history. */
  days: number;
  seed: number;
}

export const SOURCE = 'demo';

/** Shared state: the price paths every dataset derives from. */
export class DemoMarket {
  readonly days: string[];
  readonly quarters: string[];
  readonly etfBars = new Map<string, Bar[]>();
  readonly indexBars = new Map<string, Bar[]>();
  readonly fxBars = new Map<string, Bar[]>();
  readonly stockBars = new Map<string, Bar[]>();
  readonly usBars = new Map<string, Bar[]>();
  /** Corporate actions and the cumulative factors they give, per demo ETF and stock. */
  readonly actions = new Map<string, DemoAction[]>();
  readonly factors = new Map<string, { date: string; factor: number }[]>();

  constructor(readonly opts: DemoOptions) {
    const rng = new Random(opts.seed);
    this.days = tradingDays(opts.end, opts.days);
    const first = this.days[0] as string;
    // Quarter ends of the two years before the end: reports cover past quarters.
    this.quarters = quarterEnds(addDays(opts.end, -800), addDays(opts.end, -45)).slice(-8);
    if (this.quarters.length === 0) this.quarters.push(first);
    for (const i of INDEXES) {
      this.indexBars.set(
        i.code,
        walk(rng.fork(`index:${i.code}`), this.days, i.level, { vol: 0.011, digits: 2, volume: 1.5e10 }),
      );
    }
    for (const e of ETFS) {
      this.etfBars.set(
        e.code,
        walk(rng.fork(`etf:${e.code}`), this.days, e.price, {
          vol: e.assetClass === 'commodity' ? 0.008 : 0.012,
          digits: 3,
          volume: 5e7,
        }),
      );
    }
    for (const f of FX_PAIRS) {
      this.fxBars.set(
        f.pair,
        walk(rng.fork(`fx:${f.pair}`), this.days, f.rate, { vol: 0.002, drift: 0, digits: 4, volume: 0 }),
      );
    }
    for (const s of STOCKS) {
      this.stockBars.set(
        s.code,
        walk(rng.fork(`stock:${s.code}`), this.days, s.price, { vol: 0.018, digits: 2, volume: 2e7 }),
      );
    }
    for (const e of ETFS) this.applyActions(rng.fork(`actions:${e.code}`), e.code, this.etfBars, 3);
    for (const st of STOCKS) this.applyActions(rng.fork(`actions:${st.code}`), st.code, this.stockBars, 2);
    for (const c of COMPANIES) {
      this.usBars.set(
        c.ticker,
        walk(rng.fork(`us:${c.ticker}`), this.days, c.price, { vol: 0.017, digits: 2, volume: 4e7 }),
      );
    }
    // The security master's extra codes trade only while listed and not suspended.
    for (const s of EXTRA_STOCKS) {
      const path = walk(rng.fork(`stock:${s.code}`), this.days, s.price, {
        vol: 0.018,
        digits: 2,
        volume: 2e7,
      });
      this.stockBars.set(
        s.code,
        path.filter((b) => trades(this.days, s, b.date)),
      );
      this.applyActions(rng.fork(`actions:${s.code}`), s.code, this.stockBars, 2);
    }
  }

  /**
   * Three cash dividends and one split per code, spread over the history. The walk is the
   * continuous (forward-adjusted to the last day) path; the exchange's raw prices are it times
   * the last cumulative factor divided by the factor in force, so the latest raw prices are the
   * walk's — near the instrument's real level (universe.ts), as its quote today is — earlier
   * ones higher before a split, hfq prices (raw × factor) the walk times the last factor, and a
   * bar's pre_close on an ex-date is the ex-rights reference price.
   */
  private applyActions(rng: Random, code: string, paths: Map<string, Bar[]>, digits: number): void {
    const path = paths.get(code);
    if (!path || path.length < 8) return;
    const at = (share: number): number =>
      Math.max(1, Math.min(path.length - 1, Math.round(path.length * share)));
    const plan: { i: number; action: 'dividend' | 'split' }[] = [
      { i: at(0.15), action: 'dividend' },
      { i: at(0.4), action: 'dividend' },
      { i: at(0.6), action: 'split' },
      { i: at(0.85), action: 'dividend' },
    ];
    const first = path[0] as Bar;
    const factors = [{ date: first.date, factor: 1 }];
    const actions: DemoAction[] = [];
    let factor = 1;
    let next = 0;
    const adjusted: { b: Bar; f: number }[] = path.map((b, i) => {
      while (plan[next] && (plan[next] as { i: number }).i === i) {
        const step = plan[next++] as { i: number; action: 'dividend' | 'split' };
        const prevClose = round((path[i - 1] as Bar).close / factor, digits);
        if (step.action === 'split') {
          const ratio = rng.pick([0.5, 1, 2]);
          factor *= 1 + ratio;
          actions.push({ date: b.date, action: 'split', cash: null, ratio });
        } else {
          const cash = round(prevClose * rng.between(0.005, 0.02), 3);
          factor *= prevClose / (prevClose - cash);
          actions.push({ date: b.date, action: 'dividend', cash, ratio: null });
        }
        factors.push({ date: b.date, factor: round(factor, 6) });
      }
      return { b, f: (factors[factors.length - 1] as { factor: number }).factor };
    });
    const last = (factors[factors.length - 1] as { factor: number }).factor;
    const raw: Bar[] = adjusted.map(({ b, f: inForce }) => {
      // Relative to the last factor: the latest bars are the walk itself.
      const f = inForce / last;
      const px = (x: number): number => round(x / f, digits);
      const close = px(b.close);
      const preClose = px(b.preClose);
      return {
        ...b,
        open: px(b.open),
        high: px(b.high),
        low: px(b.low),
        close,
        preClose,
        change: round(close - preClose, digits),
        pctChg: round(((close - preClose) / preClose) * 100, 2),
        volume: Math.round(b.volume * f),
      };
    });
    paths.set(code, raw);
    // Cash per share in the raw prices' scale (the dividend's ratio to the price is unchanged).
    for (const a of actions) if (a.cash !== null) a.cash = round(a.cash * last, 3);
    this.actions.set(code, actions);
    this.factors.set(code, factors);
  }

  rng(label: string): Random {
    return new Random(this.opts.seed).fork(label);
  }

  get end(): string {
    return this.days[this.days.length - 1] as string;
  }
}

export interface DemoAction {
  date: string;
  action: 'dividend' | 'split';
  /** Cash per share (dividends). */
  cash: number | null;
  /** New shares per existing share (splits). */
  ratio: number | null;
}

/** The vendor's publication time of a day's data: 16:30 Beijing time. */
export const stamp = (date: string): string => `${date}T08:30:00Z`;

export const bars = (m: Map<string, Bar[]>, k: string): Bar[] => m.get(k) ?? [];

/** A row of one code's day: the code, the day, its own fields, the demo source, published that day. */
export const dailyRow = (symbol: string, date: string, fields: RowData): RowData => ({
  symbol,
  date,
  ...fields,
  source: SOURCE,
  updated_at: stamp(date),
});

/** The daily-bar fields the standardized datasets share. */
export const ohlcv = (b: Bar) => ({
  open: b.open,
  high: b.high,
  low: b.low,
  close: b.close,
  pre_close: b.preClose,
  change: b.change,
  pct_chg: b.pctChg,
  volume: b.volume,
});

/** The last bar as a spot quote's fields (the ETF and A-share spot datasets share them). */
export const spotQuote = (b: Bar) => ({
  price: b.close,
  open: b.open,
  high: b.high,
  low: b.low,
  pre_close: b.preClose,
  change: b.change,
  pct_chg: b.pctChg,
  volume: b.volume,
  amount: b.amount,
});

/** Fund NAV per unit: close less a small, mean-reverting premium. */
export function navOf(rng: Random, close: number, crossBorder: boolean): { nav: number; premium: number } {
  const premium = (crossBorder ? 1.5 : 0) + rng.normal() * (crossBorder ? 1.2 : 0.08);
  return { nav: round(close / (1 + premium / 100), 4), premium: round(premium, 3) };
}

export type Generator = (m: DemoMarket) => RowData[];
