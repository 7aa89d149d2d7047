import type { DatasetName } from '../../client/query-client.js';
import { type Generator, SOURCE, bars, stamp, spotQuote } from '../demo-market.js';
import type { Bar } from '../market.js';
import { addDays, quarterEnds, round } from '../random.js';
import { INDEXES, MACRO, STOCKS } from '../universe.js';
import type { RowData } from '../../client/batch-builder.js';

// A-share, index, macro and market datasets.

export const stockIndexMacroGenerators = {
  stock_spot: (m) =>
    STOCKS.map((s) => {
      const last = bars(m.stockBars, s.code).at(-1) as Bar;
      const mv = last.close * s.shares;
      return {
        code: s.code,
        name: s.name,
        industry: s.sw[1],
        ...spotQuote(last),
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
        const release = addDays(p.date, ind.frequency === 'M' ? 10 : 18);
        // A figure not yet published on the demo's last day is not in its data (a point-in-time
        // study must not read it early). The random draws above stay, so later values do not move.
        const mom = prev === null ? null : round(((value - prev) / Math.abs(prev || 1)) * 100, 3);
        const yoy = ind.name === 'M2' ? round(8 + rng.normal(), 2) : null;
        prev = value;
        if (release > end) continue;
        rows.push({
          indicator_name: ind.name,
          period: p.period,
          date: p.date,
          value,
          unit: ind.unit,
          frequency: ind.frequency,
          release_date: release,
          yoy,
          mom,
          source: SOURCE,
          updated_at: stamp(release),
        });
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
} satisfies Partial<Record<DatasetName, Generator>>;
