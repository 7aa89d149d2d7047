import type { DatasetName } from '../../client/query-client.js';
import { type Generator, SOURCE, bars, navOf, ohlcv, stamp, dailyRow } from '../demo-market.js';
import { round } from '../random.js';
import { ETFS, FX_PAIRS, INDEXES, STOCKS } from '../universe.js';
import { ALL_STOCKS } from '../security-master.js';

// Standardized market data layer: daily bars of ETFs, indexes, FX and stocks; QDII NAVs; industries.

export const standardizedGenerators = {
  etf_daily: (m) =>
    ETFS.flatMap((e) =>
      bars(m.etfBars, e.code).map((b) =>
        dailyRow(e.code, b.date, {
          ...ohlcv(b),
          amount: b.amount,
          turnover_rate: round((b.volume / 2e9) * 100, 4),
        }),
      ),
    ),

  index_daily: (m) =>
    INDEXES.flatMap((i) =>
      bars(m.indexBars, i.code).map((b) =>
        dailyRow(i.code, b.date, {
          ...ohlcv(b),
          amount: round(b.volume * b.close * 0.01, 2),
        }),
      ),
    ),

  fx: (m) =>
    FX_PAIRS.flatMap((f) =>
      bars(m.fxBars, f.pair).map((b) =>
        dailyRow(f.pair, b.date, {
          open: b.open,
          high: b.high,
          low: b.low,
          close: b.close,
          bid: round(b.close * 0.9998, 4),
          ask: round(b.close * 1.0002, 4),
        }),
      ),
    ),

  qdii_nav: (m) => {
    const rng = m.rng('qdii_nav');
    return ETFS.filter((e) => e.overseas).flatMap((e) =>
      bars(m.etfBars, e.code).map((b) => {
        const { nav, premium } = navOf(rng, b.close, true);
        return dailyRow(e.code, b.date, {
          nav,
          acc_nav: round(nav + 0.12, 4),
          estimated_nav: round(nav * (1 + rng.normal() * 0.002), 4),
          premium_pct: premium,
          currency: 'CNY',
          purchase_status: premium > 3 ? '限制大额申购' : '开放申购',
          redemption_status: '开放赎回',
        });
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
    ALL_STOCKS.flatMap((s) =>
      bars(m.stockBars, s.code).map((b) => {
        const mv = b.close * s.shares;
        return dailyRow(s.code, b.date, {
          ...ohlcv(b),
          amount: b.amount,
          turnover_rate: round((b.volume / s.shares) * 100, 4),
          pe_ttm: round((s.pe * b.close) / s.price, 2),
          pb: round((s.pb * b.close) / s.price, 2),
          total_mv: round(mv, 0),
          circ_mv: round(mv * 0.92, 0),
          is_suspended: 0,
        });
      }),
    ),
} satisfies Partial<Record<DatasetName, Generator>>;
