import type { Catalog, Dataset } from '../catalog/catalog.js';
import { AppError, invalid } from '../errors.js';
import { isCleanText } from '../model/values.js';
import type { QualityPageRequest, QualityQuery, Store } from '../storage/store.js';
import { DEFAULT_LIMIT, MAX_LIMIT, dateRange } from './parse.js';
import { queryCode } from './codes.js';
import { dayAfter, dayBefore } from '../model/days.js';
import {
  DEFAULT_JUMP_PCT,
  QUALITY_SORTS,
  judgeChecks,
  noChecks,
  isStale,
  type CodeChecks,
  type CodeVerdict,
  type QualityRow,
  type QualitySort,
} from '../model/quality-rules.js';

/**
 * The data-quality report of a daily series (catalog `daily`): per code, the bars against the
 * open days of a trading calendar (missing days), stale codes, impossible bars and zero-volume
 * days, judged by model/quality-rules.ts. The unfiltered report and one code's are read from the
 * per-code summaries the batch transaction keeps (storage/quality-summary.ts); a date window or
 * another exchange is computed from the rows. Either is cached per version of the dataset and of
 * the calendar.
 */

export const QUALITY_PARAMS = [
  'code',
  'date_from',
  'date_to',
  'exchange',
  'limit',
  'offset',
  'sort',
  'order',
  'jump_pct',
] as const;
const CACHE_SIZE = 1000;
/** Codes whose checks are kept: a few full reports of the largest datasets (1,500 ETFs). */
const CHECK_CACHE_SIZE = 10_000;

/** A span of days, both ends included. */
export interface DaySpan {
  from: string;
  to: string;
}

/**
 * A report row: the judged code, the days of its span the stored calendar does not cover, and
 * its bar-by-bar checks.
 */
export type ReportRow = QualityRow & { unjudged: DaySpan[] } & CodeChecks;

export interface QualityPage {
  rows: ReportRow[];
  total: number;
  limit: number;
  offset: number;
  exchange: string;
  /** The stored calendar's first and last day of the exchange: days outside it are not judged. */
  calendar: DaySpan | null;
  /** The move of a close, in %, beyond which a bar is a jump. */
  jumpPct: number;
  /** The stored calendar ends before the range asked for (its end, or today): calendarEnds. */
  calendarEnds?: CalendarEnds;
}

/** `meta.calendar_ends_before` of a report whose range reaches past the stored calendar. */
export interface CalendarEnds {
  calendar_to: string;
  range_end: string;
  message: string;
}

/**
 * The note when the exchange's stored calendar ends before `rangeEnd` (date_to, else today):
 * days after its end are not judged, so no code can be missing them or be stale for them.
 */
export function calendarEnds(exchange: string, span: DaySpan | null, rangeEnd: string): CalendarEnds | null {
  if (span === null || span.to >= rangeEnd) return null;
  return {
    calendar_to: span.to,
    range_end: rangeEnd,
    message:
      `the stored ${exchange} calendar ends on ${span.to}, before ${rangeEnd}: days after it are not ` +
      `judged (neither missing nor stale); push market/trade-calendar to ${rangeEnd}`,
  };
}

interface Parsed {
  query: QualityQuery;
  page: QualityPageRequest;
  jumpPct: number;
}

export interface QualityOptions {
  /** Today (YYYY-MM-DD, UTC): the calendar's latest open day up to it decides staleness. */
  today?: () => string;
  /** false: always compute from the rows (the summaries' tests compare both answers). */
  summaries?: boolean;
}

export class QualityService {
  private readonly cache = new Map<string, { versions: string; value: unknown }>();
  private readonly checkCache = new Map<string, { versions: string; value: CodeChecks }>();
  private readonly today: () => string;
  private readonly summaries: boolean;

