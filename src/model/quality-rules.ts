import { factorOn, factorSource } from './adjustment.js';

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
  /** Its last date has a zero-volume bar (kept with a summary: what that day added). */
  last_zero: boolean;
}

/** A code's row before staleness is judged: it depends on the other codes and on today. */
export type CodeVerdict = Omit<QualityRow, 'stale'>;

/** A verdict's first fields: the code, its span and its counts (sorted by, and stored). */
const VERDICT_HEAD = ['code', 'first_date', 'last_date', 'bars', 'expected', 'missing'] as const;

/** Fields the report sorts by. */
export const QUALITY_SORTS = [...VERDICT_HEAD, 'stale', 'ohlc_violations', 'zero_volume_days'] as const;
/** A code's verdict field by field, in the report's order: the stored summaries' columns (storage/quality-sql.ts). */
export const VERDICT_FIELDS = [
  ...VERDICT_HEAD,
  'missing_dates',
  'ohlc_violations',
  'ohlc_violation_dates',
  'zero_volume_days',
] as const satisfies readonly (keyof CodeVerdict)[];
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

/** A verdict as a summary keeps it: with what its last date's bars added (zero volume, a bad bar). */
export interface KeptVerdict {
  verdict: CodeVerdict;
  lastZero: boolean;
  lastBad: boolean;
}

/**
 * A verdict on a code's bars before day `from` (exclusive), to be extended by bars from `from` on
 * (quality-summary.ts: a batch that changed only bars from the summary's last date on).
 */
export interface Prior {
  verdict: CodeVerdict;
  from: string;
}

/**
 * A summary's verdict without its last day (whose bars a batch may have changed): as judged on
 * the bars before it, the span ending before that day. null when the day was the code's only one.
 */
export function priorToLastDay(
  { verdict: v, lastZero, lastBad }: KeptVerdict,
  open: readonly string[],
): Prior | null {
  if (v.bars <= 1) return null;
  const day = v.last_date;
  const isOpen = open[lowerBound(open, day)] === day ? 1 : 0;
  const bad = lastBad ? 1 : 0;
  return {
    from: day,
    verdict: {
      ...v,
      bars: v.bars - 1,
      // The day had a bar: it was no gap, so the missing days stay as they were.
      expected: v.expected - isOpen,
      ohlc_violations: v.ohlc_violations - bad,
      // The day is the latest: listed last, if at all.
      ohlc_violation_dates: lastBad
        ? v.ohlc_violation_dates.filter((d) => d !== day)
        : v.ohlc_violation_dates,
      zero_volume_days: v.zero_volume_days === null ? null : v.zero_volume_days - (lastZero ? 1 : 0),
    },
  };
}

/** The open days a code's bars `c` span: from its first date, or from `prior.from`, to its last. */
function span(c: QualityCodeSummary, open: readonly string[], prior: Prior | null): [number, number] {
  return openIn(open, prior?.from ?? c.first_date, c.last_date);
}

/** Open days of that span without a bar: when > 0, the code's dates in it are needed. */
export function missingCount(
  c: QualityCodeSummary,
  open: readonly string[],
  prior: Prior | null = null,
): number {
  const [i0, i1] = span(c, open, prior);
  return i1 - i0 - c.open_bars;
}

/**
 * A code's verdict: its open days from first to last date, the missing ones (listed from
 * `have`, the code's bar dates in the span, needed only when missingCount > 0) and its bad bars
 * (`violations`: dates, oldest first). With `prior`, `c` being the code's bars from
 * `prior.from` on: the prior verdict extended, exactly as if judged from all the bars (its
 * lists are complete below MAX_LISTED_DATES, and what `c` adds comes after them).
 */
