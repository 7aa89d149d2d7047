import type { CodeMarket } from '../catalog/types.js';

/**
 * Instrument codes as users write them → the stored form (docs/endpoints.md#many-values-and-code-spellings).
 * A-share, ETF and index codes are stored as their 6 digits; Tushare (`510300.SH`), AKShare and
 * Sina (`sh510300`), Wind/JoinQuant (`510300.XSHG`) and Yahoo (`510300.SS`) spellings are the
 * same instrument. Only an exchange mark around exactly 6 digits is removed, so no valid stored
 * value (6 digits, a 5-digit HK code, a US ticker such as BRK.B) is ever changed.
 */
const CN_PREFIXED = /^(?:sh|sz|bj)\.?(\d{6})$/i;
const CN_SUFFIXED = /^(\d{6})\.(?:sh|sz|bj|ss|xshg|xshe)$/i;

export function normalizeCode(market: CodeMarket, raw: string): string {
  if (market !== 'cn') return raw;
  const m = CN_PREFIXED.exec(raw) ?? CN_SUFFIXED.exec(raw);
  return m?.[1] ?? raw;
}
