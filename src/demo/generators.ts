import type { RowData } from '../client/batch-builder.js';
import { type Bar, ema, ma, maxDrawdown, mean, retN, returns, rsi, stdev, vol, walk } from './market.js';
import { Random, addDays, quarterEnds, round, tradingDays } from './random.js';
import { COMPANIES, ETFS, FILERS, FX_PAIRS, INDEXES, MACRO, STOCKS } from './universe.js';

/**
 * Synthetic, realistic data for every dataset of the catalog: prices are random walks with
 * consistent OHLC, NAVs track prices, flows follow share changes, holdings are weights that
 * sum to 100, US filings and XBRL facts follow EDGAR's shapes. Deterministic for a seed and
 * an end date. Nothing here is real market data.
 */

export interface DemoOptions {
  /** Last trading day (YYYY-MM-DD). */
  end: string;
  /** Trading days of daily history. */
  days: number;
  seed: number;
}

const SOURCE = 'demo';

/** Shared state: the price paths every dataset derives from. */
export class DemoMarket {
  readonly days: string[];
  readonly quarters: string[];
  readonly etfBars = new Map<string, Bar[]>();
  readonly indexBars = new Map<string, Bar[]>();
  readonly fxBars = new Map<string, Bar[]>();
  readonly stockBars = new Map<string, Bar[]>();
  readonly usBars = new Map<string, Bar[]>();

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
    for (const c of COMPANIES) {
      this.usBars.set(
        c.ticker,
        walk(rng.fork(`us:${c.ticker}`), this.days, c.price, { vol: 0.017, digits: 2, volume: 4e7 }),
      );
    }
  }

  rng(label: string): Random {
    return new Random(this.opts.seed).fork(label);
  }

  get end(): string {
    return this.days[this.days.length - 1] as string;
  }
}

/** The vendor's publication time of a day's data: 16:30 Beijing time. */
const stamp = (date: string): string => `${date}T08:30:00Z`;

const bars = (m: Map<string, Bar[]>, k: string): Bar[] => m.get(k) ?? [];

/** The daily-bar fields the standardized datasets share. */
const ohlcv = (b: Bar) => ({
  open: b.open,
  high: b.high,
  low: b.low,
  close: b.close,
  pre_close: b.preClose,
  change: b.change,
  pct_chg: b.pctChg,
  volume: b.volume,
});

/** Fund NAV per unit: close less a small, mean-reverting premium. */
function navOf(rng: Random, close: number, crossBorder: boolean): { nav: number; premium: number } {
  const premium = (crossBorder ? 1.5 : 0) + rng.normal() * (crossBorder ? 1.2 : 0.08);
  return { nav: round(close / (1 + premium / 100), 4), premium: round(premium, 3) };
}

type Generator = (m: DemoMarket) => RowData[];

