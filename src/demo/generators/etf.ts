import type { DatasetName } from '../../client/query-client.js';
import { type Generator, SOURCE, bars, navOf, stamp, spotQuote } from '../demo-market.js';
import { type Bar, mean } from '../market.js';
import { addDays, round } from '../random.js';
import { ETFS, STOCKS } from '../universe.js';

// ETF query-interface datasets.

export const etfGenerators = {
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
        ...spotQuote(last),
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
} satisfies Partial<Record<DatasetName, Generator>>;