  constructor(
    private readonly store: Pick<Store, 'datasets'>,
    private readonly catalog: Catalog,
    opts: QualityOptions = {},
  ) {
    this.today = opts.today ?? (() => new Date().toISOString().slice(0, 10));
    this.summaries = opts.summaries ?? true;
  }

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
    const { query: qq, page, jumpPct } = parse(d, calendar, raw);
    // The factors too: the checks judge jumps and pre_close against them.
    const factors = d.daily.adjust?.factors;
    const versions = (
      await Promise.all(
        [qq.dataset.name, qq.calendar.name, ...(factors ? [factors] : [])].map((n) =>
          this.store.datasets.datasetVersion(n),
        ),
      )
    ).join(',');
    const today = this.today();
    const key = [qq.dataset.name, qq.exchange, qq.code, qq.dateFrom, qq.dateTo, today];
    const calendarSpan = await this.cached(['calendar', qq.exchange], versions, () => this.coverage(qq));
    const ends = calendarEnds(qq.exchange, calendarSpan, qq.dateTo ?? today);
    const done = async (rows: QualityRow[], total: number): Promise<QualityPage> => {
      const byCode = await this.checks(
        qq,
        key,
        jumpPct,
        versions,
        rows.map((r) => r.code),
      );
      return {
        rows: rows.map((r) => ({
          ...r,
          unjudged: unjudged(r, calendarSpan),
          ...(byCode.get(r.code) ?? noChecks()),
        })),
        total,
        limit: page.limit,
        offset: page.offset,
        exchange: qq.exchange,
        calendar: calendarSpan,
        jumpPct,
        ...(ends ? { calendarEnds: ends } : {}),
      };
    };
    // The summaries answer with the page itself (sorted and paged by the database).
    const summarised = this.summaries
      ? await this.cached([...key, page], versions, async () => {
          const { latest } = await this.calendar(qq, today);
          return this.store.datasets.qualitySummaryPage(qq, latest, page);
        })
      : null;
    if (summarised) return await done(summarised.rows, summarised.total);
    const rows = await this.cached(key, versions, () => this.compute(qq, today));
    const sorted = [...rows].sort((a, b) => {
      const x = a[page.sort];
      const y = b[page.sort];
      const c = x === y ? 0 : x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
      return (page.order === 'asc' ? c : -c) || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);
    });
    return await done(sorted.slice(page.offset, page.offset + page.limit), rows.length);
  }

  /**
   * The bar-by-bar checks of a page's codes. Each code's are cached on their own (per dataset,
   * calendar and factor versions), so another page, page size or sort that shows a code again
   * reads them instead of re-reading its bars; only the codes not cached are read, in one go.
   */
  private async checks(
    qq: QualityQuery,
    key: unknown[],
    jumpPct: number,
    versions: string,
    codes: string[],
  ): Promise<Map<string, CodeChecks>> {
    const keyOf = (code: string): string => JSON.stringify([...key, 'checks', jumpPct, code]);
    const out = new Map<string, CodeChecks>();
    const todo: string[] = [];
    for (const code of codes) {
      const hit = this.checkCache.get(keyOf(code));
      if (hit && hit.versions === versions) out.set(code, hit.value);
      else todo.push(code);
    }
    if (todo.length === 0) return out;
    const { candidates, factors } = await this.store.datasets.qualityChecks(qq, todo, jumpPct);
    const judged = judgeChecks(candidates, factors, jumpPct);
    for (const code of todo) {
      const value = judged.get(code) ?? noChecks();
      out.set(code, value);
      if (this.checkCache.size >= CHECK_CACHE_SIZE)
        this.checkCache.delete(this.checkCache.keys().next().value as string);
      this.checkCache.set(keyOf(code), { versions, value });
    }
    return out;
  }

  /** The first and last day the exchange's stored calendar holds (null: none). */
  private async coverage(qq: QualityQuery): Promise<DaySpan | null> {
    const cal = qq.calendar.calendar;
    if (!cal) return null;
    const end = async (dir: 'asc' | 'desc'): Promise<string | null> => {
      const r = await this.store.datasets.query(
        {
          dataset: qq.calendar,
          select: [cal.date],
          where: [{ field: cal.exchange, op: 'eq', value: qq.exchange }],
          orderBy: [{ field: cal.date, dir }],
          limit: 1,
          offset: 0,
        },
        false,
      );
      const v = r.rows[0]?.[cal.date.apiName];
      return typeof v === 'string' ? v : null;
    };
    const [from, to] = await Promise.all([end('asc'), end('desc')]);
    return from !== null && to !== null ? { from, to } : null;
  }

  /** `make()`'s value, cached per `key` while the dataset's and calendar's versions are `versions`. */
  private async cached<T>(key: unknown[], versions: string, make: () => Promise<T>): Promise<T> {
    const k = JSON.stringify(key);
    const hit = this.cache.get(k);
    if (hit && hit.versions === versions) return hit.value as T;
    const value = await make();
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(k, { versions, value });
    return value;
  }

  /** The exchange's latest open day up to `until`; 400 / 4001 when no calendar of it is stored. */
  private async calendar(qq: QualityQuery, until: string): Promise<{ latest: string | null }> {
    const { exchanges, latest } = await this.store.datasets.qualityCalendar(qq, until);
    if (!exchanges.includes(qq.exchange)) {
      throw invalid(
        `no trading calendar of exchange "${qq.exchange}" is stored${
          exchanges.length ? `; stored: ${exchanges.join(', ')}` : ''
        }`,
        { parameter: 'exchange', allowed: exchanges },
      );
    }
    return { latest };
  }

  /** Every code's row, from the dataset's rows; staleness judged by the window's end or today. */
  private async compute(qq: QualityQuery, today: string): Promise<QualityRow[]> {
    const until = qq.dateTo !== null && qq.dateTo < today ? qq.dateTo : today;
    const { latest } = await this.calendar(qq, until);
    const codes: CodeVerdict[] = await this.store.datasets.qualityCodes(qq);
    return codes.map((c) => ({ ...c, stale: isStale(c.last_date, latest) }));
  }
}

