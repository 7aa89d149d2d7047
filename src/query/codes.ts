import type { Field } from '../catalog/catalog.js';
import type { CodeMarket } from '../catalog/types.js';
import { AppError } from '../errors.js';

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

/** 6 digits with an exchange mark that is none of the known ones (`510300.SHH`, `xh510300`). */
const CN_NEAR_MISS = /^(?:[a-z]{1,4}\.?\d{6}|\d{6}\.[a-z]{1,5})$/i;

/**
 * A queried code (`parameter`) in its stored form; 400 / 4008 for a spelling that is almost a
 * known one: it can match no stored row (ingest stores the known forms as 6 digits), and
 * answering it would be a silent empty page.
 */
export function queryCode(market: CodeMarket, raw: string, parameter: string): string {
  const code = normalizeCode(market, raw);
  if (market === 'cn' && code === raw && CN_NEAR_MISS.test(raw)) {
    throw new AppError(
      4008,
      `${parameter}: "${raw}" is not a known spelling of a code; write 6 digits (510300) or one of ` +
        `sh510300, 510300.SH, 510300.SS, 510300.XSHG`,
      { extra: { parameter } },
    );
  }
  return code;
}

/** A field stored as exactly N digits (its pattern `^\d{N}$`, a SEC CIK's 10): N; else null. */
function fixedDigits(f: Field): number | null {
  const m = /^\^\\d\{(\d+)\}\$$/.exec(f.pattern?.source ?? '');
  return m ? Number(m[1]) : null;
}

/**
 * A queried value of a field stored as N zero-padded digits, given with fewer digits (SEC's own
 * JSON writes CIK 1640147 for 0001640147): padded. No other valid value is digits that short.
 */
export function padDigits(f: Field, raw: string): string {
  const n = fixedDigits(f);
  return n !== null && raw.length < n && /^\d+$/.test(raw) ? raw.padStart(n, '0') : raw;
}