export const GENERATORS: Readonly<Record<string, Generator>> = {
  etf_daily: (m) =>
    ETFS.flatMap((e) =>
      bars(m.etfBars, e.code).map((b) => ({
        symbol: e.code,
        date: b.date,
        ...ohlcv(b),
        amount: b.amount,
        turnover_rate: round((b.volume / 2e9) * 100, 4),
        source: SOURCE,
        updated_at: stamp(b.date),
      })),
    ),

  index_daily: (m) =>
    INDEXES.flatMap((i) =>
      bars(m.indexBars, i.code).map((b) => ({
        symbol: i.code,
        date: b.date,
        ...ohlcv(b),
        amount: round(b.volume * b.close * 0.01, 2),
        source: SOURCE,
        updated_at: stamp(b.date),
      })),
    ),

  fx: (m) =>
    FX_PAIRS.flatMap((f) =>
      bars(m.fxBars, f.pair).map((b) => ({
        symbol: f.pair,
        date: b.date,
        open: b.open,
        high: b.high,
        low: b.low,
        close: b.close,
        bid: round(b.close * 0.9998, 4),
        ask: round(b.close * 1.0002, 4),
        source: SOURCE,
        updated_at: stamp(b.date),
      })),
    ),

  qdii_nav: (m) => {
    const rng = m.rng('qdii_nav');
    return ETFS.filter((e) => e.overseas).flatMap((e) =>
      bars(m.etfBars, e.code).map((b) => {
        const { nav, premium } = navOf(rng, b.close, true);
        return {
          symbol: e.code,
          date: b.date,
          nav,
          acc_nav: round(nav + 0.12, 4),
          estimated_nav: round(nav * (1 + rng.normal() * 0.002), 4),
          premium_pct: premium,
          currency: 'CNY',
          purchase_status: premium > 3 ? '限制大额申购' : '开放申购',
          redemption_status: '开放赎回',
          source: SOURCE,
          updated_at: stamp(b.date),
        };
      }),
    );
  },

  industry_sw: () =>
    STOCKS.map((s) => ({
      symbol: s.code,
      name: s.name,
      industry_code: s.sw[4],
      industry_name: s.sw[5],
      level: 3,
      l1_code: s.sw[0],
      l1_name: s.sw[1],
      l2_code: s.sw[2],
      l2_name: s.sw[3],
      l3_code: s.sw[4],
      l3_name: s.sw[5],
      in_date: '2021-07-30',
      source: SOURCE,
      updated_at: stamp('2021-07-30'),
    })),

  stock_daily: (m) =>
    STOCKS.flatMap((s) =>
      bars(m.stockBars, s.code).map((b) => {
        const mv = b.close * s.shares;
        return {
          symbol: s.code,
          date: b.date,
          ...ohlcv(b),
          amount: b.amount,
          turnover_rate: round((b.volume / s.shares) * 100, 4),
          pe_ttm: round((s.pe * b.close) / s.price, 2),
          pb: round((s.pb * b.close) / s.price, 2),
          total_mv: round(mv, 0),
          circ_mv: round(mv * 0.92, 0),
          is_suspended: 0,
          source: SOURCE,
          updated_at: stamp(b.date),
        };
      }),
    ),

  etf_daily_features: (m) =>
    ETFS.flatMap((e) => {
      const b = bars(m.etfBars, e.code);
      const rets = returns(b);
      const e12 = ema(b, 12);
      const e26 = ema(b, 26);
      const macd = e12.map((x, i) => x - (e26[i] as number));
      const signal: number[] = [];
      macd.forEach((x, i) => signal.push(i === 0 ? x : x * (2 / 10) + (signal[i - 1] as number) * (8 / 10)));
      const rng = m.rng(`feat:${e.code}`);
      return b.map((bar, i) => ({
        symbol: e.code,
        date: bar.date,
        ret_1d: retN(b, i, 1),
        ret_5d: retN(b, i, 5),
        ret_20d: retN(b, i, 20),
        ret_60d: retN(b, i, 60),
        ma_5: ma(b, i, 5),
        ma_10: ma(b, i, 10),
        ma_20: ma(b, i, 20),
        ma_60: ma(b, i, 60),
        rsi_14: rsi(rets, i, 14),
        macd: round(macd[i] as number, 5),
        macd_signal: round(signal[i] as number, 5),
        macd_hist: round((macd[i] as number) - (signal[i] as number), 5),
        vol_20d: vol(rets, i, 20),
        amount_ma_20: i >= 19 ? round(mean(b.slice(i - 19, i + 1).map((x) => x.amount)), 2) : null,
        premium_pct: round(rng.normal() * (e.overseas ? 1.2 : 0.08), 3),
        source: SOURCE,
        updated_at: stamp(bar.date),
      }));
    }),

  etf_risk_features: (m) => {
    const bench = returns(bars(m.indexBars, '000300'));
    return ETFS.flatMap((e) => {
      const b = bars(m.etfBars, e.code);
      const rets = returns(b);
      // Month-end style: the latest day and every 20th day before it, for three windows.
      const points = b.map((_, i) => i).filter((i) => (b.length - 1 - i) % 20 === 0 && i >= 20);
      return points.flatMap((i) =>
        [20, 60, 120]
          .filter((w) => i >= w)
          .map((w) => {
            const win = rets.slice(i + 1 - w, i + 1);
            const bw = bench.slice(i + 1 - w, i + 1);
            const sd = stdev(win);
            const down = stdev(win.filter((r) => r < 0));
            const mu = mean(win);
            const mb = mean(bw);
            const cov = mean(win.map((r, k) => (r - mu) * ((bw[k] as number) - mb)));
            const varB = stdev(bw) ** 2;
            const sorted = [...win].sort((a, z) => a - z);
            const cut = Math.max(1, Math.floor(w * 0.05));
            const dd = maxDrawdown(b, i, w);
            const annual = mu * 252;
            return {
              symbol: e.code,
              date: (b[i] as Bar).date,
              window: w,
              volatility: round(sd * Math.sqrt(252) * 100, 4),
              downside_vol: round(down * Math.sqrt(252) * 100, 4),
              max_drawdown: dd,
              var_95: round((sorted[cut - 1] as number) * 100, 4),
              cvar_95: round(mean(sorted.slice(0, cut)) * 100, 4),
              beta: varB > 0 ? round(cov / varB, 4) : null,
              sharpe: sd > 0 ? round((annual - 0.02) / (sd * Math.sqrt(252)), 4) : null,
              sortino: down > 0 ? round((annual - 0.02) / (down * Math.sqrt(252)), 4) : null,
              calmar: dd < 0 ? round(annual / Math.abs(dd / 100), 4) : null,
              tracking_error: round(
                stdev(win.map((r, k) => r - (bw[k] as number))) * Math.sqrt(252) * 100,
                4,
              ),
              benchmark_code: '000300',
              source: SOURCE,
              updated_at: stamp((b[i] as Bar).date),
            };
          }),
      );
    });
  },

  etf_cross_border_features: (m) => {
    const rng = m.rng('xborder');
    return ETFS.filter((e) => e.overseas).flatMap((e) => {
      const o = e.overseas as NonNullable<typeof e.overseas>;
      const und = bars(m.indexBars, e.index);
      const fxb = bars(m.fxBars, o.fxPair);
      const prem: number[] = [];
      return bars(m.etfBars, e.code).map((b, i) => {
        const p = round(1.5 + rng.normal() * 1.2, 3);
        prem.push(p);
        const window = prem.slice(-252);
        return {
          symbol: e.code,
          date: b.date,
          region: o.region,
          overseas_ticker: o.ticker,
          underlying_index_code: e.index,
          underlying_ret_1d: retN(und, i, 1),
          fx_pair: o.fxPair,
          fx_rate: fxb[i]?.close ?? null,
          fx_ret_1d: retN(fxb, i, 1),
          nav_lag_days: o.region === 'US' ? 1 : 0,
          estimated_nav: round(b.close / (1 + p / 100), 4),
          premium_pct: p,
          premium_pctile_252d: round((window.filter((x) => x <= p).length / window.length) * 100, 2),
          source: SOURCE,
          updated_at: stamp(b.date),
        };
      });
    });
  },

  index_daily_features: (m) =>
    INDEXES.flatMap((ix) => {
      const b = bars(m.indexBars, ix.code);
      const rets = returns(b);
      return b.map((bar, i) => {
        const pe = round((ix.pe * bar.close) / ix.level, 2);
        return {
          symbol: ix.code,
          date: bar.date,
          ret_1d: retN(b, i, 1),
          ret_5d: retN(b, i, 5),
          ret_20d: retN(b, i, 20),
          ret_60d: retN(b, i, 60),
          ret_252d: retN(b, i, 252),
          vol_20d: vol(rets, i, 20),
          vol_60d: vol(rets, i, 60),
          max_drawdown_252d: maxDrawdown(b, i, 252),
          pe_ttm: pe,
          pb: round((ix.pb * bar.close) / ix.level, 3),
          dividend_yield: round(100 / pe / 3, 3),
          pe_pctile_5y: round(Math.min(99, Math.max(1, 50 + (bar.close / ix.level - 1) * 300)), 2),
          pb_pctile_5y: round(Math.min(99, Math.max(1, 45 + (bar.close / ix.level - 1) * 280)), 2),
          source: SOURCE,
          updated_at: stamp(bar.date),
        };
      });
    }),

  etf_basic: (m) => {
    const rng = m.rng('etf_basic');
    return ETFS.map((e) => {
      const b = bars(m.etfBars, e.code);
      const last = b[b.length - 1] as Bar;
      const mgmt = e.overseas ? 0.6 : e.assetClass === 'commodity' ? 0.5 : 0.15;
      return {
        code: e.code,
        name: e.name,
        category: e.category,
        asset_class: e.assetClass,
        tracking_index: e.indexName,
        tracking_index_code: e.index,
        fund_company: e.company,
        exchange: e.exchange,
        management_fee: mgmt,
        custodian_fee: 0.05,
        total_fee: round(mgmt + 0.05, 2),
        aum_billion: round(rng.between(5, 200), 2),
        avg_daily_amount_million: round(mean(b.slice(-20).map((x) => x.amount)) / 1e6, 2),
        premium_pct: navOf(rng, last.close, Boolean(e.overseas)).premium,
        latest_price: last.close,
        latest_nav: navOf(rng, last.close, Boolean(e.overseas)).nav,
        listing_date: e.listing,
        is_connected: e.overseas ? 0 : 1,
        updated_at: stamp(last.date),
      };
    });
  },

  etf_nav: (m) => {
    const rng = m.rng('etf_nav');
    return ETFS.flatMap((e) => {
      let prevNav: number | null = null;
      return bars(m.etfBars, e.code).map((b) => {
        const { nav } = navOf(rng, b.close, Boolean(e.overseas));
        const row = {
          code: e.code,
          trade_date: b.date,
          nav,
          acc_nav: round(nav + 0.25, 4),
          adj_nav: round(nav * 1.03, 4),
          daily_return_pct: prevNav === null ? null : round((nav / prevNav - 1) * 100, 4),
          source: SOURCE,
          updated_at: stamp(b.date),
        };
        prevNav = nav;
        return row;
      });
    });
  },

  etf_price: (m) => {
    const rng = m.rng('etf_price');
    return ETFS.map((e) => {
      const b = bars(m.etfBars, e.code);
      const last = b[b.length - 1] as Bar;
      const { nav, premium } = navOf(rng, last.close, Boolean(e.overseas));
      return {
        code: e.code,
        name: e.name,
        price: last.close,
        open: last.open,
        high: last.high,
        low: last.low,
        pre_close: last.preClose,
        change: last.change,
        pct_chg: last.pctChg,
        volume: last.volume,
        amount: last.amount,
        iopv: round(nav * (1 + rng.normal() * 0.0005), 4),
        nav,
        premium_pct: premium,
        trade_time: `${last.date}T07:00:00Z`,
        source: SOURCE,
        updated_at: stamp(last.date),
      };
    });
  },

  etf_size: (m) => {
    const rng = m.rng('etf_size');
    return ETFS.flatMap((e) => {
      let shares = round(rng.between(2e9, 4e10), -6);
      return bars(m.etfBars, e.code).map((b, i) => {
        const delta = i === 0 ? 0 : round(shares * rng.normal() * 0.004, -4);
        shares += delta;
        return {
          code: e.code,
          trade_date: b.date,
          shares,
          shares_change: delta,
          aum: round(shares * b.close, 0),
          nav: navOf(rng, b.close, Boolean(e.overseas)).nav,
          source: SOURCE,
          updated_at: stamp(b.date),
        };
      });
    });
  },

  etf_flow: (m) => {
    const rng = m.rng('etf_flow');
    return ETFS.flatMap((e) => {
      const b = bars(m.etfBars, e.code);
      const daily = b.map((bar) => round(bar.amount * rng.normal() * 0.08, 2));
      return b.slice(-60).flatMap((bar, k) => {
        const i = b.length - 60 + k;
        return (['1d', '5d', '20d'] as const).flatMap((period) => {
          const n = Number(period.slice(0, -1));
          const net = round(
            daily.slice(Math.max(0, i + 1 - n), i + 1).reduce((a, x) => a + x, 0),
            2,
          );
          const gross = round(Math.abs(net) + bar.amount * 0.05 * n, 2);
          return [
            {
              code: e.code,
              trade_date: bar.date,
              period,
              estimation_method: 'share_change',
              net_inflow: net,
              inflow: round((gross + net) / 2, 2),
              outflow: round((gross - net) / 2, 2),
              shares_change: round(net / bar.close, 0),
              source: SOURCE,
              updated_at: stamp(bar.date),
            },
            {
              code: e.code,
              trade_date: bar.date,
              period,
              estimation_method: 'order_flow',
              net_inflow: round(net * (0.8 + rng.next() * 0.4), 2),
              inflow: null,
              outflow: null,
              shares_change: null,
              source: SOURCE,
              updated_at: stamp(bar.date),
            },
          ];
        });
      });
    });
  },

  etf_holdings: (m) => {
    const rng = m.rng('etf_holdings');
    return ETFS.filter((e) => e.assetClass === 'equity' && !e.overseas).flatMap((e) =>
      m.quarters.slice(-4).flatMap((q) => {
        const raw = STOCKS.map(() => rng.between(0.3, 1));
        const total = raw.reduce((a, x) => a + x, 0);
        const weights = raw.map((x) => (x / total) * 60).sort((a, z) => z - a);
        return STOCKS.map((s, k) => {
          const w = round(weights[k] as number, 4);
          const value = round(w * 1e8, 2);
          return {
            code: e.code,
            report_period: q,
            holding_code: s.code,
            holding_name: s.name,
            shares: round(value / s.price, 0),
            market_value: value,
            weight_pct: w,
            rank: k + 1,
            source: SOURCE,
            updated_at: stamp(addDays(q, 21)),
          };
        });
      }),
    );
  },

  etf_pcf: (m) => {
    const rng = m.rng('etf_pcf');
    const days = m.days.slice(-5);
    return ETFS.filter((e) => e.assetClass === 'equity' && !e.overseas).flatMap((e) =>
      days.flatMap((d) => {
        const navUnit = round((bars(m.etfBars, e.code).find((b) => b.date === d)?.close ?? 1) * 1e6, 2);
        return STOCKS.slice(0, 6).map((s) => ({
          fund_code: e.code,
          trade_date: d,
          component_code: s.code,
          component_name: s.name,
          quantity: Math.round(rng.between(1, 50)) * 100,
          substitution_flag: s.code.startsWith('6') ? '允许' : '必须',
          premium_ratio: 0.1,
          discount_ratio: null,
          substitution_amount: s.code.startsWith('6') ? null : round(rng.between(1e4, 2e5), 2),
          creation_unit: 900000,
          estimated_cash: round(rng.between(-5e3, 5e4), 2),
          nav_per_unit: navUnit,
          source_type: 'exchange',
          updated_at: stamp(d),
        }));
      }),
    );
  },

  etf_holders: (m) => {
    const rng = m.rng('etf_holders');
    return ETFS.flatMap((e) =>
      m.quarters
        .filter((q) => q.endsWith('06-30') || q.endsWith('12-31'))
        .map((q) => {
          const inst = round(rng.between(20, 85), 2);
          const internal = round(rng.between(0, 0.3), 4);
          return {
            code: e.code,
            report_period: q,
            holder_count: rng.int(20_000, 900_000),
            institutional_pct: inst,
            individual_pct: round(100 - inst - internal, 4),
            internal_pct: internal,
            total_shares: round(rng.between(2e9, 4e10), -4),
            source: SOURCE,
            updated_at: stamp(addDays(q, 60)),
          };
        }),
    );
  },

  etf_dividend: (m) => {
    const rng = m.rng('etf_dividend');
    return ETFS.filter((e) => e.assetClass === 'equity' && !e.overseas).flatMap((e) =>
      [m.days[Math.floor(m.days.length / 3)], m.days[Math.floor((m.days.length * 5) / 6)]].map((ex) => {
        const exDate = ex as string;
        return {
          code: e.code,
          ex_date: exDate,
          dividend_per_unit: round(rng.between(0.01, 0.08), 3),
          announce_date: addDays(exDate, -7),
          record_date: addDays(exDate, -1),
          pay_date: addDays(exDate, 3),
          source: SOURCE,
          updated_at: stamp(addDays(exDate, -7)),
        };
      }),
    );
  },

  etf_cross_border: (m) => {
    const rng = m.rng('etf_cross_border');
    return ETFS.filter((e) => e.overseas).map((e) => {
      const o = e.overseas as NonNullable<typeof e.overseas>;
      const last = bars(m.etfBars, e.code).at(-1) as Bar;
      const fxRate = bars(m.fxBars, o.fxPair).at(-1)?.close ?? 1;
      const { nav, premium } = navOf(rng, last.close, true);
      return {
        code: e.code,
        name: e.name,
        overseas_ticker: o.ticker,
        overseas_exchange: o.exchange,
        overseas_price: round(
          ((bars(m.indexBars, e.index).at(-1)?.close ?? 100) / 40) * (1 + rng.normal() * 0.001),
          2,
        ),
        overseas_currency: o.currency,
        fx_rate: fxRate,
        price: last.close,
        nav,
        iopv: round(nav * (1 + rng.normal() * 0.001), 4),
        premium_pct: premium,
        trade_date: last.date,
        source: SOURCE,
        updated_at: stamp(last.date),
      };
    });
  },

  stock_spot: (m) =>
    STOCKS.map((s) => {
      const last = bars(m.stockBars, s.code).at(-1) as Bar;
      const mv = last.close * s.shares;
      return {
        code: s.code,
        name: s.name,
        industry: s.sw[1],
        price: last.close,
        open: last.open,
        high: last.high,
        low: last.low,
        pre_close: last.preClose,
        change: last.change,
        pct_chg: last.pctChg,
        volume: last.volume,
        amount: last.amount,
        turnover_rate: round((last.volume / s.shares) * 100, 4),
        pe_ttm: round((s.pe * last.close) / s.price, 2),
        pb: round((s.pb * last.close) / s.price, 2),
        total_mv: round(mv, 0),
        circ_mv: round(mv * 0.92, 0),
        trade_time: `${last.date}T07:00:00Z`,
        source: SOURCE,
        updated_at: stamp(last.date),
      };
    }),

  stock_financials: (m) => {
    const rng = m.rng('stock_financials');
    const typeOf = (q: string): string =>
      ({ '03-31': 'Q1', '06-30': 'H1', '09-30': 'Q3', '12-31': 'FY' })[q.slice(5)] ?? 'FY';
    return STOCKS.flatMap((s) => {
      const revenueYear = s.price * s.shares * rng.between(0.1, 0.6);
      return m.quarters.slice(-4).flatMap((q) => {
        const type = typeOf(q);
        const part = { Q1: 0.25, H1: 0.5, Q3: 0.75, FY: 1 }[type] ?? 1;
        const revenue = round(revenueYear * part * (1 + rng.normal() * 0.03), 0);
        const profit = round(revenue * ((s.price * s.shares) / s.pe / revenueYear), 0);
        const announce = addDays(q, type === 'FY' ? 100 : 28);
        const base = {
          code: s.code,
          report_date: q,
          report_type: type,
          source: SOURCE,
          announce_date: announce,
        };
        return [
          { ...base, metric: 'revenue', value: revenue, unit: 'CNY', updated_at: stamp(announce) },
          { ...base, metric: 'net_profit', value: profit, unit: 'CNY', updated_at: stamp(announce) },
          {
            ...base,
            metric: 'eps',
            value: round(profit / s.shares, 4),
            unit: 'CNY/share',
            updated_at: stamp(announce),
          },
          {
            ...base,
            metric: 'roe',
            value: round((profit / ((s.price * s.shares) / s.pb)) * 100, 3),
            unit: '%',
            updated_at: stamp(announce),
          },
        ];
      });
    });
  },

  index_constituents: (m) => {
    const rng = m.rng('index_constituents');
    const dates = m.days.filter((_, i) => (m.days.length - 1 - i) % 20 === 0).slice(-3);
    return ['000300', '000905'].flatMap((ix) =>
      dates.flatMap((d) => {
        const raw = STOCKS.map(() => rng.between(0.2, 1));
        const total = raw.reduce((a, x) => a + x, 0);
        return STOCKS.map((s, k) => ({
          index_code: ix,
          stock_code: s.code,
          stock_name: s.name,
          trade_date: d,
          weight: round(((raw[k] as number) / total) * 30, 4),
          source: SOURCE,
          updated_at: stamp(d),
        }));
      }),
    );
  },

  index_meta: () =>
    INDEXES.map((i) => ({
      index_code: i.code,
      name: i.name,
      full_name: i.fullName,
      publisher: i.publisher,
      category: i.category,
      compile_rule: '自由流通市值加权，定期调整样本',
      base_date: i.baseDate,
      base_point: i.basePoint,
      publish_date: addDays(i.baseDate, 90),
      constituent_count:
        { '000300': 300, '000905': 500, '399006': 100, '000852': 1000, NDX: 100, SPX: 503, HSI: 82 }[
          i.code
        ] ?? null,
      source: SOURCE,
      updated_at: stamp('2024-01-02'),
    })),

  macro_indicator: (m) => {
    const rng = m.rng('macro');
    const end = m.end;
    const rows: RowData[] = [];
    for (const ind of MACRO) {
      let level = ind.level;
      const periods: { period: string; date: string }[] = [];
      if (ind.frequency === 'M') {
        for (let k = 24; k >= 1; k--) {
          const d = new Date(Date.UTC(Number(end.slice(0, 4)), Number(end.slice(5, 7)) - 1 - k + 1, 0));
          const date = d.toISOString().slice(0, 10);
          periods.push({ period: date.slice(0, 7), date });
        }
      } else {
        for (const q of quarterEnds(addDays(end, -730), addDays(end, -1))) {
          periods.push({ period: `${q.slice(0, 4)}-Q${Math.ceil(Number(q.slice(5, 7)) / 3)}`, date: q });
        }
      }
      let prev: number | null = null;
      for (const p of periods) {
        level += rng.normal() * ind.step;
        const value = round(level, ind.name === 'M2' ? 0 : 2);
        rows.push({
          indicator_name: ind.name,
          period: p.period,
          date: p.date,
          value,
          unit: ind.unit,
          frequency: ind.frequency,
          release_date: addDays(p.date, ind.frequency === 'M' ? 10 : 18),
          yoy: ind.name === 'M2' ? round(8 + rng.normal(), 2) : null,
          mom: prev === null ? null : round(((value - prev) / Math.abs(prev || 1)) * 100, 3),
          source: SOURCE,
          updated_at: stamp(addDays(p.date, ind.frequency === 'M' ? 10 : 18)),
        });
        prev = value;
      }
    }
    return rows;
  },

  margin_trading: (m) => {
    const rng = m.rng('margin');
    const base = { SH: 8.1e11, SZ: 7.2e11, BJ: 4.5e9 } as const;
    const level = { ...base } as Record<'SH' | 'SZ' | 'BJ', number>;
    const rows: RowData[] = [];
    for (const d of m.days) {
      let total = 0;
      let fin = 0;
      for (const mk of ['SH', 'SZ', 'BJ'] as const) {
        const buy = level[mk] * rng.between(0.05, 0.08);
        const repay = buy * (1 + rng.normal() * 0.05);
        level[mk] = level[mk] + buy - repay;
        const sl = level[mk] * 0.008;
        rows.push({
          market: mk,
          trade_date: d,
          financing_balance: round(level[mk], 0),
          financing_buy: round(buy, 0),
          financing_repay: round(repay, 0),
          securities_lending_balance: round(sl, 0),
          securities_lending_volume: round(sl / 12, 0),
          securities_sell_volume: round((sl / 12) * 0.05, 0),
          total_balance: round(level[mk] + sl, 0),
          source: SOURCE,
          updated_at: stamp(d),
        });
        total += level[mk] + sl;
        fin += level[mk];
      }
      rows.push({
        market: 'ALL',
        trade_date: d,
        financing_balance: round(fin, 0),
        total_balance: round(total, 0),
        source: SOURCE,
        updated_at: stamp(d),
      });
    }
    return rows;
  },

  hsgt_flow: (m) => {
    const rng = m.rng('hsgt');
    const rows: RowData[] = [];
    for (const d of m.days) {
      for (const direction of ['northbound', 'southbound'] as const) {
        const channels =
          direction === 'northbound' ? ['sh_connect', 'sz_connect'] : ['sh_hk_connect', 'sz_hk_connect'];
        let totalBuy = 0;
        let totalSell = 0;
        for (const channel of channels) {
          const buy = rng.between(4e10, 8e10);
          const sell = buy * (1 + rng.normal() * 0.08);
          totalBuy += buy;
          totalSell += sell;
          // Northbound net figures have not been published since 2024-08: left null.
          const net = direction === 'northbound' && d >= '2024-08-19' ? null : round(buy - sell, 0);
          rows.push({
            direction,
            channel,
            trade_date: d,
            net_buy: net,
            buy_amount: round(buy, 0),
            sell_amount: round(sell, 0),
            net_inflow: net,
            quota_balance: direction === 'northbound' ? 5.2e10 : 4.2e10,
            hold_market_value: null,
            source: SOURCE,
            updated_at: stamp(d),
          });
        }
        const net = direction === 'northbound' && d >= '2024-08-19' ? null : round(totalBuy - totalSell, 0);
        rows.push({
          direction,
          channel: 'total',
          trade_date: d,
          net_buy: net,
          buy_amount: round(totalBuy, 0),
          sell_amount: round(totalSell, 0),
          net_inflow: net,
          source: SOURCE,
          updated_at: stamp(d),
        });
      }
    }
    return rows;
  },

  us_companies: () =>
    COMPANIES.map((c) => ({
      cik: c.cik,
      name: c.name,
      ticker: c.ticker,
      exchange: c.exchange,
      sic: c.sic,
      sic_description: c.sicDescription,
      entity_type: 'operating',
      state_of_incorporation: c.state,
      fiscal_year_end: c.fye,
      ein: c.ein,
      source: 'sec-edgar-demo',
      updated_at: stamp('2024-01-02'),
    })),

  us_filings: (m) => usFilings(m).map((f) => f.row),

  us_financial_facts: (m) => {
    const rng = m.rng('facts');
    const filings = usFilings(m);
    const rows: RowData[] = [];
    for (const c of COMPANIES) {
      const periodic = filings.filter((f) => f.cik === c.cik && (f.form === '10-Q' || f.form === '10-K'));
      for (const f of periodic) {
        const end = f.period;
        const annual = f.form === '10-K';
        const start = addDays(end, annual ? -364 : -90);
        const revenue = round(c.revenue * (annual ? 1 : 0.25) * (1 + rng.normal() * 0.04), 0);
        const income = round(revenue * c.margin * (1 + rng.normal() * 0.05), 0);
        const fy = Number(end.slice(0, 4));
        const fp = annual
          ? 'FY'
          : (`Q${Math.min(3, Math.max(1, Math.ceil(Number(end.slice(5, 7)) / 3)))}` as string);
        const common = {
          cik: c.cik,
          accession_number: f.accession,
          fy,
          fp,
          form: f.form,
          filed_date: f.filed,
          source: 'sec-edgar-demo',
          updated_at: stamp(f.filed),
        };
        const frame = annual ? `CY${fy}` : `CY${fy}Q${Math.ceil(Number(end.slice(5, 7)) / 3)}`;
        rows.push(
          {
            ...common,
            taxonomy: 'us-gaap',
            concept: 'Revenues',
            unit: 'USD',
            start_date: start,
            end_date: end,
            value: revenue,
            label: 'Revenues',
            frame,
          },
          {
            ...common,
            taxonomy: 'us-gaap',
            concept: 'NetIncomeLoss',
            unit: 'USD',
            start_date: start,
            end_date: end,
            value: income,
            label: 'Net Income (Loss) Attributable to Parent',
            frame,
          },
          {
            ...common,
            taxonomy: 'us-gaap',
            concept: 'EarningsPerShareBasic',
            unit: 'USD/shares',
            start_date: start,
            end_date: end,
            value: round(income / c.shares, 2),
            label: 'Earnings Per Share, Basic',
            frame,
          },
          // Instant facts: start_date = end_date.
          {
            ...common,
            taxonomy: 'us-gaap',
            concept: 'Assets',
            unit: 'USD',
            start_date: end,
            end_date: end,
            value: round(c.revenue * 1.1 * (1 + rng.normal() * 0.02), 0),
            label: 'Assets',
            frame: `${frame}I`,
          },
          {
            ...common,
            taxonomy: 'dei',
            concept: 'EntityCommonStockSharesOutstanding',
            unit: 'shares',
            start_date: end,
            end_date: end,
            value: round(c.shares * (1 - rng.next() * 0.01), 0),
            label: 'Entity Common Stock, Shares Outstanding',
          },
        );
      }
    }
    return rows;
  },

  us_insider_trades: (m) => {
    const rng = m.rng('insider');
    const owners = [
      { name: 'Doe Jane', title: 'Chief Financial Officer', officer: 1, director: 0 },
      { name: 'Roe Richard', title: 'Director', officer: 0, director: 1 },
      { name: 'Smith Alex', title: 'Chief Executive Officer', officer: 1, director: 1 },
    ];
    return usFilings(m)
      .filter((f) => f.form === '4')
      .flatMap((f) => {
        const c = COMPANIES.find((x) => x.cik === f.cik) as (typeof COMPANIES)[number];
        const o = owners[rng.int(0, owners.length - 1)] as (typeof owners)[number];
        const price = bars(m.usBars, c.ticker).find((b) => b.date === f.period)?.close ?? c.price;
        let owned = rng.int(50_000, 2_000_000);
        const ownerCik = String(1_500_000 + rng.int(0, 400_000)).padStart(10, '0');
        return [1, 2, 3].slice(0, rng.int(1, 3)).map((line) => {
          const sell = rng.next() < 0.7;
          const shares = rng.int(1, 40) * 500;
          owned += sell ? -shares : shares;
          return {
            accession_number: f.accession,
            line_no: line,
            issuer_cik: c.cik,
            ticker: c.ticker,
            issuer_name: c.name,
            owner_cik: ownerCik,
            owner_name: o.name,
            owner_title: o.title,
            is_director: o.director,
            is_officer: o.officer,
            is_ten_percent_owner: 0,
            security_title: 'Common Stock',
            transaction_date: f.period,
            transaction_code: sell ? 'S' : 'M',
            shares,
            price_per_share: sell ? round(price * (1 + rng.normal() * 0.005), 4) : round(price * 0.3, 2),
            acquired_disposed: sell ? 'D' : 'A',
            shares_owned_after: owned,
            direct_indirect: 'D',
            filed_date: f.filed,
            source: 'sec-edgar-demo',
            updated_at: stamp(f.filed),
          };
        });
      });
  },

  us_13f_holdings: (m) => {
    const rng = m.rng('13f');
    const extra = [
      { name: 'COCA COLA CO', cusip: '191216100', ticker: 'KO', price: 62 },
      { name: 'BANK AMER CORP', cusip: '060505104', ticker: 'BAC', price: 38 },
    ];
    const issuers = [
      ...COMPANIES.map((c) => ({
        name: c.name.toUpperCase(),
        cusip: c.cusip,
        ticker: c.ticker,
        price: c.price,
      })),
      ...extra,
    ];
    return FILERS.flatMap((filer, fi) =>
      m.quarters.slice(-2).flatMap((q, qi) => {
        const filed = addDays(q, 44);
        const accession = `${filer.cik}-${filed.slice(2, 4)}-${String(100 + fi * 10 + qi).padStart(6, '0')}`;
        return issuers.map((iss, k) => {
          const shares = rng.int(1, 900) * 1_000_000;
          return {
            accession_number: accession,
            line_no: k + 1,
            filer_cik: filer.cik,
            filer_name: filer.name,
            period_of_report: q,
            filed_date: filed,
            issuer_name: iss.name,
            title_of_class: 'COM',
            cusip: iss.cusip,
            ticker: iss.ticker,
            value_usd: round(shares * iss.price * (1 + rng.normal() * 0.05), 0),
            shares,
            share_type: 'SH',
            put_call: null,
            investment_discretion: 'SOLE',
            voting_sole: shares,
            voting_shared: 0,
            voting_none: 0,
            source: 'sec-edgar-demo',
            updated_at: stamp(filed),
          };
        });
      }),
    );
  },
};

