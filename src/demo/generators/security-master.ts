import type { DatasetName } from '../../client/query-client.js';
import { type DemoMarket, type Generator, SOURCE, bars, stamp } from '../demo-market.js';
import { addDays, round } from '../random.js';
import { COMPANIES } from '../universe.js';
import {
  ALL_STOCKS,
  INDEX_MEMBERS,
  NAME_CHANGES,
  TICKER_CHANGES,
  dayAt,
  type ListedStock,
} from '../security-master.js';

// The security master (../security-master.ts): listings, name histories, index membership
// intervals and price limits of the demo A-shares, and the demo US ticker history.

/** The trading day before `date` in the demo history (a span's last day), else the calendar day before. */
function dayBefore(m: DemoMarket, date: string): string {
  const i = m.days.indexOf(date);
  return i > 0 ? (m.days[i - 1] as string) : addDays(date, -1);
}

/** A code's name spans: its changes inside the window, or its one name since listing. */
function nameSpans(m: DemoMarket, s: ListedStock & { name: string }) {
  const spans = NAME_CHANGES[s.code] ?? [{ name: s.name, from: s.listed, reason: null }];
  return spans.map((span, i) => {
    const next = spans[i + 1];
    const start = dayAt(m.days, span.from);
    return {
      name: span.name,
      start,
      end: next ? dayBefore(m, dayAt(m.days, next.from)) : null,
      reason: span.reason,
    };
  });
}

/** A name starting ST or *ST: the exchange's 5% limit applies. */
const isSt = (name: string): boolean => /^\*?ST/.test(name);

/** The daily limit as a share of the previous close, by board and ST state. */
function limitShare(s: ListedStock, st: boolean): number {
  if (st) return 0.05;
  if (s.board === 'star' || s.board === 'chinext') return 0.2;
  return s.board === 'bse' ? 0.3 : 0.1;
}

export const securityMasterGenerators = {
  stock_basic: (m) =>
    ALL_STOCKS.map((s) => {
      const spans = nameSpans(m, s);
      const delist = s.delistedAt === undefined ? null : dayAt(m.days, s.delistedAt);
      return {
        code: s.code,
        name: (spans[spans.length - 1] as { name: string }).name,
        exchange: s.exchange,
        board: s.board,
        list_date: dayAt(m.days, s.listed),
        delist_date: delist,
        list_status: delist === null ? 'L' : 'D',
        industry: s.sw[1],
        area: s.area,
        source: SOURCE,
        updated_at: stamp(m.end),
      };
    }),

  stock_names: (m) =>
    ALL_STOCKS.flatMap((s) =>
      nameSpans(m, s).map((span) => ({
        code: s.code,
        name: span.name,
        start_date: span.start,
        end_date: span.end,
        reason: span.reason,
        announce_date: span.reason === null ? null : addDays(span.start, -3),
        source: SOURCE,
        updated_at: stamp(span.start < (m.days[0] as string) ? (m.days[0] as string) : span.start),
      })),
    ),

  index_members: (m) =>
    Object.entries(INDEX_MEMBERS).flatMap(([index, spans]) =>
      spans.map((span) => {
        const inDate = dayAt(m.days, span.in);
        return {
          index_code: index,
          stock_code: span.code,
          in_date: inDate,
          out_date: span.out === null ? null : dayAt(m.days, span.out),
          source: SOURCE,
          updated_at: stamp(inDate < (m.days[0] as string) ? (m.days[0] as string) : inDate),
        };
      }),
    ),

  stock_limit: (m) =>
    ALL_STOCKS.flatMap((s) => {
      const spans = nameSpans(m, s);
      return bars(m.stockBars, s.code).map((b) => {
        const name = spans.findLast((x) => x.start <= b.date)?.name ?? s.name;
        const share = limitShare(s, isSt(name));
        return {
          code: s.code,
          trade_date: b.date,
          pre_close: b.preClose,
          up_limit: round(b.preClose * (1 + share), 2),
          down_limit: round(b.preClose * (1 - share), 2),
          source: SOURCE,
          updated_at: stamp(b.date),
        };
      });
    }),

  us_tickers: () => [
    ...COMPANIES.map((c) => ({
      cik: c.cik,
      ticker: c.ticker,
      start_date: '2004-01-02',
      end_date: null,
      exchange: c.exchange,
      source: 'sec-edgar-demo',
      updated_at: stamp('2024-01-02'),
    })),
    ...TICKER_CHANGES.map((t) => ({
      cik: t.cik,
      ticker: t.ticker,
      start_date: t.start,
      end_date: t.end,
      exchange: t.exchange,
      source: 'sec-edgar-demo',
      updated_at: stamp('2024-01-02'),
    })),
  ],
} satisfies Partial<Record<DatasetName, Generator>>;
