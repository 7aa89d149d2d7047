/**
 * The unit of every numeric field (issue 27 item 7): what a number counts, so a user never
 * guesses between shares and lots of 100, yuan and thousands. datasets.md: CN figures are in
 * CNY yuan and shares unless the field says otherwise; `*_pct` and the derived features are
 * percent values. A field's unit is its dataset's `units` entry, else the entry for its name
 * here; the catalog refuses a number or integer field with neither (catalog.ts).
 */
export const UNIT_BY_NAME: Readonly<Record<string, string>> = {
  ...each(
    'CNY',
    'open high low close pre_close change price iopv nav acc_nav adj_nav estimated_nav latest_price latest_nav',
    'nav_per_unit dividend_per_unit cash_per_share rights_price ma_5 ma_10 ma_20 ma_60 macd macd_signal macd_hist',
    'amount amount_ma_20 total_mv circ_mv market_value aum net_inflow inflow outflow estimated_cash',
    'substitution_amount financing_balance financing_buy financing_repay securities_lending_balance',
    'total_balance net_buy buy_amount sell_amount quota_balance hold_market_value',
  ),
  aum_billion: 'CNY billion',
  avg_daily_amount_million: 'CNY million',
  ...each(
    'shares',
    'volume shares shares_change total_shares quantity securities_lending_volume securities_sell_volume',
    'creation_unit shares_owned_after voting_sole voting_shared voting_none',
  ),
  ...each(
    '%',
    'pct_chg premium_pct weight_pct institutional_pct individual_pct internal_pct daily_return_pct',
    'turnover_rate management_fee custodian_fee total_fee premium_ratio discount_ratio dividend_yield yoy mom',
    'weight ret_1d ret_5d ret_20d ret_60d ret_252d vol_20d vol_60d volatility downside_vol max_drawdown',
    'var_95 cvar_95 tracking_error max_drawdown_252d fx_ret_1d underlying_ret_1d',
  ),
  ...each('percentile', 'premium_pctile_252d pe_pctile_5y pb_pctile_5y'),
  ...each('ratio', 'pe_ttm pb beta sharpe sortino calmar'),
  rsi_14: 'index 0–100',
  adj_factor: 'factor',
  share_ratio: 'new shares per share',
  fx_rate: 'CNY per unit of foreign currency',
  ...each('count', 'holder_count constituent_count'),
  ...each('position', 'rank level line_no'),
  window: 'trading days',
  nav_lag_days: 'days',
  fy: 'year',
  size: 'bytes',
  base_point: 'index points',
  value_usd: 'USD',
  // Macro and financial statement values carry their unit in the row (its `unit` field).
  value: "the row's unit field",
  price_per_share: 'USD',
};

function each(unit: string, ...names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((n) => n.split(' ')).map((n) => [n, unit]));
}

/** Units that are counts of shares: `mds push --lots-to-shares` multiplies them by 100. */
export const SHARES_UNIT = 'shares';
export const LOT_SIZE = 100;
