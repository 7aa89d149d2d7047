import {
  MAX_FILTER_VALUES,
  type Adjust,
  type Dataset,
  type Field,
  type Interval,
} from '../catalog/catalog.js';
import { AppError, invalid } from '../errors.js';
import { isCleanText, isDate, normalizeTimestamp, type Value } from '../model/values.js';
import { ANCHOR_END } from '../model/query-plan.js';
import { padDigits, queryCode } from './codes.js';
import {
  endpointParamNames,
  parseSourcePriority,
  ranksSources,
  readParam,
  takesCommaList,
  type FixedParam,
  type Format,
  type ParamValue,
} from './query-params.js';

export {
  DEFAULT_LIMIT,
  FORMATS,
  MAX_LIMIT,
  parseInstant,
  parseSourcePriority,
  ranksSources,
  takesCommaList,
  type Format,
} from './query-params.js';

export interface ParsedQuery {
  /** Each exact filter's values (distinct, in the order given): a row matches any of them. */
  exact: { field: Field; values: Value[] }[];
  like: { field: Field; value: string }[];
  dateFrom: string | null;
  dateTo: string | null;
  limit: number;
  offset: number;
  sort: Field;
  order: 'asc' | 'desc';
  fields: Field[] | null;
  format: Format;
  /** Keyset pagination: an opaque meta.next_cursor of a previous page (decoded by the service). */
  cursor: string | null;
  /** Daily bars (catalog `daily`): price adjustment; null for `adjust=none`. */
  adjust: { method: Exclude<Adjust, 'none'>; anchor: string | null; source: string | null } | null;
  /** Daily bars: the period of each row; `1d` is the daily rows as stored. */
  interval: Interval;
  /** Point in time, ISO UTC with ms (docs/point-in-time.md); null: now. */
  asOf: string | null;
  /** `source_priority`: one row per key without its source, the first listed source's; null: every source. */
  sourcePriority: string[] | null;
  /** `universe`: daily bars only where their code was a member of this index on their date. */
  universe: string | null;
  /** `latest_on`: each group's latest row on or before this day (a cross-section). */
  latestOn: string | null;
  /** `max_stale_days`: with latest_on, only rows at most this many trading days before it. */
  maxStaleDays: number | null;
}

/** Names a dataset's endpoint accepts, in the order the docs list them (query-params.ts). */
export const allowedParams = (d: Dataset): string[] => endpointParamNames(d, 'rows');

/** The row fields of an answer: a resampled one adds period_start and bar_count. */
export function answerFields(d: Dataset, interval: Interval): readonly Field[] {
  return interval !== '1d' && d.daily ? d.daily.resampledFields : d.rowFields;
}

/** An exact filter's text converted to the field's type, so comparisons are typed on every backend. */
function typedValue(f: Field, raw: string): Value {
  const bad = (what: string) =>
    invalid(`${f.apiName} must be ${what} (got "${raw}")`, { parameter: f.apiName });
  switch (f.type) {
    case 'string':
      return raw;
    case 'number': {
      const n = raw.trim() === '' ? NaN : Number(raw);
      if (!Number.isFinite(n)) throw bad('a number');
      return n;
    }
    case 'integer': {
      const n = /^-?\d+$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(n)) throw bad('an integer');
      return n;
    }
    case 'flag':
      if (raw !== '0' && raw !== '1') throw bad('0 or 1');
      return Number(raw);
    case 'date': {
      const date = queryDate(raw);
      if (date === null) throw bad('a date YYYY-MM-DD or YYYYMMDD');
      return date;
    }
    case 'timestamp': {
      const ts = normalizeTimestamp(raw);
      if (ts === null) throw bad('an ISO 8601 timestamp with an offset or Z');
      return ts;
    }
  }
}

const COMPACT_DATE = /^(\d{4})(\d{2})(\d{2})$/;

/** A date parameter as users write it, YYYY-MM-DD or YYYYMMDD (Tushare's), as YYYY-MM-DD; null if not a real date. */
export function queryDate(raw: string): string | null {
  const m = COMPACT_DATE.exec(raw);
  const date = m ? `${m[1]}-${m[2]}-${m[3]}` : raw;
  return isDate(date) ? date : null;
}

/** Parameter `name`'s date (queryDate), null when not given; 400 / 4001 naming it when not a real date. */
export function dateParameter(name: string, v: string | undefined): string | null {
  if (v === undefined) return null;
  const date = queryDate(v);
  if (date === null)
    throw invalid(`${name} must be a real date YYYY-MM-DD or YYYYMMDD (got "${v}")`, { parameter: name });
  return date;
}

/**
 * date_from and date_to (dateParameter each); 400 / 4006 when date_from is after date_to, a
 * range no day can be in (an empty answer would not say why).
 */
