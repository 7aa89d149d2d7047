import { Type, type TSchema } from '@sinclair/typebox';
import {
  ADJUSTS,
  adjustOf,
  INTERVALS,
  MAX_FILTER_VALUES,
  RANGE_PARAMS,
  type Adjust,
  type Dataset,
  type Field,
  type Interval,
} from '../catalog/catalog.js';
import { fieldJson } from '../contract/rows.js';
import { invalid } from '../errors.js';
import { normalizeTimestamp } from '../model/values.js';
import { normalizeCode } from './codes.js';
import { EXPORT_FORMAT_NAMES, type ExportFormat } from '../export/export-formats.js';

/**
 * Every query parameter of the dataset endpoints and their revision trails, declared once: its
 * name, which endpoints take it, its words and schema, and how its text is read. The parser
 * (parse.ts, revision-query.ts), each endpoint's parameter list with its schemas
 * (`endpointParameters`: the OpenAPI parameters of http/query-operations.ts, the MCP tools'
 * lists) and docs/endpoints.md (`parameterRows`) derive from this table; what
 * depends on several parameters (sort under interval, adjust_anchor under adjust) stays in
 * parse.ts. Filters are named after the catalog's fields (`filterParameters`). Read by this
 * parser rather than as a TypeBox object through route-declaration.ts's `checkedQuery`: exact
 * filters repeat and take comma lists and code spellings, and a 4001 names what is allowed.
 */

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
/** `json` pages the envelope; the export formats stream the whole result (src/export). */
export type Format = 'json' | ExportFormat;
export const FORMATS: readonly Format[] = ['json', ...EXPORT_FORMAT_NAMES];

/** `interval` of the intraday datasets: minutes of a session, or the whole day. */
export const MINUTE_INTERVALS = ['1m', '5m', '15m', '30m', '60m', '1d'] as const;
export type MinuteInterval = (typeof MINUTE_INTERVALS)[number];

/**
 * `interval` of an intraday dataset (default 1m). Its declaration below (`interval`) documents
 * both kinds; its `read` is the daily periods', since a minute query reads this one before the
 * common parser (query/minute-query.ts) and the two kinds' values differ in type.
 */
export const readMinuteInterval = (raw: string | undefined): MinuteInterval =>
  oneOf('interval', raw ?? '1m', MINUTE_INTERVALS);

/** A dataset's row endpoint, or its revision trail (docs/point-in-time.md). */
export type QueryEndpoint = 'rows' | 'trail';

/** A parameter's documentation: its words, its schema and OpenAPI's extra keys. */
export interface ParamDoc {
  description: string;
  schema: TSchema | Record<string, unknown>;
  style?: 'form';
  explode?: boolean;
  'x-mds-filter'?: 'exact' | 'like' | 'range';
  'x-mds-code'?: 'cn' | 'us';
  'x-mds-field'?: string;
  /** `adjust`: the factor dataset it reads (a client checks which codes have factors in it). */
  'x-mds-factors'?: string;
}

/** One declared parameter (`T`: its value once read). */
export interface QueryParameter<T> {
  /** Whether this endpoint of the dataset takes it. */
  takes: (d: Dataset, endpoint: QueryEndpoint) => boolean;
  doc: (d: Dataset) => ParamDoc;
  /**
   * Its words for every dataset at once, where doc(d)'s differ by dataset: what one schema for all
   * datasets says (the MCP tools, mcp/tool-schemas.ts).
   */
  summary?: string;
  /** Its text as its value, or its default when absent; 400 / 4001 naming it when not one. */
  read: (raw: string | undefined, d: Dataset) => T;
}

/** Whether a dataset has sources to rank: a source field that is part of its unique key. */
export const ranksSources = (d: Dataset): boolean => d.sourceField !== null && d.key.includes(d.sourceField);

/** A date parameter: YYYY-MM-DD, or YYYYMMDD as Tushare writes it (`queryDate`). */
export const QUERY_DATE = {
  type: 'string',
  pattern: '^(\\d{4}-\\d{2}-\\d{2}|\\d{8})$',
  description: 'a date, YYYY-MM-DD or YYYYMMDD',
  examples: ['2024-01-02', '20240102'],
};

const INT_RE = /^\d+$/;

export function nonNegativeInt(name: string, raw: string, min: number): number {
  const n = INT_RE.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw invalid(`${name} must be an integer ≥ ${min} (got "${raw}")`, { parameter: name });
  }
  return n;
}

