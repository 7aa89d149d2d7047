import type { Catalog, Dataset } from '../catalog/catalog.js';
import { QualityRowSchema } from '../contract/quality.js';
import { INTERVALS } from '../catalog/catalog.js';
import { AppError, invalid } from '../errors.js';
import type { CoverageCache } from '../query/coverage-cache.js';
import { MINUTE_INTERVALS, type MinuteQueryService } from '../query/minute-query.js';
import {
  MINUTE_QUALITY_LIMIT,
  MINUTE_TOLERANCE,
  type MinuteQualityService,
} from '../query/minute-quality.js';
import { allowedParams, queryDate } from '../query/parse.js';
import { pageMeta } from '../query/query-page.js';
import type { QualityService } from '../query/quality-service.js';
import type { QueryService } from '../query/query-service.js';
import type { UniverseService } from '../query/universe.js';
import { universeTool } from './universe-tool.js';
import { revisionItem, type RevisionItem } from '../query/revision-query.js';
import { readSession } from '../storage/read-consistency.js';
import type { QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import {
  DEFAULT_CHANGES,
  DEFAULT_DAYS,
  DEFAULT_ROWS,
  MAX_ROW_BYTES,
  filterNames,
  type ToolName,
} from './tool-schemas.js';
import type { ChangeFeed } from '../query/change-feed.js';

/** What the tools read from: the services the HTTP query routes use. */
export interface ToolServices {
  catalog: Catalog;
  query: QueryService;
  /** The intraday datasets' rows (catalog `blocks`), as their HTTP routes read them. */
  minute: Pick<MinuteQueryService, 'parse' | 'page'>;
  quality: QualityService;
  /** The minute datasets' report (their 1d bars against the daily dataset), as its HTTP route. */
  minuteQuality: Pick<MinuteQualityService, 'report'>;
  coverage: CoverageCache;
  /** Who was there on a day (GET /api/v1/universe's service). */
  universe: Pick<UniverseService, 'read' | 'universe'>;
  /** The change feed's pages (query/change-feed.ts), as GET /api/v1/changes reads them. */
  changes: Pick<ChangeFeed, 'page'>;
}

/** A tool's answer: structured content and the short text an assistant reads first. */
export interface ToolAnswer {
  summary: string;
  /** The rows again, in the text: hosts that pass only text to the model still see them. */
  rows: unknown[];
  structured: Record<string, unknown>;
}

type Args = Record<string, unknown>;
/** Query parameters as the HTTP route receives them: a repeated parameter is a list. */
type RawParams = Record<string, string | string[]>;

/** An argument as the HTTP query string would carry it. */
function text(name: string, v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join(',');
  throw invalid(`${name} must be a string or a number`, { parameter: name });
}

function datasetOf(catalog: Catalog, args: Args): Dataset {
  const d = catalog.byName.get(String(args.dataset));
  if (!d)
    throw invalid(`unknown dataset "${String(args.dataset)}"; call list_datasets`, { parameter: 'dataset' });
  return d;
}

/**
 * The tool's arguments as the route's query parameters: `filters` flattened, after checking
 * that each is a filter of this dataset (the other names are the tool's own arguments).
 */
function queryParams(d: Dataset, args: Args, filtersOf: string[], dflt: number): RawParams {
  const { dataset: _dataset, filters, ...rest } = args;
  const raw: RawParams = {};
  for (const [k, v] of Object.entries((filters ?? {}) as Args)) {
    if (!filtersOf.includes(k)) {
      throw invalid(
        `filters: "${k}" is not a filter of ${d.name}; its filters: ${filtersOf.join(', ') || 'none'}`,
        { parameter: 'filters', allowed: filtersOf },
      );
    }
    // A list is the filter repeated: a row matches any of its values (parse.ts).
    raw[k] = Array.isArray(v) ? v.map((x: unknown) => text(k, x)) : text(k, v);
  }
  for (const [k, v] of Object.entries(rest)) if (v !== undefined && v !== null) raw[k] = text(k, v);
  raw.limit ??= String(dflt);
  return raw;
}

/** Serialised size of each row, for the byte budget. */
const sizes = (rows: readonly unknown[]): number[] =>
  rows.map((r) => Buffer.byteLength(JSON.stringify(r)) + 1);

/** How many of the rows fit the budget (at least one, so paging always advances). */
function fitting(rows: readonly unknown[]): number {
  let total = 2;
  let n = 0;
  for (const s of sizes(rows)) {
    if (n > 0 && total + s > MAX_ROW_BYTES) break;
    total += s;
    n++;
  }
  return n;
}

interface Page {
  rows: unknown[];
  total: number;
  hasMore: boolean;
  nextCursor: string | null;
  adjust?: unknown;
  /** meta.before_history and meta.several_sources of the HTTP answer (query/answer-notes.ts). */
  notes?: { before_history?: { message: string }; several_sources?: { message: string } };
}

/**
 * A page within the byte budget: when the rows asked for are larger, the same request is run
 * again for the rows that fit, so its cursor continues exactly after the last row returned.
 */
async function bounded(
  raw: RawParams,
  run: (raw: RawParams) => Promise<Page>,
): Promise<Page & { cut: boolean }> {
  const page = await run(raw);
  const n = fitting(page.rows);
  if (n >= page.rows.length) return { ...page, cut: false };
  return { ...(await run({ ...raw, limit: String(n) })), cut: true };
}

/** What reads a page: QueryService, or MinuteQueryService for bar blocks (as http/query-routes.ts). */
type PageReader = Pick<QueryService, 'page'>;

/** One page through the same parse → plan → execute steps as the HTTP route. */
async function executePage(
  query: QueryService,
  d: Dataset,
  parse: () => { plan: QueryPlan },
  item: (r: Record<string, Value>) => unknown,
  reader: PageReader = query,
): Promise<Page> {
  const { plan } = parse();
  const { own, factors } = await query.answerVersion(d, plan.bars?.adjust?.factors ?? null);
  await query.checkSources(plan, own);
  const page = await reader.page(plan, own, factors);
  await query.annotate(plan, page);
  const { before_history, several_sources } = pageMeta(page);
  const rows =
    page.rows.kind === 'json'
      ? page.rows.rows.map((j) => item(JSON.parse(j) as Record<string, Value>))
      : page.rows.rows.map(item);
  return {
    rows,
    total: page.total,
    hasMore: page.hasMore,
    nextCursor: page.nextCursor,
    ...(page.adjust ? { adjust: page.adjust } : {}),
    ...(before_history || several_sources ? { notes: { before_history, several_sources } } : {}),
  };
}

/** Rows of a dataset's endpoint, within the budget; bar blocks read as their route reads them. */
function rowsPage(s: ToolServices, d: Dataset, raw: RawParams): Promise<Page & { cut: boolean }> {
  const reader = d.blocks ? s.minute : s.query;
  return bounded(raw, (r) =>
    executePage(
      s.query,
      d,
      () => reader.parse(d, r),
      (x) => x,
      reader,
    ),
  );
}

/** The `interval` values a dataset's endpoint takes (none: it takes no interval). */
export function intervalsOf(d: Dataset): readonly string[] {
  if (d.blocks) return MINUTE_INTERVALS;
  return d.daily?.aggregate ? INTERVALS : [];
}

const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;

/** The paging sentence every paged answer ends with. */
function more(p: Page & { cut: boolean }, returned: number): string {
  const cut = p.cut ? ` (cut to ${returned} by the ${MAX_ROW_BYTES / 1024} KiB answer size)` : '';
  return p.hasMore && p.nextCursor !== null
    ? `More${cut}: call again with the same arguments and cursor "${p.nextCursor}".`
    : 'This is the last page.';
}

/** The first and last value of a field over the rows, when it has any. */
function span(rows: readonly unknown[], field: string | undefined): string {
  if (!field) return '';
  const vs = rows
    .map((r) => (r as Record<string, unknown>)[field])
    .filter((v): v is string => typeof v === 'string')
    .sort();
  return vs.length ? `, ${field} ${vs[0]} … ${vs[vs.length - 1]}` : '';
}

async function listDatasets(s: ToolServices, args: Args): Promise<ToolAnswer> {
  const coverage = new Map((await s.coverage.get()).map((c) => [c.dataset, c]));
  const one = args.dataset === undefined ? null : datasetOf(s.catalog, args);
  const datasets = (one ? [one] : s.catalog.datasets).map((d) => {
    const c = coverage.get(d.name);
    const brief = {
      name: d.name,
      endpoint: d.endpoint,
      description: d.description,
      rows: c?.rows ?? 0,
      first_date: c?.first_date ?? null,
      last_date: c?.last_date ?? null,
      date_field: d.range?.apiName ?? null,
      filters: d.exact.map((f) => f.apiName),
      text_filters: d.like.map((f) => f.apiName),
      quality_report: hasQualityReport(s.catalog, d),
    };
    if (!one) return brief;
    return {
      ...brief,
      fields: d.rowFields.map((f) => ({
        name: f.apiName,
        type: f.type,
        ...(f.unit ? { unit: f.unit } : {}),
        ...(f.description ? { description: f.description } : {}),
        ...(f.enum ? { enum: f.enum } : {}),
        ...(f.required ? { always_set: true } : {}),
      })),
      key: d.key.map((f) => f.apiName),
      default_sort: `${d.sort.field.apiName} ${d.sort.order}`,
      parameters: allowedParams(d).filter((p) => p !== 'format'),
      ...(intervalsOf(d).length ? { intervals: intervalsOf(d) } : {}),
    };
  });
  const summary = one
    ? `${one.name} (${one.endpoint}): ${one.description}. ${datasets[0]?.rows ?? 0} rows stored.`
    : `${plural(datasets.length, 'dataset')}. Call list_datasets with dataset=<name> for a dataset's fields, then query.`;
  return { summary, rows: datasets, structured: { datasets } };
}

async function queryTool(s: ToolServices, args: Args): Promise<ToolAnswer> {
  const d = datasetOf(s.catalog, args);
  // With read replicas, an as_of is answered by a database that holds every commit up to it
  // (as the HTTP route notes it: http/read-needs.ts).
  const at = typeof args.as_of === 'string' ? Date.parse(args.as_of) : NaN;
  const needs = readSession()?.needs;
  if (needs && Number.isFinite(at)) needs.asOf = at;
  const raw = queryParams(d, args, filterNames(d), DEFAULT_ROWS);
  const p = await rowsPage(s, d, raw);
  const n = p.rows.length;
  const adjust = p.adjust as { codes_without_factors?: string[] } | undefined;
  const missing = adjust?.codes_without_factors?.length
    ? ` No factors (rows as traded): ${adjust.codes_without_factors.join(', ')}.`
    : '';
  const notes = [p.notes?.before_history, p.notes?.several_sources].map((x) => (x ? ` ${x.message}.` : ''));
  const summary = `${d.name}: ${plural(n, 'row')} of ${p.total}${span(p.rows, d.range?.apiName)}.${missing}${notes.join('')} ${more(p, n)}`;
  return {
    summary,
    rows: p.rows,
    structured: {
      dataset: d.name,
      rows: p.rows,
      returned: n,
      total: p.total,
      has_more: p.hasMore,
      next_cursor: p.nextCursor,
      ...(p.adjust ? { adjust: p.adjust } : {}),
      ...p.notes,
    },
  };
}

async function revisionTrail(s: ToolServices, args: Args): Promise<ToolAnswer> {
  // Bar blocks' revisions are the stored blocks' (catalog.ts `BarBlocks`), as on the HTTP trail.
  const asked = datasetOf(s.catalog, args);
  const d = trailDataset(asked);
  const raw = queryParams(
    d,
    args,
    d.exact.map((f) => f.apiName),
    DEFAULT_ROWS,
  );
  const p = await bounded(raw, (r) =>
    executePage(
      s.query,
      d,
      () => s.query.parseTrail(d, r),
      (x) => withoutOpaque(d, revisionItem(d, x)),
    ),
  );
  const n = p.rows.length;
  const blocks = asked.blocks ? ' Each item is one code-day block of bars (bar_count).' : '';
  const summary = `${d.name}: ${plural(n, 'revision')} of ${p.total}, oldest first.${blocks} ${more(p, n)}`;
  return {
    summary,
    rows: p.rows,
    structured: {
      dataset: d.name,
      items: p.rows,
      returned: n,
      total: p.total,
      has_more: p.hasMore,
      next_cursor: p.nextCursor,
    },
  };
}

/**
 * A trail item without the row's opaque fields (a bar block's compressed payload): no model can
 * read it, and it would spend the answer's size; `query` with `as_of` answers a version's bars.
 */
function withoutOpaque(d: Dataset, item: RevisionItem): RevisionItem {
  const hidden = d.rowFields.filter((f) => f.opaque === true);
  for (const f of hidden) delete item.row[f.apiName];
  return item;
}

/** The dataset whose revisions a trail lists: a block dataset's stored form, else itself. */
export const trailDataset = (d: Dataset): Dataset => d.blocks?.stored ?? d;

const QUALITY_FIELDS = Object.keys(QualityRowSchema.properties);
/** The checks' lists that flag a code (zero-volume days alone do not: a suspension is normal). */
const FLAG_LISTS = ['jumps', 'identical_runs', 'pre_close_mismatches', 'off_calendar_dates'];

/** Whether quality_report serves a dataset: a daily one judged by the calendar, or a minute one. */
export const hasQualityReport = (catalog: Catalog, d: Dataset): boolean =>
  (d.daily !== null && catalog.calendar !== null) || Boolean(d.blocks);

async function qualityReport(s: ToolServices, args: Args): Promise<ToolAnswer> {
  const d = datasetOf(s.catalog, args);
  // A minute page's default is the HTTP report's (20 codes: a year of each within its block bound).
  const raw = queryParams(d, args, [], d.blocks ? MINUTE_QUALITY_LIMIT : DEFAULT_ROWS);
  if (d.blocks) return minuteQualityReport(s, d, raw);
  const { page, n, next } = await reportPage(raw, async (r) => {
    const p = await s.quality.report(d.name, r);
    const rows = p.rows.map((row) =>
      Object.fromEntries(QUALITY_FIELDS.map((k) => [k, (row as unknown as Record<string, unknown>)[k]])),
    );
    return { ...p, rows };
  });
  const listed = (r: Record<string, unknown>, k: string): boolean => (r[k] as unknown[]).length > 0;
  const flagged = page.rows.filter(
    (r) =>
      (r.missing as number) > 0 ||
      r.stale === true ||
      (r.ohlc_violations as number) > 0 ||
      FLAG_LISTS.some((k) => listed(r, k)),
  ).length;
  const partly = page.rows.filter((r) => (r.unjudged as unknown[]).length > 0).length;
  const covered = page.calendar
    ? `the ${page.exchange} calendar (stored ${page.calendar.from} … ${page.calendar.to})`
    : `the ${page.exchange} calendar (none stored)`;
  const unjudgedText =
    (partly > 0
      ? ` ${plural(partly, 'code')} with days outside the stored calendar, not judged (unjudged).`
      : '') + (page.calendarEnds ? ` Note: ${page.calendarEnds.message}.` : '');
  return reportAnswer(
    d,
    { page, n, next },
    `judged by ${covered}`,
    `missing days, staleness, impossible bars, jumps, identical runs, pre_close or off-calendar bars).${unjudgedText}`,
    // As the HTTP report's meta.calendar: what the rows' `unjudged` spans are measured against.
    { exchange: page.exchange, calendar: page.calendar },
    flagged,
  );
}

/** The minute report of a block dataset (docs/minute-bars.md), paged and cut as the daily one. */
async function minuteQualityReport(s: ToolServices, d: Dataset, raw: RawParams): Promise<ToolAnswer> {
  const { page, n, next } = await reportPage(raw, (r) => s.minuteQuality.report(d, r));
  const flagged = page.rows.filter(
    (r) => r.mismatched_days + r.no_daily + r.no_minutes + r.gap_days + r.ohlc_violations > 0,
  ).length;
  return reportAnswer(
    d,
    { page, n, next },
    `each day's minutes resampled to 1d ${page.daily ? `against ${page.daily}` : 'with no daily dataset to compare with'}`,
    'days differing from the daily bar, days one side lacks, minutes missing inside a session, impossible bars).',
    // As the HTTP minute report's meta.daily and meta.tolerance.
    { daily: page.daily, tolerance: MINUTE_TOLERANCE },
    flagged,
  );
}

interface ReportPage<P> {
  page: P;
  n: number;
  /** The offset of the next page, null on the last. */
  next: number | null;
}

/** A report's page within the byte budget: asked again for the codes that fit when it is larger. */
async function reportPage<P extends { rows: readonly unknown[]; total: number; offset: number }>(
  raw: RawParams,
  run: (raw: RawParams) => Promise<P>,
): Promise<ReportPage<P>> {
  let page = await run(raw);
  const fit = fitting(page.rows);
  if (fit < page.rows.length) page = await run({ ...raw, limit: String(fit) });
  const n = page.rows.length;
  return { page, n, next: page.offset + n < page.total ? page.offset + n : null };
}

/** A report's answer: the summary's sentence, its rows and paging, and the report's own meta. */
function reportAnswer(
  d: Dataset,
  { page, n, next }: ReportPage<{ rows: readonly unknown[]; total: number; offset: number }>,
  judged: string,
  flags: string,
  meta: Record<string, unknown>,
  flagged: number,
): ToolAnswer {
  const summary =
    `${d.name} ${judged}: ${plural(page.total, 'code')}; ` +
    `codes ${page.offset + 1}–${page.offset + n} returned, ${flagged} of them flagged (${flags} ` +
    (next !== null ? `More: call again with offset=${next}.` : 'This is the last page.');
  return {
    summary,
    rows: [...page.rows],
    structured: {
      dataset: d.name,
      ...meta,
      rows: page.rows,
      returned: n,
      total: page.total,
      offset: page.offset,
      next_offset: next,
    },
  };
}

async function tradingDays(s: ToolServices, args: Args): Promise<ToolAnswer> {
  const d = s.catalog.calendar;
  const cal = d?.calendar;
  if (!d || !cal) throw new AppError(4041, 'this catalog has no trading calendar');
  const { open_only: openOnly, ...rest } = args;
  const exchange = cal.exchange.apiName;
  const isOpen = cal.isOpen.apiName;
  const calendar: Args = { [exchange]: rest[exchange] };
  if (rest.source !== undefined) calendar.source = rest.source;
  const filters: Args = openOnly !== false ? { ...calendar, [isOpen]: 1 } : calendar;
  const shown = [cal.date.apiName, isOpen, ...(d.sourceField ? [d.sourceField.apiName] : [])];
  const { [exchange]: _e, source: _s, ...options } = rest;
  const raw = queryParams(
    d,
    { ...options, filters, fields: shown, sort: cal.date.apiName, order: 'asc' },
    filterNames(d),
    DEFAULT_DAYS,
  );
  const p = await rowsPage(s, d, raw);
  const n = p.rows.length;
  const what = openOnly === false ? 'day' : 'trading day';
  const stored = await storedSpan(s, d, cal.date.apiName, calendar);
  const summary =
    `${String(rest[exchange])}: ${plural(n, what)} of ${p.total}${span(p.rows, cal.date.apiName)}.` +
    `${beyondCalendar(stored, rest.date_from, rest.date_to)} ${more(p, n)}`;
  return {
    summary,
    rows: p.rows,
    structured: {
      dataset: d.name,
      exchange: String(rest[exchange]),
      calendar: stored,
      days: p.rows,
      returned: n,
      total: p.total,
      has_more: p.hasMore,
      next_cursor: p.nextCursor,
    },
  };
}

/** The first and last stored day of a calendar (its exchange and source filters), null: none. */
async function storedSpan(
  s: ToolServices,
  d: Dataset,
  date: string,
  filters: Args,
): Promise<{ from: string; to: string } | null> {
  const end = async (order: 'asc' | 'desc'): Promise<string | undefined> => {
    const raw = queryParams(d, { filters, fields: [date], sort: date, order }, filterNames(d), 1);
    const row = (await rowsPage(s, d, raw)).rows[0] as Record<string, unknown> | undefined;
    return typeof row?.[date] === 'string' ? (row[date] as string) : undefined;
  };
  const [from, to] = await Promise.all([end('asc'), end('desc')]);
  return from !== undefined && to !== undefined ? { from, to } : null;
}

/** What the asked range has outside the stored calendar: days whose state is unknown. */
function beyondCalendar(stored: { from: string; to: string } | null, from: unknown, to: unknown): string {
  if (stored === null) return ' No calendar of it is stored: no day is known.';
  const day = (v: unknown): string | null => (typeof v === 'string' ? queryDate(v) : null);
  const [lo, hi] = [day(from), day(to)];
  const out: string[] = [];
  if (lo !== null && lo < stored.from)
    out.push(
      ` The stored calendar starts on ${stored.from}, after date_from ${lo}: the days before it are unknown.`,
    );
  if (hi !== null && hi > stored.to)
    out.push(
      ` The stored calendar ends on ${stored.to}, before date_to ${hi}: the days after it are unknown.`,
    );
  return out.join('');
}

async function changesTool(s: ToolServices, args: Args): Promise<ToolAnswer> {
  const datasets = Array.isArray(args.datasets) ? args.datasets.map(String) : null;
  const since = typeof args.since === 'number' ? args.since : null;
  const limit = typeof args.limit === 'number' ? args.limit : DEFAULT_CHANGES;
  const p = await s.changes.page(datasets, since, limit);
  // Bounded like the rows: fewer events, with next_since at the last one returned.
  const n = fitting(p.events);
  const events = p.events.slice(0, n);
  const cut = n < p.events.length;
  const next = cut ? (events[events.length - 1]?.id ?? since ?? 0) : p.next;
  const hasMore = cut || p.hasMore;
  return {
    summary:
      `${plural(events.length, 'change')} after ${since ?? 'the oldest kept'}, up to id ${next}` +
      (hasMore ? `; more follow: call again with since=${next}` : `; the latest id is ${p.latest}`),
    rows: events,
    structured: { events, returned: events.length, next_since: next, latest_id: p.latest, has_more: hasMore },
  };
}

export const TOOL_HANDLERS: Record<ToolName, (s: ToolServices, args: Args) => Promise<ToolAnswer>> = {
  list_datasets: listDatasets,
  query: queryTool,
  quality_report: qualityReport,
  revision_trail: revisionTrail,
  trading_days: tradingDays,
  universe: (s, args) => universeTool(s.universe, args),
  changes: changesTool,
};