export function dateRange(get: (name: string) => string | undefined): {
  dateFrom: string | null;
  dateTo: string | null;
} {
  const dateFrom = dateParameter('date_from', get('date_from'));
  const dateTo = dateParameter('date_to', get('date_to'));
  if (dateFrom !== null && dateTo !== null && dateFrom > dateTo) {
    throw new AppError(4006, `date_from ${dateFrom} is after date_to ${dateTo}: no day is in that range`, {
      extra: { parameter: 'date_from' },
    });
  }
  return { dateFrom, dateTo };
}

/** An exact filter's raw values (repeated parameters, comma lists) → its typed, distinct values. */
function exactValues(d: Dataset, f: Field, given: readonly string[]): Value[] {
  const split = takesCommaList(d, f);
  const pieces = split ? given.flatMap((g) => g.split(',').map((s) => s.trim())) : given;
  if (pieces.length > MAX_FILTER_VALUES) {
    throw invalid(`${f.apiName} takes at most ${MAX_FILTER_VALUES} values (got ${pieces.length})`, {
      parameter: f.apiName,
      max: MAX_FILTER_VALUES,
    });
  }
  if (pieces.length > 1 && pieces.includes('')) {
    throw invalid(`${f.apiName}: a list of values must not hold an empty one`, { parameter: f.apiName });
  }
  const market = d.codes.get(f);
  const values = pieces.map((p) => {
    const v = padDigits(f, p);
    return typedValue(f, market ? queryCode(market, v, f.apiName) : v);
  });
  return [...new Set(values)];
}

/**
 * The raw query string's percent-encoding: every `%` starts two hex digits and the bytes they
 * give are UTF-8. The query string parser keeps an undecodable `%FF` as the text "%FF", which
 * would be answered as a filter on that text (200, no rows), while the same byte sent raw is a
 * 400: both are refused alike, naming the parameter (400 / 4001).
 */
export function checkQueryEncoding(url: string): void {
  const q = url.indexOf('?');
  if (q < 0 || url.indexOf('%', q) < 0) return;
  for (const part of url.slice(q + 1).split('&')) {
    if (!part.includes('%')) continue;
    try {
      decodeURIComponent(part);
    } catch {
      const eq = part.indexOf('=');
      const rawName = eq < 0 ? part : part.slice(0, eq);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName);
      } catch {
        // The name itself is broken: named as sent.
      }
      throw invalid(`parameter ${name} is not valid percent-encoded UTF-8`, { parameter: name });
    }
  }
}

/**
 * Stage 1 of a query: the raw query string → typed, whitelisted parameters. Anything not in
 * the catalog for this endpoint is a 400 / 4001 naming what is allowed.
 */
export function parseQuery(d: Dataset, raw: Record<string, unknown>): ParsedQuery {
  const allowed = allowedParams(d);
  const text = (name: string, v: unknown): string => {
    if (typeof v !== 'string') throw invalid(`parameter ${name} must be given once`, { parameter: name });
    // NUL or a lone surrogate cannot be compared as text on PostgreSQL (it would be a 500).
    if (!isCleanText(v))
      throw invalid(`parameter ${name} must be text without NUL or unpaired surrogates`, { parameter: name });
    return v;
  };
  const get = (name: string): string | undefined => {
    const v = raw[name];
    return v === undefined ? undefined : text(name, v);
  };
  // Exact filters may be repeated: every value given, in order.
  const exactNames = new Set(d.exact.map((f) => f.apiName));
  const getAll = (name: string): string[] | undefined => {
    const v = raw[name];
    if (v === undefined) return undefined;
    return (Array.isArray(v) ? (v as unknown[]) : [v]).map((x) => text(name, x));
  };
  for (const name of Object.keys(raw)) {
    if (!allowed.includes(name)) {
      throw invalid(`unknown parameter "${name}"; allowed: ${allowed.join(', ')}`, {
        parameter: name,
        allowed,
      });
    }
    if (exactNames.has(name)) getAll(name);
    else get(name);
  }

  const read = <N extends FixedParam>(name: N): ParamValue<N> => readParam(name, d, get);
  const limit = read('limit');
  const offset = read('offset');
  const interval = read('interval');
  const adjust = parseAdjust(d, get);
  // Cross-field: which fields sort and fields= name depends on interval (resampled rows add some).
  const answer = answerFields(d, interval);
  const byApiName = new Map(answer.map((f) => [f.apiName, f]));

  const sortable = answer.map((f) => f.apiName);
  const sortRaw = read('sort');
  let sort = d.sort.field;
  if (sortRaw !== null) {
    const f = byApiName.get(sortRaw);
    if (!f)
      throw invalid(`sort must be one of: ${sortable.join(', ')}`, { parameter: 'sort', allowed: sortable });
    sort = f;
  }
  // Cross-field: another sort field than the default sorts ascending unless order says otherwise.
  const order = read('order') ?? (sortRaw === null || sort === d.sort.field ? d.sort.order : 'asc');

  const exact: ParsedQuery['exact'] = [];
  for (const f of d.exact) {
    const given = getAll(f.apiName);
    if (given !== undefined) exact.push({ field: f, values: exactValues(d, f, given) });
  }
  const like: ParsedQuery['like'] = [];
  for (const f of d.like) {
    const v = get(f.apiName);
    if (v !== undefined) like.push({ field: f, value: v });
  }

  const { dateFrom, dateTo } = dateRange(get);

  let fields: Field[] | null = null;
  const fieldsRaw = read('fields');
  if (fieldsRaw !== null) {
    const names = fieldsRaw.split(',').map((s) => s.trim());
    fields = names.map((n) => {
      const f = byApiName.get(n);
      if (!f)
        throw invalid(`fields: unknown field "${n}"; allowed: ${sortable.join(', ')}`, {
          parameter: 'fields',
        });
      return f;
    });
    fields = [...new Set(fields)];
  }
  const format = read('format');
  const cursor = read('cursor');
  const asOf = read('as_of');
  const sourcePriority = read('source_priority');
  const universe = read('universe');
  const latestOn = dateParameter('latest_on', get('latest_on'));
  const maxStaleDays = read('max_stale_days');
  checkLatestOn(latestOn, maxStaleDays, { interval, sourcePriority, format });
  return {
    exact,
    like,
    dateFrom,
    dateTo,
    limit,
    offset,
    sort,
    order,
    fields,
    format,
    cursor,
    adjust,
    interval,
    asOf,
    sourcePriority,
    universe,
    latestOn,
    maxStaleDays,
  };
}