export function judgeCode(
  c: QualityCodeSummary,
  open: readonly string[],
  violations: readonly string[],
  have: ReadonlySet<string> | null,
  prior: Prior | null = null,
): CodeVerdict {
  const prev = prior?.verdict ?? null;
  const [i0, i1] = span(c, open, prior);
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
 * to the window's end) is stale, whatever the other codes' bars: a report of one code (`code=`)
 * judges it too, and when every code stopped, every code is. `latest` null (no open day of the
 * calendar up to then): none is.
 */
export function isStale(lastDate: string, latest: string | null): boolean {
  return latest !== null && lastDate < latest;
}

// The bar-by-bar checks (issue 27 items 6 and 8): computed for the codes of a report's page from
// the bars the database flags (storage/quality-sql.ts qualityChecksSql) and the codes' factors.

/** A move of a bar's close from the previous bar's beyond this, in %, is a jump (default). */
export const DEFAULT_JUMP_PCT = 20;
/**
 * A pushed pre_close further than this from the previous close (times the factor change) is
 * inconsistent: half a fen, above every exchange's rounding of an ex-dividend reference price.
 */
export const PRE_CLOSE_TOLERANCE = 0.005;

/** A bar the database flagged, with the previous bar of its series (code and source). */
export interface CheckCandidate {
  code: string;
  source: string | null;
  date: string;
  prevDate: string | null;
  close: number;
  prevClose: number | null;
  preClose: number | null;
  offCalendar: boolean;
  /** Zero volume on a day that is not suspended. */
  zeroVolume: boolean;
  /** The dataset's suspension flag is 1 (model: catalog `daily.bar.suspended`). */
  suspended: boolean;
  /** open, high, low, close and volume equal to the previous bar's. */
  samePrevious: boolean;
}

/** One factor of a code (the daily dataset's factors, every source). */
export interface FactorPoint {
  code: string;
  source: string | null;
  date: string;
  value: number;
}

type Sourced = { source?: string };

/** What the checks add to a code's row; each list holds its first MAX_LISTED_DATES items. */
export interface CodeChecks {
  off_calendar_dates: string[];
  zero_volume_dates: string[];
  suspended_dates: string[];
  jumps: ({ date: string; pct: number } & Sourced)[];
  identical_runs: ({ from: string; to: string; bars: number } & Sourced)[];
  pre_close_mismatches: ({ date: string; pre_close: number; expected: number } & Sourced)[];
}

export const noChecks = (): CodeChecks => ({
  off_calendar_dates: [],
  zero_volume_dates: [],
  suspended_dates: [],
  jumps: [],
  identical_runs: [],
  pre_close_mismatches: [],
});

/**
 * The factor in force on a day for a bar of `source`, by adjusting's own rules (adjustment.ts):
 * the bar's own source's factors when it has some for the code, else the code's only factor
 * source's; the latest on or before the day, else the first. null: no factor source (none, or
 * several others: the bar is judged unadjusted).
 */
function factorAt(points: readonly FactorPoint[], source: string | null, date: string): number | null {
  const sources = new Set(points.map((p) => p.source));
  const chosen = factorSource<string | null, boolean>({
    given: null,
    own: source,
    ownHasFactors: (own) => sources.has(own),
    only: () => (sources.size === 1 ? (points[0]?.source ?? null) : null),
    when: (test, then, otherwise) => (test ? then : otherwise),
  });
  const series = points.filter((p) => p.source === chosen);
  if (series.length === 0) return null;
  return factorOn<number | null, string>(
    {
      onOrBefore: (d) => series.findLast((p) => p.date <= d)?.value ?? null,
      first: () => series[0]?.value ?? null,
      last: () => series.at(-1)?.value ?? null,
      coalesce: (x, y) => x ?? y,
    },
    date,
  );
}

const push = <T>(list: T[], item: T): void => {
  if (list.length < MAX_LISTED_DATES) list.push(item);
};
const round = (x: number, digits: number): number => Number(x.toFixed(digits));

/**
 * Each code's checks: off-calendar, zero-volume and suspended dates (a suspended day is neither
 * a zero-volume day nor part of an identical run: the SQL leaves it out of both); jumps (the close's move from the
 * previous bar, adjusted by the factor change between them, beyond `jumpPct` %: a move a factor
 * explains is no jump); runs of bars identical to the previous one (from the first bar of the
 * run); a pushed pre_close that is not the previous close times the factor change.
 */
export function judgeChecks(
  candidates: readonly CheckCandidate[],
  factors: readonly FactorPoint[],
  jumpPct: number,
): Map<string, CodeChecks> {
  const factorsOf = new Map<string, FactorPoint[]>();
  for (const f of factors) {
    const list = factorsOf.get(f.code);
    if (list) list.push(f);
    else factorsOf.set(f.code, [f]);
  }
  const out = new Map<string, CodeChecks>();
  // The open run of each series: its entry, to extend while bars stay identical.
  const runs = new Map<string, { to: string; bars: number }>();
  for (const c of candidates) {
    let checks = out.get(c.code);
    if (!checks) out.set(c.code, (checks = noChecks()));
    const src: Sourced = c.source === null ? {} : { source: c.source };
    if (c.offCalendar) push(checks.off_calendar_dates, c.date);
    if (c.zeroVolume) push(checks.zero_volume_dates, c.date);
    if (c.suspended) push(checks.suspended_dates, c.date);
    const series = `${c.code}\u0000${c.source ?? ''}`;
    if (c.samePrevious && c.prevDate !== null) {
      const run = runs.get(series);
      if (run && run.to === c.prevDate) {
        run.to = c.date;
        run.bars++;
      } else {
        const entry = { from: c.prevDate, to: c.date, bars: 2, ...src };
        runs.set(series, entry);
        push(checks.identical_runs, entry);
      }
    }
    if (c.prevDate === null || c.prevClose === null) continue;
    const points = factorsOf.get(c.code) ?? [];
    const before = factorAt(points, c.source, c.prevDate);
    const now = factorAt(points, c.source, c.date);
    // The previous close in today's terms: times the factor change (a dividend lowers it).
    const ratio = before !== null && now !== null ? before / now : 1;
    const expected = c.prevClose * ratio;
    if (expected > 0) {
      const pct = (c.close / expected - 1) * 100;
      if (Math.abs(pct) > jumpPct + 1e-9) push(checks.jumps, { date: c.date, pct: round(pct, 2), ...src });
    }
    if (c.preClose !== null && Math.abs(c.preClose - expected) > PRE_CLOSE_TOLERANCE) {
      push(checks.pre_close_mismatches, {
        date: c.date,
        pre_close: c.preClose,
        expected: round(expected, 4),
        ...src,
      });
    }
  }
  return out;
}
