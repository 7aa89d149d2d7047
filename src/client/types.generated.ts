// Generated from the OpenAPI document by src/client/generate-types.ts. Do not edit:
// run `npx tsx src/client/generate-types.ts` after changing the catalog.

/** A row of /api/v1/etf/kline (dataset etf_daily). */
export interface EtfDailyRow {
  code: string;
  /** YYYY-MM-DD */
  date: string;
  /** unit: CNY */
  open: number | null;
  /** unit: CNY */
  high: number | null;
  /** unit: CNY */
  low: number | null;
  /** unit: CNY */
  close: number;
  /** unit: CNY */
  pre_close: number | null;
  /** unit: CNY */
  change: number | null;
  /** unit: % */
  pct_chg: number | null;
  /** unit: shares */
  volume: number;
  /** unit: CNY */
  amount: number | null;
  /** unit: % */
  turnover_rate: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** YYYY-MM-DD; resampled rows: the date of the first bar in the period */
  period_start: string;
  /** resampled rows: how many daily bars the period holds; unit: count */
  bar_count: number;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/etf/kline. */
export interface EtfDailyParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** adjusted prices (open, high, low, close, pre_close): hfq = price × the adj_factor in force on the bar's date; qfq = that ÷ the anchor's factor; change recomputed, pct_chg and volume as stored, no rounding (docs/bars-and-quality.md) */
  adjust?: 'none' | 'qfq' | 'hfq';
  /** qfq only: divide by the factor in force on this date, or `end`: at each code's last bar in the answer's window (that bar equals its raw price); default: each code's latest factor. meta.adjust.factors names the anchor date used per code */
  adjust_anchor?: string;
  /** the factors' source for every bar (400 naming the sources there are when it has none); default: each bar's own source when it has factors for the code, else the code's only factor source */
  adjust_source?: string;
  /** one row per code, source and ISO week (1w), calendar month (1M), quarter (1Q) or year (1Y), adjusted first: open first, high max, low min, close last, volume sum, amount sum, turnover_rate sum, updated_at max, created_at max; pre_close the previous period's close, change and pct_chg recomputed; date the last bar's; rows add period_start and bar_count */
  interval?: '1d' | '1w' | '1M' | '1Q' | '1Y';
  /** an index code (000300, 000300.SH): each row only where its code was a member of the index on the row's date, by the index_members intervals (resampled rows: from the member days only); a survivorship-free panel (docs/universes.md). 400 for an index without membership intervals */
  universe?: string | number;
  /** a cross-section: for each code, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key. Under adjust, a price field sorts by its adjusted value */
  sort?: keyof EtfDailyRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, date, open, high, low, close, pre_close, change, pct_chg, volume, amount, turnover_rate, source, updated_at, created_at, period_start, bar_count. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfDailyRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/index/price (dataset index_daily). */
export interface IndexDailyRow {
  index_code: string;
  /** YYYY-MM-DD */
  trade_date: string;
  /** unit: index points */
  open: number | null;
  /** unit: index points */
  high: number | null;
  /** unit: index points */
  low: number | null;
  /** unit: index points */
  close: number;
  /** unit: index points */
  pre_close: number | null;
  /** unit: index points */
  change: number | null;
  /** daily return, percent; unit: % */
  pct_chg: number | null;
  /** unit: shares */
  volume: number | null;
  /** unit: CNY */
  amount: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** YYYY-MM-DD; resampled rows: the date of the first bar in the period */
  period_start: string;
  /** resampled rows: how many daily bars the period holds; unit: count */
  bar_count: number;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/index/price. */
export interface IndexDailyParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  index_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  trade_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** one row per code, source and ISO week (1w), calendar month (1M), quarter (1Q) or year (1Y), adjusted first: open first, high max, low min, close last, volume sum, amount sum, updated_at max, created_at max; pre_close the previous period's close, change and pct_chg recomputed; date the last bar's; rows add period_start and bar_count */
  interval?: '1d' | '1w' | '1M' | '1Q' | '1Y';
  /** an index code (000300, 000300.SH): each row only where its code was a member of the index on the row's date, by the index_members intervals (resampled rows: from the member days only); a survivorship-free panel (docs/universes.md). 400 for an index without membership intervals */
  universe?: string | number;
  /** a cross-section: for each index_code, source, the row with the latest trade_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof IndexDailyRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: index_code, trade_date, open, high, low, close, pre_close, change, pct_chg, volume, amount, source, updated_at, created_at, period_start, bar_count. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof IndexDailyRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/market/fx (dataset fx). */
export interface FxRow {
  /** currency pair, e.g. USDCNY */
  code: string;
  /** YYYY-MM-DD */
  date: string;
  /** unit: quote currency */
  open: number | null;
  /** unit: quote currency */
  high: number | null;
  /** unit: quote currency */
  low: number | null;
  /** unit: quote currency */
  close: number;
  /** unit: quote currency */
  bid: number | null;
  /** unit: quote currency */
  ask: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/market/fx. */
export interface FxParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** an index code (000300, 000300.SH): each row only where its code was a member of the index on the row's date, by the index_members intervals (resampled rows: from the member days only); a survivorship-free panel (docs/universes.md). 400 for an index without membership intervals */
  universe?: string | number;
  /** a cross-section: for each code, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof FxRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, date, open, high, low, close, bid, ask, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof FxRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/qdii-nav (dataset qdii_nav). */
export interface QdiiNavRow {
  code: string;
  /** YYYY-MM-DD */
  date: string;
  /** unit: CNY */
  nav: number;
  /** unit: CNY */
  acc_nav: number | null;
  /** unit: CNY */
  estimated_nav: number | null;
  /** unit: % */
  premium_pct: number | null;
  currency: string | null;
  purchase_status: string | null;
  redemption_status: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/etf/qdii-nav. */
export interface QdiiNavParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** an index code (000300, 000300.SH): each row only where its code was a member of the index on the row's date, by the index_members intervals (resampled rows: from the member days only); a survivorship-free panel (docs/universes.md). 400 for an index without membership intervals */
  universe?: string | number;
  /** a cross-section: for each code, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof QdiiNavRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, date, nav, acc_nav, estimated_nav, premium_pct, currency, purchase_status, redemption_status, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof QdiiNavRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/stock/industry-sw (dataset industry_sw). */
export interface IndustrySwRow {
  code: string;
  /** stock name */
  name: string | null;
  industry_code: string;
  industry_name: string | null;
  /** unit: position */
  level: 1 | 2 | 3 | null;
  l1_code: string | null;
  l1_name: string | null;
  l2_code: string | null;
  l2_name: string | null;
  l3_code: string | null;
  l3_name: string | null;
  /** YYYY-MM-DD */
  in_date: string | null;
  /** YYYY-MM-DD */
  out_date: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/stock/industry-sw. */
export interface IndustrySwParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  industry_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** contains, case-insensitive (% and _ are literal) */
  name?: string;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof IndustrySwRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, name, industry_code, industry_name, level, l1_code, l1_name, l2_code, l2_name, l3_code, l3_name, in_date, out_date, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof IndustrySwRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/stock/daily (dataset stock_daily). */
export interface StockDailyRow {
  code: string;
  /** YYYY-MM-DD */
  date: string;
  /** unit: CNY */
  open: number | null;
  /** unit: CNY */
  high: number | null;
  /** unit: CNY */
  low: number | null;
  /** unit: CNY */
  close: number;
  /** unit: CNY */
  pre_close: number | null;
  /** unit: CNY */
  change: number | null;
  /** unit: % */
  pct_chg: number | null;
  /** unit: shares */
  volume: number;
  /** unit: CNY */
  amount: number | null;
  /** unit: % */
  turnover_rate: number | null;
  /** unit: ratio */
  pe_ttm: number | null;
  /** unit: ratio */
  pb: number | null;
  /** unit: CNY */
  total_mv: number | null;
  /** unit: CNY */
  circ_mv: number | null;
  is_suspended: 0 | 1 | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** YYYY-MM-DD; resampled rows: the date of the first bar in the period */
  period_start: string;
  /** resampled rows: how many daily bars the period holds; unit: count */
  bar_count: number;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/stock/daily. */
export interface StockDailyParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** adjusted prices (open, high, low, close, pre_close): hfq = price × the adj_factor in force on the bar's date; qfq = that ÷ the anchor's factor; change recomputed, pct_chg and volume as stored, no rounding (docs/bars-and-quality.md) */
  adjust?: 'none' | 'qfq' | 'hfq';
  /** qfq only: divide by the factor in force on this date, or `end`: at each code's last bar in the answer's window (that bar equals its raw price); default: each code's latest factor. meta.adjust.factors names the anchor date used per code */
  adjust_anchor?: string;
  /** the factors' source for every bar (400 naming the sources there are when it has none); default: each bar's own source when it has factors for the code, else the code's only factor source */
  adjust_source?: string;
  /** one row per code, source and ISO week (1w), calendar month (1M), quarter (1Q) or year (1Y), adjusted first: open first, high max, low min, close last, volume sum, amount sum, turnover_rate sum, pe_ttm last, pb last, total_mv last, circ_mv last, is_suspended max, updated_at max, created_at max; pre_close the previous period's close, change and pct_chg recomputed; date the last bar's; rows add period_start and bar_count */
  interval?: '1d' | '1w' | '1M' | '1Q' | '1Y';
  /** an index code (000300, 000300.SH): each row only where its code was a member of the index on the row's date, by the index_members intervals (resampled rows: from the member days only); a survivorship-free panel (docs/universes.md). 400 for an index without membership intervals */
  universe?: string | number;
  /** a cross-section: for each code, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key. Under adjust, a price field sorts by its adjusted value */
  sort?: keyof StockDailyRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, date, open, high, low, close, pre_close, change, pct_chg, volume, amount, turnover_rate, pe_ttm, pb, total_mv, circ_mv, is_suspended, source, updated_at, created_at, period_start, bar_count. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof StockDailyRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/features/etf-daily (dataset etf_daily_features). */
export interface EtfDailyFeaturesRow {
  code: string;
  /** YYYY-MM-DD */
  date: string;
  /** unit: % */
  ret_1d: number | null;
  /** unit: % */
  ret_5d: number | null;
  /** unit: % */
  ret_20d: number | null;
  /** unit: % */
  ret_60d: number | null;
  /** unit: CNY */
  ma_5: number | null;
  /** unit: CNY */
  ma_10: number | null;
  /** unit: CNY */
  ma_20: number | null;
  /** unit: CNY */
  ma_60: number | null;
  /** unit: index 0–100 */
  rsi_14: number | null;
  /** unit: CNY */
  macd: number | null;
  /** unit: CNY */
  macd_signal: number | null;
  /** unit: CNY */
  macd_hist: number | null;
  /** unit: % */
  vol_20d: number | null;
  /** unit: CNY */
  amount_ma_20: number | null;
  /** unit: % */
  premium_pct: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/features/etf-daily. */
export interface EtfDailyFeaturesParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** an index code (000300, 000300.SH): each row only where its code was a member of the index on the row's date, by the index_members intervals (resampled rows: from the member days only); a survivorship-free panel (docs/universes.md). 400 for an index without membership intervals */
  universe?: string | number;
  /** a cross-section: for each code, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfDailyFeaturesRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, date, ret_1d, ret_5d, ret_20d, ret_60d, ma_5, ma_10, ma_20, ma_60, rsi_14, macd, macd_signal, macd_hist, vol_20d, amount_ma_20, premium_pct, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfDailyFeaturesRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/features/etf-risk (dataset etf_risk_features). */
export interface EtfRiskFeaturesRow {
  code: string;
  /** YYYY-MM-DD */
  date: string;
  /** window length in trading days; unit: trading days */
  window: number;
  /** unit: % */
  volatility: number | null;
  /** unit: % */
  downside_vol: number | null;
  /** unit: % */
  max_drawdown: number | null;
  /** unit: % */
  var_95: number | null;
  /** unit: % */
  cvar_95: number | null;
  /** unit: ratio */
  beta: number | null;
  /** unit: ratio */
  sharpe: number | null;
  /** unit: ratio */
  sortino: number | null;
  /** unit: ratio */
  calmar: number | null;
  /** unit: % */
  tracking_error: number | null;
  benchmark_code: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/features/etf-risk. */
export interface EtfRiskFeaturesParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  window?: number | readonly number[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each code, window, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfRiskFeaturesRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, date, window, volatility, downside_vol, max_drawdown, var_95, cvar_95, beta, sharpe, sortino, calmar, tracking_error, benchmark_code, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfRiskFeaturesRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/features/etf-cross-border (dataset etf_cross_border_features). */
export interface EtfCrossBorderFeaturesRow {
  code: string;
  /** YYYY-MM-DD */
  date: string;
  region: string | null;
  overseas_ticker: string | null;
  underlying_index_code: string | null;
  /** unit: % */
  underlying_ret_1d: number | null;
  fx_pair: string | null;
  /** unit: CNY per unit of foreign currency */
  fx_rate: number | null;
  /** unit: % */
  fx_ret_1d: number | null;
  /** unit: days */
  nav_lag_days: number | null;
  /** unit: CNY */
  estimated_nav: number | null;
  /** unit: % */
  premium_pct: number | null;
  /** unit: percentile */
  premium_pctile_252d: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/features/etf-cross-border. */
export interface EtfCrossBorderFeaturesParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** an index code (000300, 000300.SH): each row only where its code was a member of the index on the row's date, by the index_members intervals (resampled rows: from the member days only); a survivorship-free panel (docs/universes.md). 400 for an index without membership intervals */
  universe?: string | number;
  /** a cross-section: for each code, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfCrossBorderFeaturesRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, date, region, overseas_ticker, underlying_index_code, underlying_ret_1d, fx_pair, fx_rate, fx_ret_1d, nav_lag_days, estimated_nav, premium_pct, premium_pctile_252d, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfCrossBorderFeaturesRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/features/index-daily (dataset index_daily_features). */
export interface IndexDailyFeaturesRow {
  index_code: string;
  /** YYYY-MM-DD */
  date: string;
  /** unit: % */
  ret_1d: number | null;
  /** unit: % */
  ret_5d: number | null;
  /** unit: % */
  ret_20d: number | null;
  /** unit: % */
  ret_60d: number | null;
  /** unit: % */
  ret_252d: number | null;
  /** unit: % */
  vol_20d: number | null;
  /** unit: % */
  vol_60d: number | null;
  /** unit: % */
  max_drawdown_252d: number | null;
  /** unit: ratio */
  pe_ttm: number | null;
  /** unit: ratio */
  pb: number | null;
  /** unit: % */
  dividend_yield: number | null;
  /** unit: percentile */
  pe_pctile_5y: number | null;
  /** unit: percentile */
  pb_pctile_5y: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/features/index-daily. */
export interface IndexDailyFeaturesParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  index_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** an index code (000300, 000300.SH): each row only where its code was a member of the index on the row's date, by the index_members intervals (resampled rows: from the member days only); a survivorship-free panel (docs/universes.md). 400 for an index without membership intervals */
  universe?: string | number;
  /** a cross-section: for each index_code, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof IndexDailyFeaturesRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: index_code, date, ret_1d, ret_5d, ret_20d, ret_60d, ret_252d, vol_20d, vol_60d, max_drawdown_252d, pe_ttm, pb, dividend_yield, pe_pctile_5y, pb_pctile_5y, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof IndexDailyFeaturesRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/basic (dataset etf_basic). */
export interface EtfBasicRow {
  /** fund code */
  code: string;
  name: string;
  category: string | null;
  asset_class: string | null;
  tracking_index: string | null;
  tracking_index_code: string | null;
  fund_company: string | null;
  exchange: 'SH' | 'SZ' | null;
  /** unit: % */
  management_fee: number | null;
  /** unit: % */
  custodian_fee: number | null;
  /** unit: % */
  total_fee: number | null;
  /** unit: CNY billion */
  aum_billion: number | null;
  /** unit: CNY million */
  avg_daily_amount_million: number | null;
  /** unit: % */
  premium_pct: number | null;
  /** unit: CNY */
  latest_price: number | null;
  /** unit: CNY */
  latest_nav: number | null;
  /** YYYY-MM-DD */
  listing_date: string | null;
  is_connected: 0 | 1 | null;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/etf/basic. */
export interface EtfBasicParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  category?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  asset_class?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  exchange?: 'SH' | 'SZ' | readonly ('SH' | 'SZ')[];
  /** contains, case-insensitive (% and _ are literal) */
  name?: string;
  /** contains, case-insensitive (% and _ are literal) */
  fund_company?: string;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfBasicRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, name, category, asset_class, tracking_index, tracking_index_code, fund_company, exchange, management_fee, custodian_fee, total_fee, aum_billion, avg_daily_amount_million, premium_pct, latest_price, latest_nav, listing_date, is_connected, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfBasicRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/nav (dataset etf_nav). */
export interface EtfNavRow {
  code: string;
  /** YYYY-MM-DD */
  trade_date: string;
  /** unit: CNY */
  nav: number;
  /** unit: CNY */
  acc_nav: number | null;
  /** unit: CNY */
  adj_nav: number | null;
  /** unit: % */
  daily_return_pct: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/etf/nav. */
export interface EtfNavParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  trade_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each code, source, the row with the latest trade_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfNavRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, trade_date, nav, acc_nav, adj_nav, daily_return_pct, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfNavRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/price (dataset etf_price). */
export interface EtfPriceRow {
  code: string;
  name: string | null;
  /** unit: CNY */
  price: number;
  /** unit: CNY */
  open: number | null;
  /** unit: CNY */
  high: number | null;
  /** unit: CNY */
  low: number | null;
  /** unit: CNY */
  pre_close: number | null;
  /** unit: CNY */
  change: number | null;
  /** unit: % */
  pct_chg: number | null;
  /** unit: shares */
  volume: number | null;
  /** unit: CNY */
  amount: number | null;
  /** unit: CNY */
  iopv: number | null;
  /** unit: CNY */
  nav: number | null;
  /** unit: % */
  premium_pct: number | null;
  /** ISO 8601 UTC timestamp */
  trade_time: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/etf/price. */
export interface EtfPriceParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfPriceRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, name, price, open, high, low, pre_close, change, pct_chg, volume, amount, iopv, nav, premium_pct, trade_time, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfPriceRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/size (dataset etf_size). */
export interface EtfSizeRow {
  code: string;
  /** YYYY-MM-DD */
  trade_date: string;
  /** unit: shares */
  shares: number | null;
  /** unit: shares */
  shares_change: number | null;
  /** unit: CNY */
  aum: number | null;
  /** unit: CNY */
  nav: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/etf/size. */
export interface EtfSizeParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  trade_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each code, source, the row with the latest trade_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfSizeRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, trade_date, shares, shares_change, aum, nav, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfSizeRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/flow (dataset etf_flow). */
export interface EtfFlowRow {
  code: string;
  /** YYYY-MM-DD */
  trade_date: string;
  /** e.g. 1d, 5d, 20d */
  period: string;
  /** e.g. share_change, order_flow */
  estimation_method: string;
  /** unit: CNY */
  net_inflow: number;
  /** unit: CNY */
  inflow: number | null;
  /** unit: CNY */
  outflow: number | null;
  /** unit: shares */
  shares_change: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/etf/flow. */
export interface EtfFlowParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  period?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  estimation_method?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each code, period, estimation_method, source, the row with the latest trade_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfFlowRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, trade_date, period, estimation_method, net_inflow, inflow, outflow, shares_change, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfFlowRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/holdings (dataset etf_holdings). */
export interface EtfHoldingsRow {
  code: string;
  /** YYYY-MM-DD; the period's last day */
  report_period: string;
  holding_code: string;
  holding_name: string | null;
  /** unit: shares */
  shares: number | null;
  /** unit: CNY */
  market_value: number | null;
  /** unit: % */
  weight_pct: number | null;
  /** unit: position */
  rank: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/etf/holdings. */
export interface EtfHoldingsParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  report_period?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  holding_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfHoldingsRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, report_period, holding_code, holding_name, shares, market_value, weight_pct, rank, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfHoldingsRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/pcf (dataset etf_pcf). */
export interface EtfPcfRow {
  fund_code: string;
  /** YYYY-MM-DD */
  trade_date: string;
  component_code: string;
  component_name: string | null;
  /** unit: shares */
  quantity: number | null;
  substitution_flag: string | null;
  /** unit: % */
  premium_ratio: number | null;
  /** unit: % */
  discount_ratio: number | null;
  /** unit: CNY */
  substitution_amount: number | null;
  /** unit: shares */
  creation_unit: number | null;
  /** unit: CNY */
  estimated_cash: number | null;
  /** unit: CNY */
  nav_per_unit: number | null;
  source_type: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/etf/pcf. */
export interface EtfPcfParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  fund_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  trade_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  component_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source_type?: string | number | readonly (string | number)[];
  /** inclusive lower bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each fund_code, component_code, source_type, the row with the latest trade_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfPcfRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: fund_code, trade_date, component_code, component_name, quantity, substitution_flag, premium_ratio, discount_ratio, substitution_amount, creation_unit, estimated_cash, nav_per_unit, source_type, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfPcfRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/holders (dataset etf_holders). */
export interface EtfHoldersRow {
  code: string;
  /** YYYY-MM-DD */
  report_period: string;
  /** unit: count */
  holder_count: number | null;
  /** unit: % */
  institutional_pct: number | null;
  /** unit: % */
  individual_pct: number | null;
  /** unit: % */
  internal_pct: number | null;
  /** unit: shares */
  total_shares: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/etf/holders. */
export interface EtfHoldersParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  report_period?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfHoldersRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, report_period, holder_count, institutional_pct, individual_pct, internal_pct, total_shares, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfHoldersRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/dividend (dataset etf_dividend). */
export interface EtfDividendRow {
  code: string;
  /** YYYY-MM-DD */
  ex_date: string;
  /** unit: CNY */
  dividend_per_unit: number;
  /** YYYY-MM-DD */
  announce_date: string | null;
  /** YYYY-MM-DD */
  record_date: string | null;
  /** YYYY-MM-DD */
  pay_date: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/etf/dividend. */
export interface EtfDividendParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  ex_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on ex_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on ex_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each code, source, the row with the latest ex_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfDividendRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, ex_date, dividend_per_unit, announce_date, record_date, pay_date, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfDividendRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/cross-border (dataset etf_cross_border). */
export interface EtfCrossBorderRow {
  code: string;
  name: string | null;
  overseas_ticker: string;
  overseas_exchange: string | null;
  /** unit: overseas market currency */
  overseas_price: number | null;
  overseas_currency: string | null;
  /** unit: CNY per unit of foreign currency */
  fx_rate: number | null;
  /** unit: CNY */
  price: number | null;
  /** unit: CNY */
  nav: number | null;
  /** unit: CNY */
  iopv: number | null;
  /** unit: % */
  premium_pct: number | null;
  /** YYYY-MM-DD */
  trade_date: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/etf/cross-border. */
export interface EtfCrossBorderParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  overseas_ticker?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof EtfCrossBorderRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, name, overseas_ticker, overseas_exchange, overseas_price, overseas_currency, fx_rate, price, nav, iopv, premium_pct, trade_date, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfCrossBorderRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/stock/spot (dataset stock_spot). */
export interface StockSpotRow {
  code: string;
  name: string;
  industry: string | null;
  /** unit: CNY */
  price: number;
  /** unit: CNY */
  open: number | null;
  /** unit: CNY */
  high: number | null;
  /** unit: CNY */
  low: number | null;
  /** unit: CNY */
  pre_close: number | null;
  /** unit: CNY */
  change: number | null;
  /** unit: % */
  pct_chg: number | null;
  /** unit: shares */
  volume: number | null;
  /** unit: CNY */
  amount: number | null;
  /** unit: % */
  turnover_rate: number | null;
  /** unit: ratio */
  pe_ttm: number | null;
  /** unit: ratio */
  pb: number | null;
  /** unit: CNY */
  total_mv: number | null;
  /** unit: CNY */
  circ_mv: number | null;
  /** ISO 8601 UTC timestamp */
  trade_time: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/stock/spot. */
export interface StockSpotParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  industry?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** contains, case-insensitive (% and _ are literal) */
  name?: string;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof StockSpotRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, name, industry, price, open, high, low, pre_close, change, pct_chg, volume, amount, turnover_rate, pe_ttm, pb, total_mv, circ_mv, trade_time, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof StockSpotRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/stock/financials (dataset stock_financials). */
export interface StockFinancialsRow {
  code: string;
  /** YYYY-MM-DD */
  report_date: string;
  report_type: 'Q1' | 'H1' | 'Q3' | 'FY';
  metric: string;
  /** unit: the row's unit field */
  value: number;
  unit: string | null;
  /** YYYY-MM-DD */
  announce_date: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/stock/financials. */
export interface StockFinancialsParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  report_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  report_type?: 'Q1' | 'H1' | 'Q3' | 'FY' | readonly ('Q1' | 'H1' | 'Q3' | 'FY')[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  metric?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on report_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on report_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each code, report_type, metric, source, the row with the latest report_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof StockFinancialsRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, report_date, report_type, metric, value, unit, announce_date, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof StockFinancialsRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/index/constituents (dataset index_constituents). */
export interface IndexConstituentsRow {
  index_code: string;
  stock_code: string;
  stock_name: string | null;
  /** YYYY-MM-DD */
  trade_date: string;
  /** unit: % */
  weight: number;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/index/constituents. */
export interface IndexConstituentsParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  index_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  stock_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  trade_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each index_code, stock_code, source, the row with the latest trade_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof IndexConstituentsRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: index_code, stock_code, stock_name, trade_date, weight, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof IndexConstituentsRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/index/meta (dataset index_meta). */
export interface IndexMetaRow {
  index_code: string;
  name: string;
  full_name: string | null;
  publisher: string | null;
  category: string | null;
  compile_rule: string | null;
  /** YYYY-MM-DD */
  base_date: string | null;
  /** unit: index points */
  base_point: number | null;
  /** YYYY-MM-DD */
  publish_date: string | null;
  /** unit: count */
  constituent_count: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/index/meta. */
export interface IndexMetaParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  index_code?: string | number | readonly (string | number)[];
  /** contains, case-insensitive (% and _ are literal) */
  name?: string;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof IndexMetaRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: index_code, name, full_name, publisher, category, compile_rule, base_date, base_point, publish_date, constituent_count, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof IndexMetaRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/macro/indicator (dataset macro_indicator). */
export interface MacroIndicatorRow {
  indicator_name: string;
  /** YYYY, YYYY-Qn, YYYY-MM or YYYY-MM-DD */
  period: string;
  /** YYYY-MM-DD; the period's last day */
  date: string;
  /** unit: the row's unit field */
  value: number;
  unit: string | null;
  frequency: 'D' | 'W' | 'M' | 'Q' | 'Y' | null;
  /** YYYY-MM-DD */
  release_date: string | null;
  /** unit: % */
  yoy: number | null;
  /** unit: % */
  mom: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/macro/indicator. */
export interface MacroIndicatorParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  indicator_name?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  period?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each indicator_name, period, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof MacroIndicatorRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: indicator_name, period, date, value, unit, frequency, release_date, yoy, mom, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof MacroIndicatorRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/market/margin-trading (dataset margin_trading). */
export interface MarginTradingRow {
  market: 'SH' | 'SZ' | 'BJ' | 'ALL';
  /** YYYY-MM-DD */
  trade_date: string;
  /** unit: CNY */
  financing_balance: number | null;
  /** unit: CNY */
  financing_buy: number | null;
  /** unit: CNY */
  financing_repay: number | null;
  /** unit: CNY */
  securities_lending_balance: number | null;
  /** unit: shares */
  securities_lending_volume: number | null;
  /** unit: shares */
  securities_sell_volume: number | null;
  /** unit: CNY */
  total_balance: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/market/margin-trading. */
export interface MarginTradingParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  market?: 'SH' | 'SZ' | 'BJ' | 'ALL' | readonly ('SH' | 'SZ' | 'BJ' | 'ALL')[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  trade_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each market, source, the row with the latest trade_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof MarginTradingRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: market, trade_date, financing_balance, financing_buy, financing_repay, securities_lending_balance, securities_lending_volume, securities_sell_volume, total_balance, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof MarginTradingRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/market/hsgt-flow (dataset hsgt_flow). */
export interface HsgtFlowRow {
  direction: 'northbound' | 'southbound';
  /** e.g. sh_connect, sz_connect, total */
  channel: string;
  /** YYYY-MM-DD */
  trade_date: string;
  /** unit: CNY */
  net_buy: number | null;
  /** unit: CNY */
  buy_amount: number | null;
  /** unit: CNY */
  sell_amount: number | null;
  /** unit: CNY */
  net_inflow: number | null;
  /** unit: CNY */
  quota_balance: number | null;
  /** unit: CNY */
  hold_market_value: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/market/hsgt-flow. */
export interface HsgtFlowParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  direction?: 'northbound' | 'southbound' | readonly ('northbound' | 'southbound')[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  channel?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  trade_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each direction, channel, source, the row with the latest trade_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof HsgtFlowRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: direction, channel, trade_date, net_buy, buy_amount, sell_amount, net_inflow, quota_balance, hold_market_value, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof HsgtFlowRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/us/companies (dataset us_companies). */
export interface UsCompaniesRow {
  /** SEC CIK, 10-digit zero-padded */
  cik: string;
  name: string;
  ticker: string | null;
  exchange: string | null;
  sic: string | null;
  sic_description: string | null;
  entity_type: string | null;
  state_of_incorporation: string | null;
  /** MMDD */
  fiscal_year_end: string | null;
  ein: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/us/companies. */
export interface UsCompaniesParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  cik?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  ticker?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  exchange?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  sic?: string | number | readonly (string | number)[];
  /** contains, case-insensitive (% and _ are literal) */
  name?: string;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof UsCompaniesRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: cik, name, ticker, exchange, sic, sic_description, entity_type, state_of_incorporation, fiscal_year_end, ein, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof UsCompaniesRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/us/filings (dataset us_filings). */
export interface UsFilingsRow {
  accession_number: string;
  /** SEC CIK, 10-digit zero-padded */
  cik: string;
  form: string;
  /** YYYY-MM-DD */
  filed_date: string;
  company_name: string | null;
  ticker: string | null;
  /** YYYY-MM-DD */
  period_of_report: string | null;
  /** ISO 8601 UTC timestamp */
  accepted_at: string | null;
  primary_document: string | null;
  document_url: string | null;
  /** unit: bytes */
  size: number | null;
  is_xbrl: 0 | 1 | null;
  items: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/us/filings. */
export interface UsFilingsParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  cik?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  ticker?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  form?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  accession_number?: string | number | readonly (string | number)[];
  /** inclusive lower bound on filed_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on filed_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each accession_number, the row with the latest filed_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof UsFilingsRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: accession_number, cik, form, filed_date, company_name, ticker, period_of_report, accepted_at, primary_document, document_url, size, is_xbrl, items, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof UsFilingsRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/us/facts (dataset us_financial_facts). */
export interface UsFinancialFactsRow {
  /** SEC CIK, 10-digit zero-padded */
  cik: string;
  /** e.g. us-gaap, dei, srt, ifrs-full */
  taxonomy: string;
  concept: string;
  unit: string;
  /** YYYY-MM-DD */
  start_date: string;
  /** YYYY-MM-DD */
  end_date: string;
  /** unit: the row's unit field */
  value: number;
  accession_number: string;
  label: string | null;
  /** unit: year */
  fy: number | null;
  fp: 'FY' | 'Q1' | 'Q2' | 'Q3' | 'Q4' | null;
  form: string | null;
  /** YYYY-MM-DD */
  filed_date: string | null;
  frame: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/us/facts. */
export interface UsFinancialFactsParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  cik?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  taxonomy?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  concept?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  unit?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  fy?: number | readonly number[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  fp?: 'FY' | 'Q1' | 'Q2' | 'Q3' | 'Q4' | readonly ('FY' | 'Q1' | 'Q2' | 'Q3' | 'Q4')[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  form?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  frame?: string | number | readonly (string | number)[];
  /** inclusive lower bound on end_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on end_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each cik, taxonomy, concept, unit, start_date, accession_number, the row with the latest end_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof UsFinancialFactsRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: cik, taxonomy, concept, unit, start_date, end_date, value, accession_number, label, fy, fp, form, filed_date, frame, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof UsFinancialFactsRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/us/insider-trades (dataset us_insider_trades). */
export interface UsInsiderTradesRow {
  accession_number: string;
  /** unit: position */
  line_no: number;
  /** SEC CIK, 10-digit zero-padded */
  issuer_cik: string;
  ticker: string | null;
  issuer_name: string | null;
  /** SEC CIK, 10-digit zero-padded */
  owner_cik: string | null;
  owner_name: string;
  owner_title: string | null;
  is_director: 0 | 1 | null;
  is_officer: 0 | 1 | null;
  is_ten_percent_owner: 0 | 1 | null;
  security_title: string | null;
  /** YYYY-MM-DD */
  transaction_date: string;
  transaction_code: string;
  /** unit: shares */
  shares: number | null;
  /** unit: USD */
  price_per_share: number | null;
  acquired_disposed: 'A' | 'D' | null;
  /** unit: shares */
  shares_owned_after: number | null;
  direct_indirect: 'D' | 'I' | null;
  /** YYYY-MM-DD */
  filed_date: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/us/insider-trades. */
export interface UsInsiderTradesParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  issuer_cik?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  ticker?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  owner_cik?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  transaction_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  acquired_disposed?: 'A' | 'D' | readonly ('A' | 'D')[];
  /** contains, case-insensitive (% and _ are literal) */
  owner_name?: string;
  /** inclusive lower bound on transaction_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on transaction_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each accession_number, line_no, the row with the latest transaction_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof UsInsiderTradesRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: accession_number, line_no, issuer_cik, ticker, issuer_name, owner_cik, owner_name, owner_title, is_director, is_officer, is_ten_percent_owner, security_title, transaction_date, transaction_code, shares, price_per_share, acquired_disposed, shares_owned_after, direct_indirect, filed_date, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof UsInsiderTradesRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/us/13f-holdings (dataset us_13f_holdings). */
export interface Us13fHoldingsRow {
  accession_number: string;
  /** unit: position */
  line_no: number;
  /** SEC CIK, 10-digit zero-padded */
  filer_cik: string;
  filer_name: string | null;
  /** YYYY-MM-DD */
  period_of_report: string;
  /** YYYY-MM-DD */
  filed_date: string | null;
  issuer_name: string;
  title_of_class: string | null;
  cusip: string;
  ticker: string | null;
  /** dollars; filings before 2023-01-03 reported thousands; unit: USD */
  value_usd: number;
  /** unit: shares */
  shares: number;
  share_type: 'SH' | 'PRN' | null;
  put_call: string | null;
  investment_discretion: string | null;
  /** unit: shares */
  voting_sole: number | null;
  /** unit: shares */
  voting_shared: number | null;
  /** unit: shares */
  voting_none: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/us/13f-holdings. */
export interface Us13fHoldingsParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  filer_cik?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  cusip?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  ticker?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  period_of_report?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  put_call?: string | number | readonly (string | number)[];
  /** contains, case-insensitive (% and _ are literal) */
  issuer_name?: string;
  /** contains, case-insensitive (% and _ are literal) */
  filer_name?: string;
  /** inclusive lower bound on period_of_report, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on period_of_report, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each accession_number, line_no, the row with the latest period_of_report on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof Us13fHoldingsRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: accession_number, line_no, filer_cik, filer_name, period_of_report, filed_date, issuer_name, title_of_class, cusip, ticker, value_usd, shares, share_type, put_call, investment_discretion, voting_sole, voting_shared, voting_none, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof Us13fHoldingsRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/market/adj-factor (dataset adj_factor). */
export interface AdjFactorRow {
  /** ETF or stock code */
  code: string;
  /** YYYY-MM-DD; the factor is in force from this date on */
  date: string;
  /** the cumulative adjustment factor (> 0); unit: factor */
  adj_factor: number;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/market/adj-factor. */
export interface AdjFactorParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each code, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof AdjFactorRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, date, adj_factor, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof AdjFactorRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/market/corporate-actions (dataset corporate_actions). */
export interface CorporateActionsRow {
  code: string;
  /** YYYY-MM-DD */
  ex_date: string;
  action: 'dividend' | 'split' | 'bonus' | 'rights' | 'other';
  /** cash dividend per share, before tax; unit: CNY */
  cash_per_share: number | null;
  /** new shares per existing share; unit: new shares per share */
  share_ratio: number | null;
  /** unit: CNY */
  rights_price: number | null;
  /** YYYY-MM-DD */
  record_date: string | null;
  /** YYYY-MM-DD */
  pay_date: string | null;
  /** YYYY-MM-DD */
  announce_date: string | null;
  description: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/market/corporate-actions. */
export interface CorporateActionsParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  ex_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  action?:
    | 'dividend'
    | 'split'
    | 'bonus'
    | 'rights'
    | 'other'
    | readonly ('dividend' | 'split' | 'bonus' | 'rights' | 'other')[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on ex_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on ex_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each code, action, source, the row with the latest ex_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof CorporateActionsRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, ex_date, action, cash_per_share, share_ratio, rights_price, record_date, pay_date, announce_date, description, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof CorporateActionsRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/market/trade-calendar (dataset trade_calendar). */
export interface TradeCalendarRow {
  /** SSE, SZSE, BSE, HKEX, NYSE, NASDAQ, … */
  exchange: string;
  /** YYYY-MM-DD */
  date: string;
  /** 1 on trading days */
  is_open: 0 | 1;
  source: string;
  /** YYYY-MM-DD; the previous open day */
  pretrade_date: string | null;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/market/trade-calendar. */
export interface TradeCalendarParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  exchange?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  is_open?: 0 | 1 | readonly (0 | 1)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each exchange, source, the row with the latest date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof TradeCalendarRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: exchange, date, is_open, source, pretrade_date, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof TradeCalendarRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/stock/basic (dataset stock_basic). */
export interface StockBasicRow {
  code: string;
  /** the current (or last) name */
  name: string;
  exchange: 'SH' | 'SZ' | 'BJ';
  board: 'main' | 'star' | 'chinext' | 'bse' | null;
  /** YYYY-MM-DD; first trading day */
  list_date: string;
  /** YYYY-MM-DD; delisting day; null while listed */
  delist_date: string | null;
  /** L listed, D delisted, P listing suspended */
  list_status: 'L' | 'D' | 'P';
  industry: string | null;
  area: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/stock/basic. */
export interface StockBasicParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  exchange?: 'SH' | 'SZ' | 'BJ' | readonly ('SH' | 'SZ' | 'BJ')[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  board?: 'main' | 'star' | 'chinext' | 'bse' | readonly ('main' | 'star' | 'chinext' | 'bse')[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  list_status?: 'L' | 'D' | 'P' | readonly ('L' | 'D' | 'P')[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** contains, case-insensitive (% and _ are literal) */
  name?: string;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof StockBasicRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, name, exchange, board, list_date, delist_date, list_status, industry, area, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof StockBasicRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/stock/names (dataset stock_names). */
export interface StockNamesRow {
  code: string;
  name: string;
  /** YYYY-MM-DD; first day of the name */
  start_date: string;
  /** YYYY-MM-DD; last day of the name; null: still in use */
  end_date: string | null;
  /** e.g. ST, *ST, rename, ST removed */
  reason: string | null;
  /** YYYY-MM-DD */
  announce_date: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/stock/names. */
export interface StockNamesParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  reason?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** contains, case-insensitive (% and _ are literal) */
  name?: string;
  /** inclusive lower bound on start_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on start_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each code, source, the row with the latest start_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof StockNamesRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, name, start_date, end_date, reason, announce_date, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof StockNamesRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/index/members (dataset index_members). */
export interface IndexMembersRow {
  index_code: string;
  stock_code: string;
  /** YYYY-MM-DD; first day as a member */
  in_date: string;
  /** YYYY-MM-DD; last day as a member; null: still a member */
  out_date: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/index/members. */
export interface IndexMembersParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  index_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  stock_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on in_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on in_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each index_code, stock_code, source, the row with the latest in_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof IndexMembersRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: index_code, stock_code, in_date, out_date, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof IndexMembersRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/stock/limit (dataset stock_limit). */
export interface StockLimitRow {
  code: string;
  /** YYYY-MM-DD */
  trade_date: string;
  /** unit: CNY */
  pre_close: number | null;
  /** the highest price allowed that day; unit: CNY */
  up_limit: number;
  /** the lowest price allowed that day; unit: CNY */
  down_limit: number;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/stock/limit. */
export interface StockLimitParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  trade_date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on trade_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each code, source, the row with the latest trade_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof StockLimitRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, trade_date, pre_close, up_limit, down_limit, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof StockLimitRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/us/tickers (dataset us_tickers). */
export interface UsTickersRow {
  /** SEC CIK, 10-digit zero-padded */
  cik: string;
  ticker: string;
  /** YYYY-MM-DD; first day under this ticker */
  start_date: string;
  /** YYYY-MM-DD; last day under this ticker; null: current */
  end_date: string | null;
  exchange: string | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
  /** latest_on only: trading days between this row and latest_on (null: outside the stored calendar) */
  stale_days: number | null;
}

/** Filters and options of /api/v1/us/tickers. */
export interface UsTickersParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  cik?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  ticker?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  exchange?: string | number | readonly (string | number)[];
  /** inclusive lower bound on start_date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on start_date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** a cross-section: for each cik, ticker, the row with the latest start_date on or before this day, with stale_days (trading days between that row and the day, from the stored calendar); with universe=, the members on that day (docs/universes.md) */
  latest_on?: string;
  /** with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out */
  max_stale_days?: number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof UsTickersRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: cik, ticker, start_date, end_date, exchange, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof UsTickersRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/stock/minute (dataset stock_minute). */
export interface StockMinuteRow {
  code: string;
  /** YYYY-MM-DD */
  date: string;
  /** ISO 8601 UTC timestamp; the bar's end minute, with the exchange's offset */
  time: string;
  /** unit: CNY */
  open: number;
  /** unit: CNY */
  high: number;
  /** unit: CNY */
  low: number;
  /** unit: CNY */
  close: number;
  /** unit: shares */
  volume: number;
  /** unit: CNY */
  amount: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/stock/minute. */
export interface StockMinuteParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** adjusted prices (open, high, low, close): hfq = price × the adj_factor in force on the bar's date; qfq = that ÷ the anchor's factor; change recomputed, pct_chg and volume as stored, no rounding (docs/bars-and-quality.md) */
  adjust?: 'none' | 'qfq' | 'hfq';
  /** qfq only: divide by the factor in force on this date, or `end`: at each code's last bar in the answer's window (that bar equals its raw price); default: each code's latest factor. meta.adjust.factors names the anchor date used per code */
  adjust_anchor?: string;
  /** the factors' source for every bar (400 naming the sources there are when it has none); default: each bar's own source when it has factors for the code, else the code's only factor source */
  adjust_source?: string;
  /** bars whose end minute is at or after this instant (ISO 8601 with an offset or Z) */
  time_from?: string | Date;
  /** bars whose end minute is at or before this instant (ISO 8601 with an offset or Z) */
  time_to?: string | Date;
  /** bars of 1, 5, 15, 30 or 60 minutes by session, or 1d (the day): labelled by their end minute, never across the lunch break or the day; open first, high max, low min, close last, volume and amount summed (docs/minute-bars.md) */
  interval?: '1m' | '5m' | '15m' | '30m' | '60m' | '1d';
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key. Under adjust, a price field sorts by its adjusted value */
  sort?: keyof StockMinuteRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, date, time, open, high, low, close, volume, amount, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof StockMinuteRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/etf/minute (dataset etf_minute). */
export interface EtfMinuteRow {
  code: string;
  /** YYYY-MM-DD */
  date: string;
  /** ISO 8601 UTC timestamp; the bar's end minute, with the exchange's offset */
  time: string;
  /** unit: CNY */
  open: number;
  /** unit: CNY */
  high: number;
  /** unit: CNY */
  low: number;
  /** unit: CNY */
  close: number;
  /** unit: shares */
  volume: number;
  /** unit: CNY */
  amount: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/etf/minute. */
export interface EtfMinuteParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** adjusted prices (open, high, low, close): hfq = price × the adj_factor in force on the bar's date; qfq = that ÷ the anchor's factor; change recomputed, pct_chg and volume as stored, no rounding (docs/bars-and-quality.md) */
  adjust?: 'none' | 'qfq' | 'hfq';
  /** qfq only: divide by the factor in force on this date, or `end`: at each code's last bar in the answer's window (that bar equals its raw price); default: each code's latest factor. meta.adjust.factors names the anchor date used per code */
  adjust_anchor?: string;
  /** the factors' source for every bar (400 naming the sources there are when it has none); default: each bar's own source when it has factors for the code, else the code's only factor source */
  adjust_source?: string;
  /** bars whose end minute is at or after this instant (ISO 8601 with an offset or Z) */
  time_from?: string | Date;
  /** bars whose end minute is at or before this instant (ISO 8601 with an offset or Z) */
  time_to?: string | Date;
  /** bars of 1, 5, 15, 30 or 60 minutes by session, or 1d (the day): labelled by their end minute, never across the lunch break or the day; open first, high max, low min, close last, volume and amount summed (docs/minute-bars.md) */
  interval?: '1m' | '5m' | '15m' | '30m' | '60m' | '1d';
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key. Under adjust, a price field sorts by its adjusted value */
  sort?: keyof EtfMinuteRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: code, date, time, open, high, low, close, volume, amount, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof EtfMinuteRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** A row of /api/v1/index/minute (dataset index_minute). */
export interface IndexMinuteRow {
  index_code: string;
  /** YYYY-MM-DD */
  date: string;
  /** ISO 8601 UTC timestamp; the bar's end minute, with the exchange's offset */
  time: string;
  /** unit: CNY */
  open: number;
  /** unit: CNY */
  high: number;
  /** unit: CNY */
  low: number;
  /** unit: CNY */
  close: number;
  /** unit: shares */
  volume: number | null;
  /** unit: CNY */
  amount: number | null;
  source: string;
  /** ISO 8601 UTC timestamp */
  updated_at: string;
  /** ISO 8601 UTC timestamp; when the row was first stored (set by the server) */
  created_at: string;
}

/** Filters and options of /api/v1/index/minute. */
export interface IndexMinuteParams {
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300) */
  index_code?: string | number | readonly (string | number)[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter or as a comma list */
  date?: string | readonly string[];
  /** exact match; several values (any of them matches, at most 1000) by repeating the parameter */
  source?: string | number | readonly (string | number)[];
  /** inclusive lower bound on date, YYYY-MM-DD or YYYYMMDD */
  date_from?: string;
  /** inclusive upper bound on date, YYYY-MM-DD or YYYYMMDD */
  date_to?: string;
  /** bars whose end minute is at or after this instant (ISO 8601 with an offset or Z) */
  time_from?: string | Date;
  /** bars whose end minute is at or before this instant (ISO 8601 with an offset or Z) */
  time_to?: string | Date;
  /** bars of 1, 5, 15, 30 or 60 minutes by session, or 1d (the day): labelled by their end minute, never across the lunch break or the day; open first, high max, low min, close last, volume and amount summed (docs/minute-bars.md) */
  interval?: '1m' | '5m' | '15m' | '30m' | '60m' | '1d';
  /** sources in order of precedence, comma-separated: one row per key without its source, the first listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given */
  source_priority?: string | number;
  /** rows per page; values above 1000 are clamped to 1000 */
  limit?: number;
  /** rows to skip */
  offset?: number;
  /** field to sort by; ties are broken by the unique key */
  sort?: keyof IndexMinuteRow;
  /** sort direction */
  order?: 'asc' | 'desc';
  /** comma-separated subset of: index_code, date, time, open, high, low, close, volume, amount, source, updated_at, created_at. Rows then hold only these fields (the row schema describes whole rows). */
  fields?: readonly (keyof IndexMinuteRow)[];
  /** keyset pagination: meta.next_cursor of the previous page of the same query */
  cursor?: string;
  /** point in time, ISO 8601 with Z or an offset: the answer this request had at that instant (docs/point-in-time.md); 400 / 4005 before the revision retention horizon */
  as_of?: string | Date;
}

/** Every query endpoint: its path, row type and parameter type. */
export interface Endpoints {
  etf_daily: { path: '/api/v1/etf/kline'; row: EtfDailyRow; params: EtfDailyParams };
  index_daily: { path: '/api/v1/index/price'; row: IndexDailyRow; params: IndexDailyParams };
  fx: { path: '/api/v1/market/fx'; row: FxRow; params: FxParams };
  qdii_nav: { path: '/api/v1/etf/qdii-nav'; row: QdiiNavRow; params: QdiiNavParams };
  industry_sw: { path: '/api/v1/stock/industry-sw'; row: IndustrySwRow; params: IndustrySwParams };
  stock_daily: { path: '/api/v1/stock/daily'; row: StockDailyRow; params: StockDailyParams };
  etf_daily_features: {
    path: '/api/v1/features/etf-daily';
    row: EtfDailyFeaturesRow;
    params: EtfDailyFeaturesParams;
  };
  etf_risk_features: {
    path: '/api/v1/features/etf-risk';
    row: EtfRiskFeaturesRow;
    params: EtfRiskFeaturesParams;
  };
  etf_cross_border_features: {
    path: '/api/v1/features/etf-cross-border';
    row: EtfCrossBorderFeaturesRow;
    params: EtfCrossBorderFeaturesParams;
  };
  index_daily_features: {
    path: '/api/v1/features/index-daily';
    row: IndexDailyFeaturesRow;
    params: IndexDailyFeaturesParams;
  };
  etf_basic: { path: '/api/v1/etf/basic'; row: EtfBasicRow; params: EtfBasicParams };
  etf_nav: { path: '/api/v1/etf/nav'; row: EtfNavRow; params: EtfNavParams };
  etf_price: { path: '/api/v1/etf/price'; row: EtfPriceRow; params: EtfPriceParams };
  etf_size: { path: '/api/v1/etf/size'; row: EtfSizeRow; params: EtfSizeParams };
  etf_flow: { path: '/api/v1/etf/flow'; row: EtfFlowRow; params: EtfFlowParams };
  etf_holdings: { path: '/api/v1/etf/holdings'; row: EtfHoldingsRow; params: EtfHoldingsParams };
  etf_pcf: { path: '/api/v1/etf/pcf'; row: EtfPcfRow; params: EtfPcfParams };
  etf_holders: { path: '/api/v1/etf/holders'; row: EtfHoldersRow; params: EtfHoldersParams };
  etf_dividend: { path: '/api/v1/etf/dividend'; row: EtfDividendRow; params: EtfDividendParams };
  etf_cross_border: {
    path: '/api/v1/etf/cross-border';
    row: EtfCrossBorderRow;
    params: EtfCrossBorderParams;
  };
  stock_spot: { path: '/api/v1/stock/spot'; row: StockSpotRow; params: StockSpotParams };
  stock_financials: {
    path: '/api/v1/stock/financials';
    row: StockFinancialsRow;
    params: StockFinancialsParams;
  };
  index_constituents: {
    path: '/api/v1/index/constituents';
    row: IndexConstituentsRow;
    params: IndexConstituentsParams;
  };
  index_meta: { path: '/api/v1/index/meta'; row: IndexMetaRow; params: IndexMetaParams };
  macro_indicator: { path: '/api/v1/macro/indicator'; row: MacroIndicatorRow; params: MacroIndicatorParams };
  margin_trading: {
    path: '/api/v1/market/margin-trading';
    row: MarginTradingRow;
    params: MarginTradingParams;
  };
  hsgt_flow: { path: '/api/v1/market/hsgt-flow'; row: HsgtFlowRow; params: HsgtFlowParams };
  us_companies: { path: '/api/v1/us/companies'; row: UsCompaniesRow; params: UsCompaniesParams };
  us_filings: { path: '/api/v1/us/filings'; row: UsFilingsRow; params: UsFilingsParams };
  us_financial_facts: { path: '/api/v1/us/facts'; row: UsFinancialFactsRow; params: UsFinancialFactsParams };
  us_insider_trades: {
    path: '/api/v1/us/insider-trades';
    row: UsInsiderTradesRow;
    params: UsInsiderTradesParams;
  };
  us_13f_holdings: { path: '/api/v1/us/13f-holdings'; row: Us13fHoldingsRow; params: Us13fHoldingsParams };
  adj_factor: { path: '/api/v1/market/adj-factor'; row: AdjFactorRow; params: AdjFactorParams };
  corporate_actions: {
    path: '/api/v1/market/corporate-actions';
    row: CorporateActionsRow;
    params: CorporateActionsParams;
  };
  trade_calendar: {
    path: '/api/v1/market/trade-calendar';
    row: TradeCalendarRow;
    params: TradeCalendarParams;
  };
  stock_basic: { path: '/api/v1/stock/basic'; row: StockBasicRow; params: StockBasicParams };
  stock_names: { path: '/api/v1/stock/names'; row: StockNamesRow; params: StockNamesParams };
  index_members: { path: '/api/v1/index/members'; row: IndexMembersRow; params: IndexMembersParams };
  stock_limit: { path: '/api/v1/stock/limit'; row: StockLimitRow; params: StockLimitParams };
  us_tickers: { path: '/api/v1/us/tickers'; row: UsTickersRow; params: UsTickersParams };
  stock_minute: { path: '/api/v1/stock/minute'; row: StockMinuteRow; params: StockMinuteParams };
  etf_minute: { path: '/api/v1/etf/minute'; row: EtfMinuteRow; params: EtfMinuteParams };
  index_minute: { path: '/api/v1/index/minute'; row: IndexMinuteRow; params: IndexMinuteParams };
}

export const ENDPOINT_PATHS: { readonly [D in keyof Endpoints]: Endpoints[D]['path'] } = {
  etf_daily: '/api/v1/etf/kline',
  index_daily: '/api/v1/index/price',
  fx: '/api/v1/market/fx',
  qdii_nav: '/api/v1/etf/qdii-nav',
  industry_sw: '/api/v1/stock/industry-sw',
  stock_daily: '/api/v1/stock/daily',
  etf_daily_features: '/api/v1/features/etf-daily',
  etf_risk_features: '/api/v1/features/etf-risk',
  etf_cross_border_features: '/api/v1/features/etf-cross-border',
  index_daily_features: '/api/v1/features/index-daily',
  etf_basic: '/api/v1/etf/basic',
  etf_nav: '/api/v1/etf/nav',
  etf_price: '/api/v1/etf/price',
  etf_size: '/api/v1/etf/size',
  etf_flow: '/api/v1/etf/flow',
  etf_holdings: '/api/v1/etf/holdings',
  etf_pcf: '/api/v1/etf/pcf',
  etf_holders: '/api/v1/etf/holders',
  etf_dividend: '/api/v1/etf/dividend',
  etf_cross_border: '/api/v1/etf/cross-border',
  stock_spot: '/api/v1/stock/spot',
  stock_financials: '/api/v1/stock/financials',
  index_constituents: '/api/v1/index/constituents',
  index_meta: '/api/v1/index/meta',
  macro_indicator: '/api/v1/macro/indicator',
  margin_trading: '/api/v1/market/margin-trading',
  hsgt_flow: '/api/v1/market/hsgt-flow',
  us_companies: '/api/v1/us/companies',
  us_filings: '/api/v1/us/filings',
  us_financial_facts: '/api/v1/us/facts',
  us_insider_trades: '/api/v1/us/insider-trades',
  us_13f_holdings: '/api/v1/us/13f-holdings',
  adj_factor: '/api/v1/market/adj-factor',
  corporate_actions: '/api/v1/market/corporate-actions',
  trade_calendar: '/api/v1/market/trade-calendar',
  stock_basic: '/api/v1/stock/basic',
  stock_names: '/api/v1/stock/names',
  index_members: '/api/v1/index/members',
  stock_limit: '/api/v1/stock/limit',
  us_tickers: '/api/v1/us/tickers',
  stock_minute: '/api/v1/stock/minute',
  etf_minute: '/api/v1/etf/minute',
  index_minute: '/api/v1/index/minute',
};
