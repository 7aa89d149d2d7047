import type { Catalog, Dataset } from '../catalog/catalog.js';
import { AppError, invalid } from '../errors.js';
import { isCleanText, isDate } from '../ingest/values.js';
import type { QualityQuery, Store } from '../storage/store.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from './parse.js';

/**
 * The data-quality report of a daily series (catalog `daily`): per code, the bars against the
 * open days of a trading calendar (missing days), stale codes, impossible bars and zero-volume
 * days. The database aggregates per code (storage/quality-sql.ts); this judges the aggregates
 * against the calendar. A report is cached per version of the dataset and of the calendar.
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

/** Fields the report sorts by, and the parameters it accepts. */
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
type QualitySort = (typeof QUALITY_SORTS)[number];
export const QUALITY_PARAMS = [
  'code',
  'date_from',
  'date_to',
  'exchange',
  'limit',
  'offset',
  'sort',
  'order',
] as const;
/** At most this many dates are listed per code (the counts are complete). */
export const MAX_LISTED_DATES = 50;
const CACHE_SIZE = 1000;

export interface QualityPage {
  rows: QualityRow[];
  total: number;
  limit: number;
  offset: number;
  exchange: string;
}

interface Parsed {
  query: QualityQuery;
  limit: number;
  offset: number;
  sort: QualitySort;
  order: 'asc' | 'desc';
}

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

export class QualityService {
  private readonly cache = new Map<string, { versions: string; rows: QualityRow[] }>();

  constructor(
    private readonly store: Pick<Store, 'datasets'>,
    private readonly catalog: Catalog,
    /** Today (YYYY-MM-DD, UTC): the calendar's latest open day up to it decides staleness. */
    private readonly today: () => string = () => new Date().toISOString().slice(0, 10),
  ) {}

  /** The datasets with a report: the catalog's daily series. */
  datasets(): Dataset[] {
    return this.catalog.datasets.filter((d) => d.daily);
  }

  /** The report's page: 404 / 4041 for a dataset without one, 400 / 4001 for a bad parameter. */
  async report(name: string, raw: Record<string, unknown>): Promise<QualityPage> {
    const d = this.catalog.byName.get(name);
    const calendar = this.catalog.calendar;
    if (!d?.daily || !calendar) {
      throw new AppError(
        4041,
        `no quality report for "${name}"; reports exist for: ${this.datasets()
          .map((x) => x.name)
          .join(', ')}`,
      );
    }
    const p = parse(d, calendar, raw);
    const rows = await this.rows(p.query);
    const sorted = [...rows].sort((a, b) => {
      const x = a[p.sort];
      const y = b[p.sort];
      const c = x === y ? 0 : x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
      return (p.order === 'asc' ? c : -c) || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);
    });
    return {
      rows: sorted.slice(p.offset, p.offset + p.limit),
      total: rows.length,
      limit: p.limit,
      offset: p.offset,
      exchange: p.query.exchange,
    };
  }

  /** Every code's row of a report, cached per version of the dataset and of the calendar. */
  private async rows(qq: QualityQuery): Promise<QualityRow[]> {
    const versions = (
      await Promise.all([qq.dataset.name, qq.calendar.name].map((n) => this.store.datasets.datasetVersion(n)))
    ).join(',');
    const today = this.today();
    const key = JSON.stringify([qq.dataset.name, qq.exchange, qq.code, qq.dateFrom, qq.dateTo, today]);
    const hit = this.cache.get(key);
    if (hit && hit.versions === versions) return hit.rows;
    const rows = await this.compute(qq, today);
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { versions, rows });
    return rows;
  }

  private async compute(qq: QualityQuery, today: string): Promise<QualityRow[]> {
    const inputs = await this.store.datasets.qualityInputs(qq);
    if (!inputs.exchanges.includes(qq.exchange)) {
      throw invalid(
        `no trading calendar of exchange "${qq.exchange}" is stored${
          inputs.exchanges.length ? `; stored: ${inputs.exchanges.join(', ')}` : ''
        }`,
        { parameter: 'exchange', allowed: inputs.exchanges },
      );
    }
    const open = inputs.openDays;
    const openIn = (from: string, to: string): [number, number] => [
      lowerBound(open, from),
      lowerBound(open, `${to}\u0000`),
    ];
    // Staleness: the calendar's latest open day up to today (and the window's end).
    const until = qq.dateTo !== null && qq.dateTo < today ? qq.dateTo : today;
    const latest = open[lowerBound(open, `${until}\u0000`) - 1] ?? null;
    const someoneHasLatest = latest !== null && inputs.codes.some((c) => c.last_date >= latest);
    const bad = new Map<string, string[]>();
    for (const v of inputs.violations) bad.set(v.code, [...(bad.get(v.code) ?? []), v.date]);
    const rows: QualityRow[] = [];
    for (const c of inputs.codes) {
      const [i0, i1] = openIn(c.first_date, c.last_date);
      const expected = i1 - i0;
      const missing = expected - c.open_bars;
      const missingDates: string[] = [];
      if (missing > 0) {
        const have = new Set(
          await this.store.datasets.codeDates(qq.dataset, c.code, c.first_date, c.last_date),
        );
        for (let i = i0; i < i1 && missingDates.length < MAX_LISTED_DATES; i++) {
          const day = open[i] as string;
          if (!have.has(day)) missingDates.push(day);
        }
      }
      const violations = bad.get(c.code) ?? [];
      rows.push({
        code: c.code,
        first_date: c.first_date,
        last_date: c.last_date,
        bars: c.bars,
        expected,
        missing,
        missing_dates: missingDates,
        stale: someoneHasLatest && latest !== null && c.last_date < latest,
        ohlc_violations: violations.length,
        ohlc_violation_dates: violations.slice(0, MAX_LISTED_DATES),
        zero_volume_days: c.zero_volume_days,
      });
    }
    return rows;
  }
}

