import type { BlocksDeclaration, DatasetDeclaration } from '../types.js';

// Intraday bars (datasets.md "Intraday bars", issue 30): one row per instrument and minute,
// stored as one compressed block per code, trading date and source (docs/minute-bars.md).

const A_SHARE_BLOCKS: BlocksDeclaration = {
  code: 'symbol',
  date: 'date',
  time: 'time',
  bar: { open: 'open', high: 'high', low: 'low', close: 'close', volume: 'volume', amount: 'amount' },
  utcOffset: '+08:00',
  sessions: ['09:30-11:30', '13:00-15:00'],
};

// The factors of stock_daily and etf_daily: a minute bar is adjusted as its day's bar. Indexes,
// like index_daily, are not adjusted.
const ADJUSTED_BLOCKS: BlocksDeclaration = { ...A_SHARE_BLOCKS, adjust: { factors: 'adj_factor' } };

function minute(
  name: string,
  description: string,
  endpoint: string,
  codeName: string,
  volume: 'number' | 'number!',
  blocks: BlocksDeclaration,
): DatasetDeclaration {
  return {
    name,
    layer: 'standardized',
    description,
    endpoint,
    fields: {
      symbol: 'string!',
      date: 'date!',
      time: {
        type: 'timestamp',
        required: true,
        description: "the bar's end minute, with the exchange's offset",
      },
      open: 'number!',
      high: 'number!',
      low: 'number!',
      close: 'number!',
      volume,
      amount: 'number',
      source: 'string!',
      updated_at: 'timestamp',
    },
    rename: { symbol: codeName },
    key: ['symbol', 'time', 'source'],
    partition: 'date',
    range: 'date',
    sort: { field: 'time', order: 'desc' },
    exact: [codeName, 'date', 'source'],
    codes: { market: 'cn', fields: [codeName] },
    blocks,
  };
}

const stockMinute = minute(
  'stock_minute',
  'A-share 1-minute bars',
  '/api/v1/stock/minute',
  'code',
  'number!',
  { ...ADJUSTED_BLOCKS, daily: 'stock_daily' },
);
const etfMinute = minute('etf_minute', 'ETF 1-minute bars', '/api/v1/etf/minute', 'code', 'number!', {
  ...ADJUSTED_BLOCKS,
  daily: 'etf_daily',
});
const indexMinute = minute(
  'index_minute',
  'Index 1-minute bars (volume and amount optional)',
  '/api/v1/index/minute',
  'index_code',
  'number',
  { ...A_SHARE_BLOCKS, daily: 'index_daily' },
);

/** This file's datasets, in the order the docs list them (a declaration left out of it is an unused variable). */
export const MINUTE_DATASETS: readonly DatasetDeclaration[] = [stockMinute, etfMinute, indexMinute];
