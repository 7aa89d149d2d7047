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

/**
 * The open days a code's bars `c` span: [c.first_date, c.last_date]; or, when `c` are bars after
 * all of `prev`'s (an append), (prev.last_date, c.last_date].
 */
function span(c: QualityCodeSummary, open: readonly string[], prev: CodeVerdict | null): [number, number] {
  return prev
    ? openIn(open, `${prev.last_date}\u0000`, c.last_date)
    : openIn(open, c.first_date, c.last_date);
}

/** Open days of that span without a bar: when > 0, the code's dates in it are needed. */
export function missingCount(
  c: QualityCodeSummary,
  open: readonly string[],
  prev: CodeVerdict | null = null,
): number {
  const [i0, i1] = span(c, open, prev);
  return i1 - i0 - c.open_bars;
}

/**
 * A code's verdict: its open days from first to last date, the missing ones (listed from
 * `have`, the code's bar dates in the span, needed only when missingCount > 0) and its bad bars
 * (`violations`: dates, oldest first). With `prev`, the verdict of the code's earlier bars when
 * every bar of `c` comes after them: `prev` extended, exactly as if judged from all the bars
 * (its lists are complete below MAX_LISTED_DATES, and what `c` adds comes after them).
 */
export function judgeCode(
  c: QualityCodeSummary,
  open: readonly string[],
  violations: readonly string[],
  have: ReadonlySet<string> | null,
  prev: CodeVerdict | null = null,
): CodeVerdict {
  const [i0, i1] = span(c, open, prev);
  const gaps = i1 - i0 - c.open_bars;
  const missingDates = [...(prev?.missing_dates ?? [])];
  for (let i = i0; gaps > 0 && i < i1 && missingDates.length < MAX_LISTED_DATES; i++) {
    const day = open[i] as string;
    if (!have?.has(day)) missingDates.push(day);
  }
  const bad = [...(prev?.ohlc_violation_dates ?? []), ...violations];
  const zero = c.zero_volume_days;
  return {
    code: c.code,
    first_date: prev?.first_date ?? c.first_date,
    last_date: c.last_date,
    bars: (prev?.bars ?? 0) + c.bars,
    expected: (prev?.expected ?? 0) + i1 - i0,
    missing: (prev?.missing ?? 0) + gaps,
    missing_dates: missingDates,
    ohlc_violations: (prev?.ohlc_violations ?? 0) + violations.length,
    ohlc_violation_dates: bad.slice(0, MAX_LISTED_DATES),
    zero_volume_days:
      prev && prev.zero_volume_days !== null && zero !== null ? prev.zero_volume_days + zero : zero,
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