/** `raw` if it is one of `choices`, else 400 / 4001 naming them. */
function oneOf<C extends string>(name: string, raw: string, choices: readonly C[]): C {
  if (!(choices as readonly string[]).includes(raw)) {
    throw invalid(`${name} must be one of: ${choices.join(', ')}`, {
      parameter: name,
      allowed: [...choices],
    });
  }
  return raw as C;
}

/**
 * An instant as stored revisions compare it: ISO UTC with milliseconds. Finer digits are cut
 * (never rounded up), since every stored valid_from has whole milliseconds.
 */
export function parseInstant(raw: string): string | null {
  const cut = raw.replace(/(\.\d{3})\d+/, '$1');
  return normalizeTimestamp(cut);
}

/** An instant parameter (as_of, since, until): null when absent. */
const instant =
  (name: string) =>
  (raw: string | undefined): string | null => {
    if (raw === undefined) return null;
    const at = parseInstant(raw);
    if (at === null)
      throw invalid(`${name} must be an ISO 8601 timestamp with Z or an offset (got "${raw}")`, {
        parameter: name,
      });
    return at;
  };

/** `a,b,…`: distinct, non-empty source names, in order. */
export function parseSourcePriority(raw: string): string[] {
  const names = raw.split(',').map((s) => s.trim());
  if (names.some((n) => n === '') || new Set(names).size !== names.length) {
    throw invalid(`source_priority must list distinct sources separated by commas (got "${raw}")`, {
      parameter: 'source_priority',
    });
  }
  return names;
}

/** Text taken as given (checked against others by hand in parse.ts, or by the service). */
const text = (raw: string | undefined): string | null => raw ?? null;

/** Row fields of any answer of the endpoint (resampled rows add period_start and bar_count). */
const answerNames = (d: Dataset): string[] => (d.daily?.resampledFields ?? d.rowFields).map((f) => f.apiName);

const rows = (_d: Dataset, e: QueryEndpoint): boolean => e === 'rows';
const both = (): boolean => true;
const trail = (_d: Dataset, e: QueryEndpoint): boolean => e === 'trail';
const adjustable = (d: Dataset, e: QueryEndpoint): boolean => e === 'rows' && adjustOf(d) !== null;

/** `time_from` / `time_to` of the intraday datasets: inclusive bounds on the bar's end minute. */
const timeBound = (name: string, side: 'after' | 'before'): QueryParameter<number | null> => ({
  takes: (d, e) => e === 'rows' && Boolean(d.blocks),
  doc: () => ({
    description: `bars whose end minute is at or ${side} this instant (ISO 8601 with an offset or Z)`,
    schema: Type.String({ format: 'date-time' }),
  }),
  // Epoch ms, as query/minute-query.ts compares each bar's end minute to it.
  read: (raw): number | null => {
    const at = instant(name)(raw);
    return at === null ? null : Date.parse(at);
  },
});

/** A parameter whose text is taken as given, any string (`text`). */
const textParam = (
  takes: QueryParameter<unknown>['takes'],
  description: string,
): QueryParameter<string | null> => ({
  takes,
  doc: () => ({ description, schema: Type.String() }),
  read: text,
});

/** `since` / `until` of the revision trail: inclusive bounds on valid_from. */
const validFromBound = (name: string, op: '≥' | '≤'): QueryParameter<string | null> => ({
  takes: trail,
  doc: () => ({
    description: `valid_from ${op} ${name} (ISO 8601)`,
    schema: Type.String({ format: 'date-time' }),
  }),
  read: instant(name),
});

/**
 * The parameters with fixed names, in the order the endpoints list them (after the filters).
 * `satisfies` keeps each one's value type for the parser.
 */