/**
 * The parts of a code's span (first_date … last_date) outside the stored calendar: its open
 * days are unknown there, so `expected` and `missing` say nothing about them.
 */
function unjudged(r: QualityRow, cal: DaySpan | null): DaySpan[] {
  if (cal === null) return [{ from: r.first_date, to: r.last_date }];
  const out: DaySpan[] = [];
  if (r.first_date < cal.from)
    out.push({ from: r.first_date, to: minDate(r.last_date, dayBefore(cal.from)) });
  if (r.last_date > cal.to) out.push({ from: maxDate(r.first_date, dayAfter(cal.to)), to: r.last_date });
  return out;
}

const minDate = (a: string, b: string): string => (a < b ? a : b);
const maxDate = (a: string, b: string): string => (a > b ? a : b);

/** The report's `code` in the stored form (the code field's spellings, codes.ts). */
export function codeParam(d: Dataset, raw: string | undefined): string | null {
  if (raw === undefined) return null;
  // One code: a list would match no stored code and answer an empty report, silently.
  if (raw.includes(','))
    throw invalid(
      `the quality report's code takes one code (got "${raw}"); leave code out for every code's row`,
      { parameter: 'code' },
    );
  const field = d.daily?.code ?? d.blocks?.code;
  const market = field ? d.codes.get(field) : undefined;
  return market ? queryCode(market, raw, 'code') : raw;
}

/**
 * A report's query string: each parameter known and given once as clean text (400 / 4001
 * otherwise), read as text, a date or a bounded integer. Shared by the minute report.
 */
export function reportParams(raw: Record<string, unknown>, allowed: readonly string[]) {
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
  const range = (): ReturnType<typeof dateRange> => dateRange(get);
  const int = (name: string, min: number, dflt: number): number => {
    const v = get(name);
    if (v === undefined) return dflt;
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min)
      throw invalid(`${name} must be an integer ≥ ${min} (got "${v}")`, { parameter: name });
    return n;
  };
  const order = (): 'asc' | 'desc' | undefined => {
    const v = get('order');
    if (v !== undefined && v !== 'asc' && v !== 'desc')
      throw invalid('order must be asc or desc', { parameter: 'order', allowed: ['asc', 'desc'] });
    return v;
  };
  return { get, range, int, order };
}

function parse(d: Dataset, calendar: Dataset, raw: Record<string, unknown>): Parsed {
  const { get, range, int, order } = reportParams(raw, QUALITY_PARAMS);
  const sortRaw = get('sort') ?? 'missing';
  if (!(QUALITY_SORTS as readonly string[]).includes(sortRaw))
    throw invalid(`sort must be one of: ${QUALITY_SORTS.join(', ')}`, {
      parameter: 'sort',
      allowed: [...QUALITY_SORTS],
    });
  const orderRaw = order();
  const exchange = get('exchange') ?? (d.daily?.calendar as string);
  const jumpRaw = get('jump_pct');
  const jumpPct = jumpRaw === undefined ? DEFAULT_JUMP_PCT : Number(jumpRaw);
  if (jumpRaw !== undefined && !(/^\d+(\.\d+)?$/.test(jumpRaw) && jumpPct > 0 && jumpPct <= 1000))
    throw invalid(`jump_pct must be a number of percent, > 0 and ≤ 1000 (got "${jumpRaw}")`, {
      parameter: 'jump_pct',
    });
  return {
    jumpPct,
    query: {
      dataset: d,
      calendar,
      exchange,
      code: codeParam(d, get('code')),
      ...range(),
    },
    page: {
      limit: Math.min(int('limit', 1, DEFAULT_LIMIT), MAX_LIMIT),
      offset: int('offset', 0, 0),
      sort: sortRaw as QualitySort,
      order: orderRaw ?? (sortRaw === 'missing' ? 'desc' : 'asc'),
    },
  };
}