/** What latest_on answers with: JSON pages of daily rows (docs/universes.md says why). */
function checkLatestOn(
  latestOn: string | null,
  maxStaleDays: number | null,
  other: { interval: Interval; sourcePriority: string[] | null; format: Format },
): void {
  const refuse = (parameter: string, message: string) => invalid(message, { parameter });
  if (latestOn === null) {
    if (maxStaleDays !== null) throw refuse('max_stale_days', 'max_stale_days needs latest_on');
    return;
  }
  if (other.interval !== '1d') throw refuse('latest_on', 'latest_on takes daily rows only (interval=1d)');
  if (other.sourcePriority !== null)
    throw refuse(
      'latest_on',
      'latest_on gives each source its own latest row: give source= rather than source_priority',
    );
  if (other.format !== 'json')
    throw refuse('latest_on', 'latest_on answers as JSON pages (at most a row per code and source)');
}

/**
 * MDS_SOURCE_PRIORITY (`dataset=a,b;dataset=c`): each dataset's default source_priority. A
 * dataset that is not served or has no sources to rank is a start-up error.
 */
export function sourcePriorityDefaults(
  text: string | undefined,
  datasets: readonly Dataset[],
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of (text ?? '').split(';').map((s) => s.trim())) {
    if (part === '') continue;
    const [name, list] = part.split('=', 2).map((s) => s.trim());
    const d = datasets.find((x) => x.name === name);
    if (!d || !ranksSources(d) || !list) {
      throw new Error(
        `MDS_SOURCE_PRIORITY: "${part}" must be <dataset>=<source>,… for a dataset with sources`,
      );
    }
    out.set(d.name, parseSourcePriority(list));
  }
  return out;
}

/** adjust and what only it allows (adjust_anchor with qfq, adjust_source with either). */
function parseAdjust(d: Dataset, get: (name: string) => string | undefined): ParsedQuery['adjust'] {
  const method = readParam('adjust', d, get);
  const anchorRaw = get('adjust_anchor') ?? null;
  const anchor =
    anchorRaw === null || anchorRaw === ANCHOR_END ? anchorRaw : (queryDate(anchorRaw) ?? anchorRaw);
  const source = get('adjust_source') ?? null;
  if (anchor !== null) {
    if (method !== 'qfq') throw invalid('adjust_anchor needs adjust=qfq', { parameter: 'adjust_anchor' });
    if (anchor !== ANCHOR_END && !isDate(anchor))
      throw invalid(`adjust_anchor must be end or a real date YYYY-MM-DD or YYYYMMDD (got "${anchor}")`, {
        parameter: 'adjust_anchor',
      });
  }
  if (source !== null && method === 'none')
    throw invalid('adjust_source needs adjust=qfq or adjust=hfq', { parameter: 'adjust_source' });
  if (source === '') throw invalid('adjust_source must not be empty', { parameter: 'adjust_source' });
  return method === 'none' ? null : { method: method as 'qfq' | 'hfq', anchor, source };
}