export const QUERY_PARAMETERS = {
  adjust: {
    takes: adjustable,
    doc: (d) => ({
      description:
        `adjusted prices (${adjustOf(d)
          ?.prices.map((f) => f.apiName)
          .join(', ')}): hfq = price × the ` +
        `${adjustOf(d)?.factors} in force on the bar's date; qfq = that ÷ the anchor's factor; change ` +
        'recomputed, pct_chg and volume as stored, no rounding (docs/bars-and-quality.md)',
      schema: Type.String({ enum: [...ADJUSTS], default: 'none' }),
      ...(adjustOf(d) ? { 'x-mds-factors': adjustOf(d)?.factors } : {}),
    }),
    summary:
      "adjusted prices: hfq = price × the adjustment factor in force on the bar's date; qfq = that ÷ the " +
      "anchor's factor; none as stored (default)",
    read: (raw): Adjust => oneOf('adjust', raw ?? 'none', ADJUSTS),
  },
  adjust_anchor: {
    takes: adjustable,
    doc: () => ({
      description:
        "qfq only: divide by the factor in force on this date, or `end`: at each code's last bar in the " +
        "answer's window (that bar equals its raw price); default: each code's latest factor. " +
        'meta.adjust.factors names the anchor date used per code',
      schema: {
        ...QUERY_DATE,
        pattern: '^(end|\\d{4}-\\d{2}-\\d{2}|\\d{8})$',
        description: 'end, or a date YYYY-MM-DD or YYYYMMDD',
        examples: ['end', '2024-01-02', '20240102'],
      },
    }),
    // Checked with adjust (parse.ts): it needs adjust=qfq.
    read: text,
  },
  adjust_source: textParam(
    adjustable,
    "the factors' source for every bar (400 naming the sources there are when it has none); default: " +
      "each bar's own source when it has factors for the code, else the code's only factor source",
  ),
  time_from: timeBound('time_from', 'after'),
  time_to: timeBound('time_to', 'before'),
  interval: {
    takes: (d, e) => e === 'rows' && (Boolean(d.daily?.aggregate) || Boolean(d.blocks)),
    doc: (d) =>
      d.blocks
        ? {
            description:
              'bars of 1, 5, 15, 30 or 60 minutes by session, or 1d (the day): labelled by their end ' +
              'minute, never across the lunch break or the day; open first, high max, low min, close ' +
              'last, volume and amount summed (docs/minute-bars.md)',
            schema: Type.String({ enum: [...MINUTE_INTERVALS], default: '1m' }),
          }
        : {
            description:
              'one row per code, source and ISO week (1w), calendar month (1M), quarter (1Q) or year (1Y), ' +
              `adjusted first: ${[...(d.daily?.aggregate ?? [])].map(([f, a]) => `${f.apiName} ${a}`).join(', ')}; ` +
              "pre_close the previous period's close, change and pct_chg recomputed; date the last bar's; " +
              'rows add period_start and bar_count',
            schema: Type.String({ enum: [...INTERVALS], default: '1d' }),
          },
    summary:
      'bar period. Daily bars: 1d as stored (default), 1w, 1M, 1Q, 1Y, adjusted first. Minute bars: 1m as ' +
      'stored (default), 5m, 15m, 30m, 60m by session (never across the lunch break), 1d the day',
    // The daily periods; an intraday dataset's are read by readMinuteInterval (above).
    read: (raw): Interval => oneOf('interval', raw ?? '1d', INTERVALS),
  },
  universe: {
    takes: (d, e) => e === 'rows' && d.daily !== null && !d.blocks,
    doc: () => ({
      description:
        "an index code (000300, 000300.SH): each row only where its code was a member of the index on the row's " +
        'date, by the index_members intervals (resampled rows: from the member days only); a survivorship-free ' +
        'panel (docs/universes.md). 400 for an index without membership intervals',
      schema: Type.String({ minLength: 1 }),
    }),
    read: (raw): string | null => {
      if (raw === undefined) return null;
      const code = normalizeCode('cn', raw);
      if (!/^\d{6}$/.test(code))
        throw invalid(`universe must be an index code such as 000300 or 000300.SH (got "${raw}")`, {
          parameter: 'universe',
        });
      return code;
    },
  },
  latest_on: {
    takes: (d, e) => e === 'rows' && d.range !== null && !d.blocks,
    doc: (d) => ({
      description:
        `a cross-section: for each ${d.key
          .filter((k) => k !== d.range)
          .map((k) => k.apiName)
          .join(', ')}, the row with the latest ${d.range?.apiName} on or before this day, with stale_days ` +
        '(trading days between that row and the day, from the stored calendar); with universe=, the members on that ' +
        'day (docs/universes.md)',
      schema: QUERY_DATE,
    }),
    summary:
      'a cross-section: for each key without its range field, the row with the latest range date on or before this ' +
      'day, with stale_days (docs/universes.md)',
    // Read as the range bounds are (YYYY-MM-DD or YYYYMMDD): parse.ts dateParameter.
    read: text,
  },
  max_stale_days: {
    takes: (d, e) => e === 'rows' && d.range !== null && !d.blocks,
    doc: () => ({
      description:
        'with latest_on: only rows at most this many trading days before it (stale_days ≤ N); meta.latest_on says how many were left out',
      schema: Type.Integer({ minimum: 0 }),
    }),
    read: (raw): number | null => (raw === undefined ? null : nonNegativeInt('max_stale_days', raw, 0)),
  },
  source_priority: {
    takes: (d, e) => e === 'rows' && ranksSources(d),
    doc: () => ({
      description:
        'sources in order of precedence, comma-separated: one row per key without its source, the first ' +
        "listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the " +
        "server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given",
      schema: Type.String(),
    }),
    read: (raw): string[] | null => (raw === undefined ? null : parseSourcePriority(raw)),
  },
  batch_id: textParam(trail, 'only the revisions of this batch (revert:<batch_id> for a revert)'),
  since: validFromBound('since', '≥'),
  until: validFromBound('until', '≤'),
  limit: {
    takes: both,
    doc: () => ({
      description: `rows per page; values above ${MAX_LIMIT} are clamped to ${MAX_LIMIT}`,
      schema: Type.Integer({ minimum: 1, default: DEFAULT_LIMIT }),
    }),
    read: (raw): number =>
      raw === undefined ? DEFAULT_LIMIT : Math.min(nonNegativeInt('limit', raw, 1), MAX_LIMIT),
  },
  offset: {
    takes: both,
    doc: () => ({ description: 'rows to skip', schema: Type.Integer({ minimum: 0, default: 0 }) }),
    read: (raw): number => (raw === undefined ? 0 : nonNegativeInt('offset', raw, 0)),
  },
  sort: {
    takes: rows,
    doc: (d) => ({
      description:
        'field to sort by; ties are broken by the unique key' +
        (adjustOf(d) ? '. Under adjust, a price field sorts by its adjusted value' : ''),
      schema: Type.String({ enum: answerNames(d), default: d.sort.field.apiName }),
    }),
    summary: "a row field to sort by (default: the dataset's sort); ties are broken by the unique key",
    // Which fields there are depends on interval (parse.ts).
    read: text,
  },
  order: {
    takes: rows,
    doc: (d) => ({
      description: 'sort direction',
      schema: Type.String({ enum: ['asc', 'desc'], default: d.sort.order }),
    }),
    read: (raw): 'asc' | 'desc' | null => {
      if (raw !== undefined && raw !== 'asc' && raw !== 'desc')
        throw invalid('order must be asc or desc', { parameter: 'order', allowed: ['asc', 'desc'] });
      return raw ?? null;
    },
  },
  fields: {
    takes: rows,
    doc: (d) => ({
      description:
        `comma-separated subset of: ${answerNames(d).join(', ')}. ` +
        'Rows then hold only these fields (the row schema describes whole rows).',
      schema: Type.String(),
    }),
    summary: 'row fields to return (default: every field)',
    // Which fields there are depends on interval (parse.ts).
    read: text,
  },
  format: {
    takes: both,
    doc: () => ({
      description: `${EXPORT_FORMAT_NAMES.join(', ')} export the whole result (no pagination)`,
      schema: Type.String({ enum: [...FORMATS], default: 'json' }),
    }),
    read: (raw): Format => {
      const f = raw ?? 'json';
      if (!(FORMATS as readonly string[]).includes(f))
        throw invalid(`format must be one of: ${FORMATS.join(', ')}`, { parameter: 'format' });
      return f as Format;
    },
  },
  cursor: textParam(both, 'keyset pagination: meta.next_cursor of the previous page of the same query'),
  as_of: {
    takes: rows,
    doc: () => ({
      description:
        'point in time, ISO 8601 with Z or an offset: the answer this request had at that instant ' +
        '(docs/point-in-time.md); 400 / 4005 before the revision retention horizon',
      schema: Type.String({ format: 'date-time' }),
    }),
    read: instant('as_of'),
  },
} satisfies Record<string, QueryParameter<unknown>>;

