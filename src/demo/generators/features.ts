import type { DatasetName } from '../../client/query-client.js';
import { type Generator, bars, dailyRow } from '../demo-market.js';
import { type Bar, ema, ma, maxDrawdown, mean, retN, returns, rsi, stdev, vol } from '../market.js';
import { round } from '../random.js';
import { ETFS, INDEXES } from '../universe.js';

// Feature factor layer: indicators computed from the demo price paths.

export const featureGenerators = {
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
      return b.map((bar, i) =>
        dailyRow(e.code, bar.date, {
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
        }),
      );
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
            return dailyRow(e.code, (b[i] as Bar).date, {
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
            });
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
        return dailyRow(e.code, b.date, {
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
        });
      });
    });
  },

  index_daily_features: (m) =>
    INDEXES.flatMap((ix) => {
      const b = bars(m.indexBars, ix.code);
      const rets = returns(b);
      return b.map((bar, i) => {
        const pe = round((ix.pe * bar.close) / ix.level, 2);
        return dailyRow(ix.code, bar.date, {
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
        });
      });
    }),
} satisfies Partial<Record<DatasetName, Generator>>;
