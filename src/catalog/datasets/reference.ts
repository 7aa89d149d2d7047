import type { DatasetDeclaration } from '../types.js';

// Reference data for research-grade bars: adjustment factors, corporate actions and the
// trading calendar. Ingest carries `symbol`; rows return it as `code`.

const adjFactor: DatasetDeclaration = {
  name: 'adj_factor',
  layer: 'reference',
  description: 'Cumulative price adjustment factors (adjust=qfq|hfq)',
  endpoint: '/api/v1/market/adj-factor',
  fields: {
    symbol: { type: 'string', required: true, description: 'ETF or stock code' },
    date: { type: 'date', required: true, description: 'the factor is in force from this date on' },
    adj_factor: {
      type: 'number',
      required: true,
      exclusiveMinimum: 0,
      description: 'the cumulative adjustment factor (> 0)',
    },
    source: 'string!',
    updated_at: 'timestamp',
  },
  rename: { symbol: 'code' },
  key: ['symbol', 'date', 'source'],
  partition: 'date',
  range: 'date',
  sort: { field: 'date', order: 'desc' },
  exact: ['code', 'date', 'source'],
  codes: { market: 'cn', fields: ['code'] },
  factors: { code: 'symbol', date: 'date', value: 'adj_factor' },
};

const corporateActions: DatasetDeclaration = {
  name: 'corporate_actions',
  layer: 'reference',
  description: 'Corporate actions: dividends, splits, bonus and rights issues',
  endpoint: '/api/v1/market/corporate-actions',
  fields: {
    symbol: 'string!',
    ex_date: 'date!',
    action: { type: 'string', required: true, enum: ['dividend', 'split', 'bonus', 'rights', 'other'] },
    cash_per_share: { type: 'number', description: 'cash dividend per share, before tax' },
    share_ratio: { type: 'number', description: 'new shares per existing share' },
    rights_price: 'number',
    record_date: 'date',
    pay_date: 'date',
    announce_date: 'date',
    description: 'string',
    source: 'string!',
    updated_at: 'timestamp',
  },
  rename: { symbol: 'code' },
  key: ['symbol', 'ex_date', 'action', 'source'],
  partition: 'ex_date',
  range: 'ex_date',
  sort: { field: 'ex_date', order: 'desc' },
  exact: ['code', 'ex_date', 'action', 'source'],
  codes: { market: 'cn', fields: ['code'] },
};

const tradeCalendar: DatasetDeclaration = {
  name: 'trade_calendar',
  layer: 'reference',
  description: 'Trading calendars of exchanges (open and closed days)',
  endpoint: '/api/v1/market/trade-calendar',
  fields: {
    exchange: { type: 'string', required: true, description: 'SSE, SZSE, BSE, HKEX, NYSE, NASDAQ, …' },
    date: 'date!',
    is_open: { type: 'flag', required: true, description: '1 on trading days' },
    source: 'string!',
    pretrade_date: { type: 'date', description: 'the previous open day' },
    updated_at: 'timestamp',
  },
  key: ['exchange', 'date', 'source'],
  partition: null,
  range: 'date',
  sort: { field: 'date', order: 'asc' },
  exact: ['exchange', 'date', 'is_open', 'source'],
  calendar: { exchange: 'exchange', date: 'date', isOpen: 'is_open' },
};

/** This file's datasets, in the order the docs list them (a declaration left out of it is an unused variable). */
export const REFERENCE_DATASETS: readonly DatasetDeclaration[] = [adjFactor, corporateActions, tradeCalendar];