export type FixedParam = keyof typeof QUERY_PARAMETERS;
/** A fixed parameter's value once read. */
export type ParamValue<N extends FixedParam> = ReturnType<(typeof QUERY_PARAMETERS)[N]['read']>;

/** Reads fixed parameter `name` from `get` (its text once, or undefined) by its declaration. */
export function readParam<N extends FixedParam>(
  name: N,
  d: Dataset,
  get: (name: string) => string | undefined,
): ParamValue<N> {
  const p: QueryParameter<unknown> = QUERY_PARAMETERS[name];
  return p.read(get(name), d) as ParamValue<N>;
}

/**
 * Whether an exact filter splits its value at commas: where no value can hold one (codes,
 * numbers, dates, timestamps, flags, enumerations). Any exact filter may be repeated.
 */
export function takesCommaList(d: Dataset, f: Field): boolean {
  return d.codes.has(f) || f.type !== 'string' || f.enum !== null;
}

/** An exact filter: one value, or several repeated (explode) or as a comma list where taken. */
function exactDoc(d: Dataset, f: Field): ParamDoc {
  const item = f.type === 'date' ? QUERY_DATE : fieldJson(f, 'request', false);
  const market = d.codes.get(f);
  const words = [
    `exact match; several values (any of them matches, at most ${MAX_FILTER_VALUES}) by repeating the parameter`,
    takesCommaList(d, f) ? ' or as a comma list' : '',
    market === 'cn' ? '. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300)' : '',
  ];
  return {
    description: words.join(''),
    schema: { anyOf: [item, { type: 'array', items: item, minItems: 1, maxItems: MAX_FILTER_VALUES }] },
    style: 'form',
    explode: true,
    'x-mds-filter': 'exact',
    ...(market ? { 'x-mds-code': market } : {}),
  };
}