interface DemoFiling {
  cik: string;
  form: string;
  accession: string;
  filed: string;
  period: string;
  row: RowData;
}

const filingCache = new WeakMap<DemoMarket, DemoFiling[]>();

/** EDGAR-shaped filings: 10-K / 10-Q per quarter end, 8-Ks and Form 4s, with accession numbers. */
function usFilings(m: DemoMarket): DemoFiling[] {
  const cached = filingCache.get(m);
  if (cached) return cached;
  const rng = m.rng('filings');
  const out: DemoFiling[] = [];
  for (const c of COMPANIES) {
    let seq = 1;
    const add = (form: string, period: string, filed: string, items: string | null): void => {
      // Nothing is filed after the demo's last day.
      if (filed > m.end) return;
      const accession = `${c.cik}-${filed.slice(2, 4)}-${String(seq++).padStart(6, '0')}`;
      const doc = `${c.ticker.toLowerCase()}-${period.replace(/-/g, '')}.htm`;
      out.push({
        cik: c.cik,
        form,
        accession,
        filed,
        period,
        row: {
          accession_number: accession,
          cik: c.cik,
          form,
          filed_date: filed,
          company_name: c.name,
          ticker: c.ticker,
          period_of_report: period,
          accepted_at: `${filed}T21:${String(rng.int(0, 59)).padStart(2, '0')}:00Z`,
          primary_document: form === '4' ? 'form4.xml' : doc,
          document_url: `https://www.sec.gov/Archives/edgar/data/${Number(c.cik)}/${accession.replace(/-/g, '')}/${form === '4' ? 'form4.xml' : doc}`,
          size: rng.int(8_000, 12_000_000),
          is_xbrl: form === '4' ? 0 : 1,
          items,
          source: 'sec-edgar-demo',
          updated_at: stamp(filed),
        },
      });
    };
    for (const q of m.quarters.slice(-4)) {
      const annual = q.endsWith('12-31');
      add(annual ? '10-K' : '10-Q', q, addDays(q, annual ? 55 : 35), null);
      add('8-K', addDays(q, 25), addDays(q, 27), '2.02,9.01');
    }
    for (const d of m.days.filter((_, i) => i % 25 === 7)) add('4', d, addDays(d, 2), null);
  }
  filingCache.set(m, out);
  return out;
}

/** Every dataset's demo rows. */
export function generateDemo(opts: DemoOptions): Map<string, RowData[]> {
  const market = new DemoMarket(opts);
  const out = new Map<string, RowData[]>();
  for (const [name, gen] of Object.entries(GENERATORS)) out.set(name, gen(market));
  return out;
}
