import type { DemoStock } from './universe.js';
import { STOCKS } from './universe.js';

/**
 * The demo security master: who was listed, under which name, ST or not, and in which index,
 * on each demo day. Events are placed at shares of the demo history (so every window shows
 * them): two codes delisted inside it, one listed inside it, one suspended over its last days,
 * a *ST span, an ST span that ends, a rename, and an index exit with its re-entry.
 * docs/universes.md walks through them.
 */

export type Board = 'main' | 'star' | 'chinext' | 'bse';

export interface ListedStock {
  code: string;
  /** Exchange as stock_basic writes it. */
  exchange: 'SH' | 'SZ' | 'BJ';
  board: Board;
  /** A fixed listing day before the demo history, or a share of it (listed inside the window). */
  listed: string | number;
  /** Share of the history at which the code is delisted (its delist_date; last bar the day before). */
  delistedAt?: number;
  /** Share of the history after which no bars exist though the code stays listed (a suspension). */
  suspendedFrom?: number;
  area: string;
}

/** Codes that trade in the demo besides STOCKS: they have bars only while listed and not suspended. */
export const EXTRA_STOCKS: readonly (DemoStock & ListedStock)[] = [
  {
    code: '600087',
    name: '长航油运',
    price: 2.1,
    sw: ['801170', '交通运输', '801178', '航运港口', '851781', '航运'],
    shares: 3.4e9,
    pe: 40,
    pb: 1.1,
    exchange: 'SH',
    board: 'main',
    listed: '1997-06-23',
    delistedAt: 0.5,
    area: '湖北',
  },
  {
    code: '000018',
    name: '神州长城',
    price: 3.2,
    sw: ['801720', '建筑装饰', '801721', '房屋建设Ⅱ', '857211', '房屋建设Ⅲ'],
    shares: 1.7e9,
    pe: 30,
    pb: 1.4,
    exchange: 'SZ',
    board: 'main',
    listed: '1992-06-16',
    delistedAt: 0.7,
    area: '北京',
  },
  {
    code: '600610',
    name: '中毅达',
    price: 6.5,
    sw: ['801030', '基础化工', '801033', '化学原料', '850321', '纯碱'],
    shares: 1.07e9,
    pe: 55,
    pb: 3.1,
    exchange: 'SH',
    board: 'main',
    listed: '1992-03-27',
    suspendedFrom: 0.98,
    area: '贵州',
  },
  {
    code: '688981',
    name: '中芯国际',
    price: 55,
    sw: ['801080', '电子', '801081', '半导体', '850812', '集成电路制造'],
    shares: 7.9e9,
    pe: 60,
    pb: 3.5,
    exchange: 'SH',
    board: 'star',
    listed: 0.3,
    area: '上海',
  },
];

/** Listing facts of STOCKS (real listing days; every one listed before any demo history). */
const LISTINGS: Record<string, Omit<ListedStock, 'code'>> = {
  '600519': { exchange: 'SH', board: 'main', listed: '2001-08-27', area: '贵州' },
  '000858': { exchange: 'SZ', board: 'main', listed: '1998-04-27', area: '四川' },
  '000001': { exchange: 'SZ', board: 'main', listed: '1991-04-03', area: '深圳' },
  '600036': { exchange: 'SH', board: 'main', listed: '2002-04-09', area: '深圳' },
  '601318': { exchange: 'SH', board: 'main', listed: '2007-03-01', area: '深圳' },
  '000333': { exchange: 'SZ', board: 'main', listed: '2013-09-18', area: '广东' },
  '300750': { exchange: 'SZ', board: 'chinext', listed: '2018-06-11', area: '福建' },
  '601012': { exchange: 'SH', board: 'main', listed: '2012-04-11', area: '陕西' },
  '002594': { exchange: 'SZ', board: 'main', listed: '2011-06-30', area: '深圳' },
  '600900': { exchange: 'SH', board: 'main', listed: '2003-11-18', area: '北京' },
};

/** Every demo A-share with its listing facts: STOCKS, then the extra codes. */
export const ALL_STOCKS: readonly (DemoStock & ListedStock)[] = [
  ...STOCKS.map((s) => ({ ...s, ...(LISTINGS[s.code] as Omit<ListedStock, 'code'>) })),
  ...EXTRA_STOCKS,
];

/** A name span: from the share `from` (or a fixed day) of the history to the next span. */
export interface NameSpan {
  name: string;
  from: string | number;
  reason: string | null;
}

/** Name histories that change inside the demo window; every other code keeps its one name. */
/** The day at a share of the demo history (0: its first day, 1: its last), or a fixed day as given. */
export function dayAt(days: readonly string[], at: string | number): string {
  if (typeof at === 'string') return at;
  return days[Math.round((days.length - 1) * at)] as string;
}

/** Whether a code has a bar on a demo day: listed, not yet delisted, not suspended. */
export function trades(days: readonly string[], s: ListedStock, date: string): boolean {
  if (date < dayAt(days, s.listed)) return false;
  if (s.delistedAt !== undefined && date >= dayAt(days, s.delistedAt)) return false;
  return s.suspendedFrom === undefined || date < dayAt(days, s.suspendedFrom);
}

export const NAME_CHANGES: Record<string, readonly NameSpan[]> = {
  '600087': [
    { name: '长航油运', from: '1997-06-23', reason: null },
    { name: '*ST长油', from: 0.2, reason: '*ST' },
  ],
  '600610': [
    { name: '中毅达', from: '1992-03-27', reason: null },
    { name: 'ST中毅', from: 0.3, reason: 'ST' },
    { name: '中毅达', from: 0.45, reason: 'ST removed' },
  ],
  '601012': [
    { name: '隆基股份', from: '2012-04-11', reason: null },
    { name: '隆基绿能', from: 0.4, reason: 'rename' },
  ],
};

/** One membership interval: in from a fixed day or a share of the history, out at a share (last day). */
export interface MemberSpan {
  code: string;
  in: string | number;
  out: number | null;
}

/**
 * CSI 300's membership intervals. 000905 has only its index_constituents snapshots (the
 * universe falls back to them) and 399006 neither (the universe says it cannot judge it).
 */
export const INDEX_MEMBERS: Record<string, readonly MemberSpan[]> = {
  '000300': [
    { code: '600519', in: '2005-04-08', out: null },
    { code: '000858', in: '2005-04-08', out: null },
    { code: '000001', in: '2005-04-08', out: null },
    { code: '600036', in: '2005-04-08', out: null },
    { code: '601318', in: '2007-07-02', out: null },
    { code: '000333', in: '2013-12-16', out: null },
    { code: '601012', in: '2019-06-17', out: null },
    { code: '600900', in: '2005-04-08', out: null },
    { code: '300750', in: 0.2, out: null },
    { code: '002594', in: '2011-12-12', out: 0.35 },
    { code: '002594', in: 0.7, out: null },
    { code: '600087', in: '2005-04-08', out: 0.15 },
  ],
};

/** The US ticker history: every demo company under its ticker, and FB → META under one CIK. */
export const TICKER_CHANGES: readonly {
  cik: string;
  ticker: string;
  start: string;
  end: string | null;
  exchange: string;
}[] = [
  { cik: '0001326801', ticker: 'FB', start: '2012-05-18', end: '2022-06-08', exchange: 'NASDAQ' },
  { cik: '0001326801', ticker: 'META', start: '2022-06-09', end: null, exchange: 'NASDAQ' },
];