/** A declared parameter of one endpoint: its name and documentation. */
export interface EndpointParam extends ParamDoc {
  name: string;
}

/** A date range parameter's words, on the field named `on`. */
const rangeWords = (name: (typeof RANGE_PARAMS)[number], on: string): string =>
  `inclusive ${name === 'date_from' ? 'lower' : 'upper'} bound on ${on}, YYYY-MM-DD or YYYYMMDD`;

/** The date range parameters' words for every dataset at once (`QueryParameter.summary`). */
export const RANGE_SUMMARIES: Record<(typeof RANGE_PARAMS)[number], string> = {
  date_from: rangeWords('date_from', "the dataset's date field (list_datasets: date_field)"),
  date_to: rangeWords('date_to', "the dataset's date field"),
};

/** The catalog's filters of a dataset: exact (both endpoints), like (rows), the date range (both). */
function filterParameters(d: Dataset, e: QueryEndpoint): EndpointParam[] {
  const range = d.range;
  return [
    ...d.exact.map((f) => ({ name: f.apiName, ...exactDoc(d, f) })),
    ...(e === 'rows'
      ? d.like.map((f) => ({
          name: f.apiName,
          description: 'contains, case-insensitive (% and _ are literal)',
          schema: Type.String(),
          'x-mds-filter': 'like' as const,
        }))
      : []),
    ...(range
      ? RANGE_PARAMS.map((name) => ({
          name,
          description: rangeWords(name, range.apiName),
          schema: QUERY_DATE,
          'x-mds-filter': 'range' as const,
          'x-mds-field': range.apiName,
        }))
      : []),
  ];
}

/** Every parameter an endpoint of the dataset takes, in the order the docs list them. */
export function endpointParameters(d: Dataset, e: QueryEndpoint): EndpointParam[] {
  const fixed = Object.entries(QUERY_PARAMETERS as Record<string, QueryParameter<unknown>>)
    .filter(([, p]) => p.takes(d, e))
    .map(([name, p]) => ({ name, ...p.doc(d) }));
  return [...filterParameters(d, e), ...fixed];
}

/** The names an endpoint of the dataset takes; any other is a 400 / 4001 naming these. */
export const endpointParamNames = (d: Dataset, e: QueryEndpoint): string[] =>
  endpointParameters(d, e).map((p) => p.name);

/** A row of docs/endpoints.md's parameter table (catalog/endpoint-docs.ts writes it). */
export interface ParameterRow {
  name: string;
  /** Datasets whose endpoint takes it, and whose revision trail does: `all`, or their names. */
  rows: string;
  trail: string;
  description: string;
}

/**
 * The fixed parameters for the docs, from their declarations: where each is taken and its words.
 * Words that differ by dataset are given per group of datasets, or for the first one when they
 * differ for more than three (fields= lists each dataset's fields).
 */
export function parameterRows(datasets: readonly Dataset[]): ParameterRow[] {
  return Object.entries(QUERY_PARAMETERS as Record<string, QueryParameter<unknown>>).map(([name, p]) => {
    const where = (e: QueryEndpoint): string => {
      const taking = datasets.filter((d) => p.takes(d, e)).map((d) => d.name);
      if (taking.length === datasets.length) return 'all';
      return taking.length === 0 ? '—' : taking.join(', ');
    };
    const byWords = new Map<string, string[]>();
    for (const d of datasets.filter((x) => p.takes(x, 'rows') || p.takes(x, 'trail'))) {
      const words = p.doc(d).description;
      byWords.set(words, [...(byWords.get(words) ?? []), d.name]);
    }
    const groups = [...byWords];
    const [words = '', names = []] = groups[0] ?? [];
    const description =
      groups.length === 1
        ? words
        : groups.length <= 3
          ? groups.map(([w, n]) => `${n.join(', ')}: ${w}`).join('. ')
          : `for ${names[0] ?? ''}: ${words}`;
    return { name, rows: where('rows'), trail: where('trail'), description };
  });
}
