/**
 * The rules of the data-quality report (GET /api/v1/quality/{dataset}), written once: how a
 * code's aggregates are judged against the calendar's open days, and when a code is stale. The
 * report computed on demand (query/quality-service.ts) and the per-code summaries kept by the
 * batch transaction (storage/quality-summary.ts) both judge with these functions, so both give
 * the same rows.
 */

export interface QualityRow {
  code: string;
  first_date: string;
  last_date: string;
  bars: number;
  expected: number;
  missing: number;
  missing_dates: string[];
  stale: boolean;
  ohlc_violations: number;
  ohlc_violation_dates: string[];
  zero_volume_days: number | null;
}

/** A code's aggregates, as the database computes them (storage/quality-sql.ts). */
export interface QualityCodeSummary {
  code: string;
  first_date: string;
  last_date: string;
  /** Distinct bar dates. */
  bars: number;
  /** Distinct bar dates that are open days of the calendar. */
  open_bars: number;
  /** null: the dataset has no volume. */
  zero_volume_days: number | null;
}

/** A code's row before staleness is judged: it depends on the other codes and on today. */
export type CodeVerdict = Omit<QualityRow, 'stale'>;

/** Fields the report sorts by. */
export const QUALITY_SORTS = [
  'code',
  'first_date',
  'last_date',
  'bars',
  'expected',
  'missing',
  'stale',
  'ohlc_violations',
  'zero_volume_days',
] as const;
export type QualitySort = (typeof QUALITY_SORTS)[number];

/** At most this many dates are listed per code (the counts are complete). */
export const MAX_LISTED_DATES = 50;

/** Index of the first element ≥ x (sorted strings). */
function lowerBound(xs: readonly string[], x: string): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((xs[mid] as string) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The open days within [from, to] as an index range [i0, i1) of `open` (sorted). */
function openIn(open: readonly string[], from: string, to: string): [number, number] {
  return [lowerBound(open, from), lowerBound(open, `${to}\u0000`)];
}

/** Open days in [c.first_date, c.last_date] without a bar: when > 0, the code's dates are needed. */
export function missingCount(c: QualityCodeSummary, open: readonly string[]): number {
  const [i0, i1] = openIn(open, c.first_date, c.last_date);
  return i1 - i0 - c.open_bars;
}

/**
 * A code's verdict: its open days from first to last date, the missing ones (listed from
 * `have`, the code's bar dates in that span, needed only when missingCount > 0) and its bad bars
 * (`violations`: dates, oldest first).
 */
export function judgeCode(
  c: QualityCodeSummary,
  open: readonly string[],
  violations: readonly string[],
  have: ReadonlySet<string> | null,
): CodeVerdict {
  const [i0, i1] = openIn(open, c.first_date, c.last_date);
  const missing = i1 - i0 - c.open_bars;
  const missingDates: string[] = [];
  for (let i = i0; missing > 0 && i < i1 && missingDates.length < MAX_LISTED_DATES; i++) {
    const day = open[i] as string;
    if (!have?.has(day)) missingDates.push(day);
  }
  return {
    code: c.code,
    first_date: c.first_date,
    last_date: c.last_date,
    bars: c.bars,
    expected: i1 - i0,
    missing,
    missing_dates: missingDates,
    ohlc_violations: violations.length,
    ohlc_violation_dates: violations.slice(0, MAX_LISTED_DATES),
    zero_volume_days: c.zero_volume_days,
  };
}

/**
 * A code whose last bar is before `latest` (the calendar's latest open day up to today, or up
 * to the window's end) is stale, but only while another code of the report has a bar on it.
 * Returns the day a code's last bar must reach, or null when no code of the report is stale.
 */
export function staleBefore(latest: string | null, newestLastDate: string | null): string | null {
  return latest !== null && newestLastDate !== null && newestLastDate >= latest ? latest : null;
}
