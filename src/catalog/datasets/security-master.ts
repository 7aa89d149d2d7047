import type { DatasetDeclaration } from '../types.js';

// The security master: which codes existed, under which name, in which index and within which
// price limits on a day — what a survivorship-free universe is built from (docs/universes.md).
// A-share codes are six digits, found under every spelling the query side accepts.

const stockBasic: DatasetDeclaration = {
  name: 'stock_basic',
  layer: 'reference',
  description: 'A-share listings: exchange, board, list and delist dates, listing status',
  endpoint: '/api/v1/stock/basic',
  fields: {
    code: 'string!',
    name: { type: 'string', required: true, description: 'the current (or last) name' },
    exchange: { type: 'string', required: true, enum: ['SH', 'SZ', 'BJ'] },
    board: { type: 'string', enum: ['main', 'star', 'chinext', 'bse'] },
    list_date: { type: 'date', required: true, description: 'first trading day' },
    delist_date: { type: 'date', description: 'delisting day; null while listed' },
    list_status: {
      type: 'string',
      required: true,
      enum: ['L', 'D', 'P'],
      description: 'L listed, D delisted, P listing suspended',
    },
    industry: 'string',
    area: 'string',
    source: 'string!',
    updated_at: 'timestamp',
  },
  key: ['code', 'source'],
  partition: null,
  range: null,
  sort: { field: 'code', order: 'asc' },
  exact: ['code', 'exchange', 'board', 'list_status', 'source'],
  codes: { market: 'cn', fields: ['code'] },
  like: ['name'],
};

const stockNames: DatasetDeclaration = {
  name: 'stock_names',
  layer: 'reference',
  description: 'A-share name history (a name beginning ST or *ST marks the code ST for its span)',
  endpoint: '/api/v1/stock/names',
  fields: {
    code: 'string!',
    name: 'string!',
    start_date: { type: 'date', required: true, description: 'first day of the name' },
    end_date: { type: 'date', description: 'last day of the name; null: still in use' },
    reason: { type: 'string', description: 'e.g. ST, *ST, rename, ST removed' },
    announce_date: 'date',
    source: 'string!',
    updated_at: 'timestamp',
  },
  key: ['code', 'start_date', 'source'],
  partition: null,
  range: 'start_date',
  sort: { field: 'start_date', order: 'desc' },
  exact: ['code', 'reason', 'source'],
  codes: { market: 'cn', fields: ['code'] },
  like: ['name'],
};

const indexMembers: DatasetDeclaration = {
  name: 'index_members',
  layer: 'reference',
  description: 'Index membership intervals (first and last day as a member)',
  endpoint: '/api/v1/index/members',
  fields: {
    index_code: 'string!',
    stock_code: 'string!',
    in_date: { type: 'date', required: true, description: 'first day as a member' },
    out_date: { type: 'date', description: 'last day as a member; null: still a member' },
    source: 'string!',
    updated_at: 'timestamp',
  },
  key: ['index_code', 'stock_code', 'in_date', 'source'],
  partition: null,
  range: 'in_date',
  sort: { field: 'in_date', order: 'desc' },
  exact: ['index_code', 'stock_code', 'source'],
  codes: { market: 'cn', fields: ['index_code', 'stock_code'] },
};

const stockLimit: DatasetDeclaration = {
  name: 'stock_limit',
  layer: 'reference',
  description: 'A-share daily price limits',
  endpoint: '/api/v1/stock/limit',
  fields: {
    code: 'string!',
    trade_date: 'date!',
    pre_close: 'number',
    up_limit: { type: 'number', required: true, description: 'the highest price allowed that day' },
    down_limit: { type: 'number', required: true, description: 'the lowest price allowed that day' },
    source: 'string!',
    updated_at: 'timestamp',
  },
  units: { up_limit: 'CNY', down_limit: 'CNY' },
  key: ['code', 'trade_date', 'source'],
  partition: 'trade_date',
  range: 'trade_date',
  sort: { field: 'trade_date', order: 'desc' },
  exact: ['code', 'trade_date', 'source'],
  codes: { market: 'cn', fields: ['code'] },
};

const usTickers: DatasetDeclaration = {
  name: 'us_tickers',
  layer: 'us',
  description: 'US ticker history per CIK (a CIK that changed its ticker has one row per ticker)',
  endpoint: '/api/v1/us/tickers',
  fields: {
    cik: {
      type: 'string',
      required: true,
      pattern: '^\\d{10}$',
      description: 'SEC CIK, 10-digit zero-padded',
    },
    ticker: 'string!',
    start_date: { type: 'date', required: true, description: 'first day under this ticker' },
    end_date: { type: 'date', description: 'last day under this ticker; null: current' },
    exchange: 'string',
    source: 'string',
    updated_at: 'timestamp',
  },
  key: ['cik', 'ticker', 'start_date'],
  partition: null,
  range: 'start_date',
  sort: { field: 'start_date', order: 'desc' },
  exact: ['cik', 'ticker', 'exchange'],
  codes: { market: 'us', fields: ['cik', 'ticker'] },
};

/** This file's datasets, in the order the docs list them (a declaration left out of it is an unused variable). */
export const SECURITY_MASTER_DATASETS: readonly DatasetDeclaration[] = [
  stockBasic,
  stockNames,
  indexMembers,
  stockLimit,
  usTickers,
];