function parse(d: Dataset, calendar: Dataset, raw: Record<string, unknown>): Parsed {
  const allowed: readonly string[] = QUALITY_PARAMS;
  const get = (name: string): string | undefined => {
    const v = raw[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || !isCleanText(v))
      throw invalid(`parameter ${name} must be given once, as text`, { parameter: name });
    return v;
  };
  for (const name of Object.keys(raw)) {
    if (!allowed.includes(name))
      throw invalid(`unknown parameter "${name}"; allowed: ${allowed.join(', ')}`, {
        parameter: name,
        allowed: [...allowed],
      });
    get(name);
  }
  const date = (name: string): string | null => {
    const v = get(name);
    if (v === undefined) return null;
    if (!isDate(v)) throw invalid(`${name} must be a real date YYYY-MM-DD (got "${v}")`, { parameter: name });
    return v;
  };
  const int = (name: string, min: number, dflt: number): number => {
    const v = get(name);
    if (v === undefined) return dflt;
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min)
      throw invalid(`${name} must be an integer ≥ ${min} (got "${v}")`, { parameter: name });
    return n;
  };
  const sortRaw = get('sort') ?? 'missing';
  if (!(QUALITY_SORTS as readonly string[]).includes(sortRaw))
    throw invalid(`sort must be one of: ${QUALITY_SORTS.join(', ')}`, {
      parameter: 'sort',
      allowed: [...QUALITY_SORTS],
    });
  const orderRaw = get('order');
  if (orderRaw !== undefined && orderRaw !== 'asc' && orderRaw !== 'desc')
    throw invalid('order must be asc or desc', { parameter: 'order', allowed: ['asc', 'desc'] });
  const exchange = get('exchange') ?? (d.daily?.calendar as string);
  return {
    query: {
      dataset: d,
      calendar,
      exchange,
      code: get('code') ?? null,
      dateFrom: date('date_from'),
      dateTo: date('date_to'),
    },
    limit: Math.min(int('limit', 1, DEFAULT_LIMIT), MAX_LIMIT),
    offset: int('offset', 0, 0),
    sort: sortRaw as QualitySort,
    order: orderRaw ?? (sortRaw === 'missing' ? 'desc' : 'asc'),
  };
}
