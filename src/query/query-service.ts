import { CATALOG, type Catalog, type Dataset, type Field } from '../catalog/catalog.js';
import { invalid } from '../errors.js';
import {
  ANCHOR_END,
  allowedValues,
  type Condition,
  type QueryPlan,
  type Store,
  type Value,
} from '../storage/store.js';
import { adjustedFields, pagesBeforeAdjusting } from '../storage/bars-sql.js';
import { rowJsonFields, type RowJsonFields } from '../storage/row-json.js';
import { parseQuery, type ParsedQuery } from './parse.js';
import { filterKey, planQuery } from './plan.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { AppError } from '../errors.js';
import { parseRevisionQuery } from './revision-query.js';

export interface QueryOptions {
  /** MDS_REVISIONS_KEEP_DAYS: an as_of earlier than now minus this many days is refused (4005). */
  revisionsKeepDays?: number | undefined;
  /** MDS_SOURCE_PRIORITY: each dataset's default source_priority (parse.ts sourcePriorityDefaults). */
  sourcePriority?: Map<string, string[]>;
  /** Clock (ms), injectable for tests. */
  now?: () => number;
  /**
   * false: every adjusted page is adjusted by the database (bars-sql.ts); the tests compare
   * both ways. Default true: see `adjustsInProcess`.
   */
  adjustInProcess?: boolean;
}

/**
 * A page's rows, either as objects (a `fields=` projection) or, for whole rows, each as its
 * response JSON text (the store keeps it: no per-field values, no serialisation per request).
 */
export type PageRows = { kind: 'objects'; rows: Record<string, Value>[] } | { kind: 'json'; rows: string[] };

export interface QueryPage {
  rows: PageRows;
  total: number;
  limit: number;
  offset: number;
  hasMore: boolean;
  /** Keyset cursor for the page after this one; null on the last page. */
  nextCursor: string | null;
  version: number;
  /** `meta.adjust` of an adjusted page. */
  adjust?: AdjustMeta;
}

/**
 * `meta.adjust`: the method, the qfq anchor given (null: each code's latest factor; `end`), the
 * page's codes without factors, and per code and bar source of the page the factor source and
 * the anchor date used (docs/bars-and-quality.md, "Factor sources").
 */
export interface AdjustMeta {
  method: 'qfq' | 'hfq';
  anchor: string | null;
  codes_without_factors: string[];
  factors: AdjustUsed[];
}

/** What adjusted a code's bars of one source: the factors' source, and the qfq anchor date (null: hfq). */
export interface AdjustUsed {
  code: string;
  source: string | null;
  factor_source: string | null;
  anchor: string | null;
}

/** The codes that have factors, per factor source. */
type FactorCodes = Map<string, Set<string>>;

/** The codes (of `only`, null: all) whose factors come from several sources, and those sources. */
function mixedSources(codes: FactorCodes, only: readonly Value[] | null): FactorState['mixed'] {
  const wanted = only === null ? null : new Set(only);
  const byCode = new Map<string, string[]>();
  for (const [source, set] of codes) {
    for (const c of set) if (!wanted || wanted.has(c)) byCode.set(c, [...(byCode.get(c) ?? []), source]);
  }
  const several = [...byCode].filter(([, s]) => s.length > 1);
  return several.length > 0
    ? {
        names: [...new Set(several.flatMap(([, s]) => s))].sort(),
        codes: several.map(([c]) => c).slice(0, 10),
      }
    : null;
}

/** The codes with factors at one version of the factor dataset; `mixed`: those of several sources. */
interface FactorState {
  version: number;
  codes: FactorCodes;
  mixed: { codes: string[]; names: string[] } | null;
  /** Each code's factor sources. */
  byCode: Map<string, string[]>;
}

/**
 * The factor source of a bar (docs/bars-and-quality.md, "Factor sources"): `adjust_source` when
 * given; else the bar's own source when it has factors for the code; else the code's only
 * factor source; else none (several, none the bar's: refused before, checkAnswerSources).
 */
function chooseSource(
  state: FactorState,
  given: string | null,
  code: string,
  bar: string | null,
): string | null {
  if (given !== null) return given;
  if (bar !== null && state.codes.get(bar)?.has(code) === true) return bar;
  const all = state.byCode.get(code);
  return all?.length === 1 ? (all[0] as string) : null;
}

const pairKey = (code: string, source: string | null): string => `${code}\u0000${source ?? ''}`;

/** Where adjustRows finds its inputs in a row given as an array of values (indexes). */
interface AdjustLayout {
  code: number;
  /** The bar's source (-1: the dataset has none). */
  source: number;
  date: number;
  prices: number[];
  change: { change: number; close: number; pre: number } | null;
}

/** Whole rows' adjusting: reader and writer of the fields it reads, which it changes, their layout. */
interface JsonAdjuster {
  io: RowJsonFields;
  which: number[];
  layout: AdjustLayout;
}

/** One code's factors (of one source, or its only one), dates ascending. */
interface FactorSeries {
  dates: string[];
  values: number[];
}

/** Codes whose factors are kept in memory (each a few dozen numbers); cleared when full. */
const FACTOR_SERIES_SIZE = 20_000;

const TOTAL_CACHE_SIZE = 10_000;
/** Rows per export query: large enough that a 250,000-row export is 250 short queries. */
const EXPORT_CHUNK = 1000;
/** Times an export starts again when a batch lands before its first rows were sent. */
const EXPORT_RESTARTS = 3;

/** A batch changed the dataset during an export: the export is cut rather than mix versions. */
export class ExportChangedError extends Error {
  constructor(dataset: string) {
    super(`dataset ${dataset} changed during the export; retry it`);
  }
}

/**
 * Stage 3: execute. `meta.total` is exact: totals are cached per filter and dataset version,
 * so a large unfiltered table is counted once per change, not once per request.
 */
export class QueryService {
  private readonly totals = new Map<string, { version: number; total: number }>();
  private readonly factorCodes = new Map<string, FactorState>();
  private readonly sourceNames = new Map<string, { version: number; names: string[] }>();
  private readonly factorSeries = new Map<string, { version: number; series: FactorSeries }>();
  private readonly adjusters = new Map<string, JsonAdjuster>();

  constructor(
    private readonly store: Pick<Store, 'datasets'>,
    private readonly catalog: Catalog = CATALOG,
    private readonly opts: QueryOptions = {},
  ) {
    this.adjustInProcess = opts.adjustInProcess ?? true;
  }

  private readonly adjustInProcess: boolean;

  parse(d: Dataset, raw: Record<string, unknown>): { parsed: ParsedQuery; plan: QueryPlan } {
    const parsed = parseQuery(d, raw);
    // The dataset's default precedence, unless the request ranks or picks sources itself.
    const preset = this.opts.sourcePriority?.get(d.name);
    const picked = parsed.exact.some((e) => e.field === d.sourceField);
    if (preset && parsed.sourcePriority === null && !picked && parsed.interval === '1d') {
      parsed.sourcePriority = preset;
    }
    if (parsed.asOf !== null) this.checkHorizon(parsed.asOf);
    const plan = planQuery(d, parsed, this.catalog);
    if (parsed.cursor !== null) plan.after = decodeCursor(plan, parsed.cursor);
    return { parsed, plan };
  }

  /** The revision trail's parameters and plan (revision-query.ts). */
  parseTrail(d: Dataset, raw: Record<string, unknown>): { parsed: ParsedQuery; plan: QueryPlan } {
    const { parsed, plan } = parseRevisionQuery(d, raw);
    if (parsed.cursor !== null) plan.after = decodeCursor(plan, parsed.cursor);
    return { parsed, plan };
  }

  /**
   * The earliest instant whose revisions are all kept (null: all are kept). Retention removes
   * revisions that ended before it, so any as_of at or after it is answered exactly.
   */
  horizon(): string | null {
    const days = this.opts.revisionsKeepDays;
    if (days === undefined) return null;
    return new Date((this.opts.now ?? Date.now)() - days * 86_400_000).toISOString();
  }

  /** 400 / 4005 naming the horizon when `at` is before it. */
  checkHorizon(at: string): void {
    const horizon = this.horizon();
    if (horizon !== null && at < horizon) {
      throw new AppError(
        4005,
        `as_of ${at} is earlier than the retention horizon ${horizon} (MDS_REVISIONS_KEEP_DAYS=${this.opts.revisionsKeepDays})`,
        { extra: { parameter: 'as_of', horizon } },
      );
    }
  }

  version(d: Dataset): Promise<number> {
    return this.store.datasets.datasetVersion(d.name);
  }

  /**
   * The versions an answer depends on: its dataset's (`own`, given when already read), and an
   * adjusted answer's factors' too. `key` changes whenever either does ("12", "12:3"): what an
   * ETag or a cached answer is valid for.
   */
  async answerVersion(
    d: Dataset,
    factors: Dataset | null,
    own?: number,
  ): Promise<{ own: number; key: string; factors?: number }> {
    if (!factors) {
      // Every cached page's path: one read, no Promise.all.
      const v = own ?? (await this.version(d));
      return { own: v, key: String(v) };
    }
    // Read side by side: on PostgreSQL the factors' version costs no second round trip in a row.
    const [v, f] = await Promise.all([own ?? this.version(d), this.version(factors)]);
    return { own: v, key: `${v}:${f}`, factors: f };
  }

  /**
   * The factor sources of the codes an adjusted plan may touch (its `code` filter, else every
   * code with factors), cached per version of the factor dataset. Without `adjust_source`, a
   * code with factors from several sources is 400 / 4001 naming them.
   */
  async checkAdjust(plan: QueryPlan): Promise<FactorCodes | null> {
    return (await this.factorState(plan))?.codes ?? null;
  }

  /**
   * `checkAdjust`, with the factor dataset's version the codes were read at. `known`: that
   * version when the caller has already read it (the page's ETag is of it), saving a statement.
   */
  private async factorState(plan: QueryPlan, known?: number): Promise<FactorState | null> {
    const adjust = plan.bars?.adjust;
    const daily = plan.dataset.daily;
    if (!adjust || !daily) return null;
    const asked = allowedValues(plan.where, daily.code);
    const code = asked?.length === 1 && typeof asked[0] === 'string' ? asked[0] : null;
    const state = await this.factorSources(adjust.factors, code, known, plan.asOf);
    if (adjust.source !== null) {
      const names = await this.factorSourceNames(adjust.factors, state.version, plan.asOf);
      if (!names.includes(adjust.source)) {
        throw invalid(
          `adjust_source ${adjust.source} has no ${adjust.factors.name}${plan.asOf === undefined ? '' : ` as of ${plan.asOf}`}; sources: ${names.join(', ') || 'none'}`,
          { parameter: 'adjust_source', allowed: names },
        );
      }
      return state;
    }
    await this.checkAnswerSources(plan, state, asked);
    return state;
  }

  /**
   * Without `adjust_source`: 400 naming the sources when a bar of the answer (every row the
   * filters select, not only a page) has a code with factors from several sources, none of them
   * the bar's own. Only codes with several factor sources are looked at: none, no statement.
   */
  private async checkAnswerSources(
    plan: QueryPlan,
    state: FactorState,
    asked: readonly Value[] | null,
  ): Promise<void> {
    const daily = plan.dataset.daily;
    if (!daily) return;
    const several = [...state.byCode].filter(([c, s]) => s.length > 1 && (!asked || asked.includes(c)));
    if (several.length === 0) return;
    const own = plan.dataset.sourceField;
    const select = own ? [daily.code, own] : [daily.code];
    const read = async (where: QueryPlan['where']): Promise<Record<string, Value>[]> =>
      (
        await this.store.datasets.query(
          {
            dataset: plan.dataset,
            select,
            where,
            orderBy: select.map((field) => ({ field, dir: 'asc' as const })),
            limit: Number.MAX_SAFE_INTEGER,
            offset: 0,
            distinct: true,
            ...(plan.asOf !== undefined ? { asOf: plan.asOf } : {}),
          },
          false,
        )
      ).rows;
    // A few codes: each looked up through its index; many: the answer's (code, source) pairs at once.
    const rows =
      several.length <= 20
        ? (
            await Promise.all(
              several.map(([c]) => read([...plan.where, { field: daily.code, op: 'eq', value: c }])),
            )
          ).flat()
        : await read(plan.where);
    for (const r of rows) {
      const c = String(r[daily.code.apiName]);
      const sources = state.byCode.get(c);
      if (!sources || sources.length < 2) continue;
      const bar = own ? String(r[own.apiName]) : null;
      if (bar !== null && sources.includes(bar)) continue;
      throw invalid(
        `factors of ${c} come from several sources (${sources.join(', ')})${bar === null ? '' : `, none of them its bars' source ${bar}`}; choose one with adjust_source`,
        { parameter: 'adjust_source', allowed: sources },
      );
    }
  }

  /** Every source of the factor dataset (as known at `asOf`), cached per its version. */
  private async factorSourceNames(factors: Dataset, version: number, asOf?: string): Promise<string[]> {
    const src = factors.sourceField;
    if (!src) return [];
    const key = `${factors.name}|sources|${asOf ?? ''}`;
    const cached = this.sourceNames.get(key);
    if (cached && cached.version === version) return cached.names;
    const r = await this.store.datasets.query(
      {
        dataset: factors,
        select: [src],
        where: [],
        orderBy: [{ field: src, dir: 'asc' }],
        limit: Number.MAX_SAFE_INTEGER,
        offset: 0,
        distinct: true,
        ...(asOf !== undefined ? { asOf } : {}),
      },
      false,
    );
    const names = r.rows.map((row) => String(row[src.apiName]));
    if (this.sourceNames.size >= TOTAL_CACHE_SIZE) this.sourceNames.clear();
    this.sourceNames.set(key, { version, names });
    return names;
  }

  /** `asOf`: the factors as known at that instant (an as_of answer says what was known then). */
  private async factorSources(
    factors: Dataset,
    code: string | null,
    known?: number,
    asOf?: string,
  ): Promise<FactorState> {
    const fs = factors.factors;
    const src = factors.sourceField;
    if (!fs) throw new Error(`${factors.name} declares no factors`);
    const version = known ?? (await this.store.datasets.datasetVersion(factors.name));
    const key = `${factors.name}|${code ?? ''}|${asOf ?? ''}`;
    const cached = this.factorCodes.get(key);
    if (cached && cached.version === version) return cached;
    const select = src ? [fs.code, src] : [fs.code];
    const r = await this.store.datasets.query(
      {
        dataset: factors,
        select,
        where: code === null ? [] : [{ field: fs.code, op: 'eq', value: code }],
        orderBy: select.map((field) => ({ field, dir: 'asc' as const })),
        limit: Number.MAX_SAFE_INTEGER,
        offset: 0,
        distinct: true,
        ...(asOf !== undefined ? { asOf } : {}),
      },
      false,
    );
    const codes: FactorCodes = new Map();
    for (const row of r.rows) {
      const s = src ? String(row[src.apiName]) : '';
      let set = codes.get(s);
      if (!set) codes.set(s, (set = new Set()));
      set.add(String(row[fs.code.apiName]));
    }
    // Codes with factors from several sources, found once per factor version, not per request.
    const mixed = mixedSources(codes, null);
    const byCode = new Map<string, string[]>();
    for (const [source, set] of codes) for (const c of set) byCode.set(c, [...(byCode.get(c) ?? []), source]);
    const state: FactorState = { version, codes, mixed, byCode };
    // Kept only when no batch changed the factors while they were read (as seriesOf).
    if ((await this.store.datasets.datasetVersion(factors.name)) === version) {
      if (this.factorCodes.size >= TOTAL_CACHE_SIZE) this.factorCodes.clear();
      this.factorCodes.set(key, state);
    }
    return state;
  }

  /** The version and the time of the dataset's last change. */
  state(d: Dataset): Promise<{ version: number; changedAt: string | null }> {
    return this.store.datasets.datasetState(d.name);
  }

  /** `factorsVersion`: an adjusted answer's factor version as answerVersion read it (else read here). */
  async page(plan: QueryPlan, version: number, factorsVersion?: number): Promise<QueryPage> {
    const factorState = await this.factorState(plan, factorsVersion);
    const factorCodes = factorState?.codes ?? null;
    const key = filterKey(plan);
    const cached = this.totals.get(key);
    let hit = cached !== undefined && cached.version === version;
    const keyset = plan.after !== undefined;
    // After a cursor, one row more than the page tells whether another page follows.
    const query = { ...plan, limit: keyset ? plan.limit + 1 : plan.limit };
    let result = await this.fetch(query, !hit, factorState);
    // A batch committed between reading `version` and the rows: the cached total is of the old
    // rows (a full snapshot showed 300 rows with total 500). Count again, in the rows' statement.
    if (hit && (await this.store.datasets.datasetVersion(plan.dataset.name)) !== version) {
      result = await this.fetch(query, true, factorState);
      hit = false;
    }
    const total = hit && cached ? cached.total : result.total;
    if (!hit) {
      if (this.totals.size >= TOTAL_CACHE_SIZE) this.totals.delete(this.totals.keys().next().value as string);
      this.totals.set(key, { version, total });
    }
    const rows = result.rows;
    const hasMore = keyset ? rows.rows.length > plan.limit : plan.offset + rows.rows.length < total;
    // The keyset probe row is not part of the page.
    if (rows.rows.length > plan.limit) rows.rows.length = plan.limit;
    const last = rows.rows[rows.rows.length - 1];
    let nextCursor: string | null = null;
    if (hasMore && last !== undefined) {
      const values = typeof last === 'string' ? (JSON.parse(last) as Record<string, Value>) : last;
      nextCursor = encodeCursor(
        plan,
        plan.orderBy.map((o) => values[o.field.apiName] ?? null),
      );
    }
    let adjust: AdjustMeta | undefined;
    const a = plan.bars?.adjust;
    const codeField = plan.dataset.daily?.code;
    const own = plan.dataset.sourceField;
    const pageKeys =
      rows.kind === 'objects' && codeField
        ? rows.rows.map((r) => ({
            code: String(r[codeField.apiName]),
            source: own ? String(r[own.apiName]) : null,
          }))
        : result.keys?.slice(0, rows.rows.length);
    if (a && factorState && factorCodes && pageKeys) {
      const bySource = a.source === null ? [...factorCodes.values()] : [factorCodes.get(a.source)];
      const have = (c: string): boolean => bySource.some((s) => s?.has(c) === true);
      const codes = new Set(pageKeys.map((k) => k.code));
      adjust = {
        method: a.method,
        anchor: a.anchor,
        codes_without_factors: [...codes].filter((c) => !have(c)),
        factors: await this.factorsUsed(plan, factorState, pageKeys),
      };
    }
    if (rows.kind === 'objects') {
      const extra = this.extraFields(plan);
      if (extra.length > 0) for (const r of rows.rows) for (const f of extra) delete r[f.apiName];
    }
    const page: QueryPage = {
      rows,
      total,
      limit: plan.limit,
      offset: plan.offset,
      hasMore,
      nextCursor,
      version,
    };
    if (adjust) page.adjust = adjust;
    return page;
  }

  /**
   * Sort and key fields the cursor needs that a projection left out; for an adjusted answer, its
   * code and source too (meta.adjust names what adjusted each).
   */
  private extraFields(plan: QueryPlan): Field[] {
    const daily = plan.dataset.daily;
    const own = plan.dataset.sourceField;
    const needed = plan.orderBy.map((o) => o.field);
    if (plan.bars?.adjust && daily) needed.push(daily.code, ...(own ? [own] : []));
    return [...new Set(needed)].filter((f) => !plan.select.includes(f));
  }

  /** The last bar's date of each (code, source) among the rows the plan's filters select (`adjust_anchor=end`). */
  private async lastBars(
    plan: QueryPlan,
    keys: readonly { code: string; source: string | null }[],
  ): Promise<Map<string, string | null>> {
    const daily = plan.dataset.daily;
    const own = plan.dataset.sourceField;
    const out = new Map<string, string | null>();
    if (!daily) return out;
    for (const k of keys) {
      const key = pairKey(k.code, k.source);
      if (out.has(key)) continue;
      const where: Condition[] = [...plan.where, { field: daily.code, op: 'eq', value: k.code }];
      if (own && k.source !== null) where.push({ field: own, op: 'eq', value: k.source });
      const r = await this.store.datasets.query(
        {
          dataset: plan.dataset,
          select: [daily.date],
          where,
          orderBy: [{ field: daily.date, dir: 'desc' }],
          limit: 1,
          offset: 0,
          ...(plan.asOf !== undefined ? { asOf: plan.asOf } : {}),
        },
        false,
      );
      const d = r.rows[0]?.[daily.date.apiName];
      out.set(key, typeof d === 'string' ? d : null);
    }
    return out;
  }

  /** meta.adjust.factors: per (code, bar source) of the page, in order, the factor source and anchor date used. */
  private async factorsUsed(
    plan: QueryPlan,
    state: FactorState,
    keys: readonly { code: string; source: string | null }[],
  ): Promise<AdjustUsed[]> {
    const adjust = plan.bars?.adjust;
    if (!adjust) return [];
    const seen = new Map<string, { code: string; source: string | null }>();
    for (const k of keys) if (!seen.has(pairKey(k.code, k.source))) seen.set(pairKey(k.code, k.source), k);
    const ends = adjust.anchor === ANCHOR_END ? await this.lastBars(plan, [...seen.values()]) : null;
    const out: AdjustUsed[] = [];
    for (const [key, k] of seen) {
      const factorSource = chooseSource(state, adjust.source, k.code, k.source);
      const series =
        factorSource === null
          ? null
          : await this.seriesOf(adjust, k.code, factorSource, state.version, plan.asOf);
      let anchor: string | null = null;
      if (series && adjust.method === 'qfq') {
        anchor =
          adjust.anchor === null
            ? (series.dates[series.dates.length - 1] as string)
            : ends
              ? (ends.get(key) ?? null)
              : adjust.anchor;
      }
      out.push({ code: k.code, source: k.source, factor_source: series ? factorSource : null, anchor });
    }
    return out;
  }

  /**
   * Whole rows as stored JSON; a projection (or a row stored without its JSON) as objects, with
   * the sort fields the next cursor needs.
   */
  private async fetch(
    plan: QueryPlan,
    withTotal: boolean,
    state: FactorState | null,
  ): Promise<{ rows: PageRows; total: number; keys?: { code: string; source: string | null }[] }> {
    if (state && this.adjustsInProcess(plan)) {
      // The stored rows' page (the same rows, order, cursor and total as the adjusted page's),
      // adjusted here with the codes' factors kept in memory per factor version.
      const { bars: _bars, ...stored } = plan;
      if (plan.select === plan.dataset.rowFields) {
        // Whole rows: each row's stored JSON with the adjusted values written over the stored
        // ones (a few fields), instead of every field read and serialised again.
        // The values adjusting needs are read back from that JSON, not as columns too: about 9 %
        // of an adjusted page's CPU.
        const r = await this.store.datasets.queryJson(stored, withTotal);
        if (!r.rows.includes(null)) {
          const json = r.rows as string[];
          const { io, which, layout } = this.jsonAdjuster(plan);
          const read = json.map((j) => io.read(j));
          const values = read.map((x) => x.values);
          const adjusted = await this.adjustRows(plan, values, layout, state);
          const rows = json.map((j, i) =>
            adjusted[i] ? io.write(j, (read[i] as { at: number[] }).at, values[i] as Value[], which) : j,
          );
          return {
            rows: { kind: 'json', rows },
            total: r.total,
            keys: values.map((v) => ({
              code: String(v[layout.code]),
              source: layout.source < 0 ? null : String(v[layout.source]),
            })),
          };
        }
      }
      const extra = this.extraFields(plan);
      // What adjusting reads but a projection may leave out: cut off again below.
      const needed = this.adjustInputs(plan).filter((f) => !plan.select.includes(f) && !extra.includes(f));
      const select = [...plan.select, ...extra, ...needed];
      const r = await this.store.datasets.query({ ...stored, select }, withTotal);
      // Adjusted as arrays (adjustRows), the adjusted values then written back.
      const names = select.map((f) => f.apiName);
      const layout = this.adjustLayout(plan, names);
      const values = r.rows.map((row) => names.map((n) => row[n] ?? null));
      const adjusted = await this.adjustRows(plan, values, layout, state);
      const written = [...layout.prices, ...(layout.change ? [layout.change.change] : [])];
      r.rows.forEach((row, i) => {
        const v = values[i] as Value[];
        if (adjusted[i]) for (const k of written) row[names[k] as string] = v[k] ?? null;
      });
      if (needed.length > 0) for (const row of r.rows) for (const f of needed) delete row[f.apiName];
      return { rows: { kind: 'objects', rows: r.rows }, total: r.total };
    }
    // Adjusted or resampled rows are computed: never the stored row JSON.
    if (plan.select === plan.dataset.rowFields && !plan.bars) {
      const r = await this.store.datasets.queryJson(plan, withTotal);
      if (!r.rows.includes(null)) return { rows: { kind: 'json', rows: r.rows as string[] }, total: r.total };
    }
    const r = await this.store.datasets.query(
      { ...plan, select: [...plan.select, ...this.extraFields(plan)] },
      withTotal,
    );
    return { rows: { kind: 'objects', rows: r.rows }, total: r.total };
  }

  /**
   * Whether a page is adjusted here rather than by its SQL (bars-sql.ts): an adjusted page that
   * resamples nothing, sorts by no adjusted value (its page is then a page of the stored rows)
   * and reads the current rows (under as_of the factors known at that instant would be needed).
   * The same IEEE double operations in the same order as the SQL (price × f(d) ÷ f(anchor)), so
   * the same values: test/bars-adjust.test.ts compares both ways on both backends. The SQL
   * version's cost was the statement (the stored rows wrapped in two levels and an as-of
   * subquery per row): docs/performance.md.
   */
  private adjustsInProcess(plan: QueryPlan): boolean {
    const bars = plan.bars;
    return (
      this.adjustInProcess &&
      bars !== undefined &&
      bars.adjust !== null &&
      bars.interval === null &&
      plan.asOf === undefined &&
      plan.trail !== true &&
      plan.dataset.daily?.adjust !== undefined &&
      pagesBeforeAdjusting(plan)
    );
  }

  /**
   * The fields adjusting a row reads: its code and date, the selected prices and change, and
   * the close and pre-close behind the change.
   */
  private adjustInputs(plan: QueryPlan): Field[] {
    const daily = plan.dataset.daily;
    if (!daily?.adjust) return [];
    const out = new Set<Field>([daily.code, daily.date]);
    if (plan.dataset.sourceField) out.add(plan.dataset.sourceField);
    for (const f of daily.adjust.prices) if (plan.select.includes(f)) out.add(f);
    const bar = daily.bar;
    if (bar?.change && plan.select.includes(bar.change)) {
      out.add(bar.change);
      out.add(bar.close);
      if (bar.preClose) out.add(bar.preClose);
    }
    return [...out];
  }

  /**
   * For whole rows of a dataset: the fields adjusting reads, in the row JSON's order, their
   * reader and writer, which of them adjusting changes, and where each input is (adjustLayout).
   * Per dataset and method.
   */
  private jsonAdjuster(plan: QueryPlan): JsonAdjuster {
    const key = `${plan.dataset.name}|${plan.bars?.adjust?.method ?? ''}`;
    let a = this.adjusters.get(key);
    if (!a) {
      const inputs = new Set(this.adjustInputs(plan));
      const ordered = plan.dataset.fields.filter((f) => inputs.has(f));
      const adjusted = adjustedFields(plan);
      a = {
        io: rowJsonFields(plan.dataset, ordered),
        which: ordered.flatMap((f, i) => (adjusted.has(f) ? [i] : [])),
        layout: this.adjustLayout(
          plan,
          ordered.map((f) => f.apiName),
        ),
      };
      this.adjusters.set(key, a);
    }
    return a;
  }

  /**
   * Where adjusting finds its inputs in rows given as arrays of the fields `names` (api names):
   * the code and date, the selected prices, and the change with the close and pre-close behind
   * it (null: the change is not selected, or not recomputed from adjusted prices).
   */
  private adjustLayout(plan: QueryPlan, names: readonly string[]): AdjustLayout {
    const daily = plan.dataset.daily;
    if (!daily?.adjust) throw new Error('adjustLayout without adjust');
    const at = (f: Field): number => {
      const i = names.indexOf(f.apiName);
      if (i < 0) throw new Error(`adjusting reads ${f.apiName}`);
      return i;
    };
    const bar = daily.bar;
    const own = plan.dataset.sourceField;
    return {
      code: at(daily.code),
      source: own ? at(own) : -1,
      date: at(daily.date),
      prices: daily.adjust.prices.filter((f) => plan.select.some((s) => s.apiName === f.apiName)).map(at),
      change:
        bar?.change &&
        plan.select.includes(bar.change) &&
        bar.preClose &&
        daily.adjust.prices.includes(bar.close) &&
        daily.adjust.prices.includes(bar.preClose)
          ? { change: at(bar.change), close: at(bar.close), pre: at(bar.preClose) }
          : null,
    };
  }

  /**
   * The adjusted values of stored rows, in place, as bars-sql.ts's adjustedColumns computes
   * them: each price × f(d) [÷ f(anchor) for qfq], where f(d) is the code's latest factor on or
   * before the bar's date (else its first); the change as adjusted close − adjusted pre-close
   * (the stored change adjusted when there is no pre-close). A code without factors, or a null
   * value, stays as stored.
   */
  private async adjustRows(
    plan: QueryPlan,
    rows: Value[][],
    layout: AdjustLayout,
    state: FactorState,
  ): Promise<boolean[]> {
    const adjust = plan.bars?.adjust;
    if (!adjust) throw new Error('adjustRows without adjust');
    const { prices, change } = layout;
    const hfq = adjust.method === 'hfq';
    const num = (v: Value | undefined): number | null => (typeof v === 'number' ? v : null);
    const barSource = (row: Value[]): string | null =>
      layout.source < 0 ? null : String(row[layout.source]);
    const ends =
      adjust.anchor === ANCHOR_END
        ? await this.lastBars(
            plan,
            rows.map((r) => ({ code: String(r[layout.code]), source: barSource(r) })),
          )
        : null;
    let lastKey: string | null = null;
    let series: FactorSeries | null = null;
    let anchor = 1;
    let f = 1;
    // The SQL's `price * f / a` (qfq) or `price * f` (hfq), evaluated left to right; one
    // closure per call, not per row.
    const times = hfq ? (v: number): number => v * f : (v: number): number => (v * f) / anchor;
    const adjusted: boolean[] = [];
    for (const row of rows) {
      const code = String(row[layout.code]);
      const bar = barSource(row);
      const key = pairKey(code, bar);
      if (key !== lastKey) {
        lastKey = key;
        const source = chooseSource(state, adjust.source, code, bar);
        series = source === null ? null : await this.seriesOf(adjust, code, source, state.version);
        if (series && !hfq) {
          anchor =
            adjust.anchor === null
              ? (series.values[series.values.length - 1] as number)
              : factorAt(series, ends ? (ends.get(key) ?? '') : adjust.anchor);
        }
      }
      adjusted.push(series !== null);
      if (!series) continue;
      f = factorAt(series, String(row[layout.date]));
      // The change is read before the prices are overwritten.
      if (change) {
        const stored = num(row[change.change]);
        const close = num(row[change.close]);
        const pre = num(row[change.pre]);
        row[change.change] =
          row[change.pre] === null
            ? stored === null
              ? null
              : times(stored)
            : close === null || pre === null
              ? null
              : times(close) - times(pre);
      }
      for (const p of prices) {
        const v = num(row[p]);
        row[p] = v === null ? (row[p] ?? null) : times(v);
      }
    }
    return adjusted;
  }

  /** A code's factors (null: none), cached per version of the factor dataset. */
  /** A code's factors of one source (as known at `asOf`), cached per version of the factor dataset. */
  private async seriesOf(
    adjust: NonNullable<NonNullable<QueryPlan['bars']>['adjust']>,
    code: string,
    source: string,
    version: number,
    asOf?: string,
  ): Promise<FactorSeries | null> {
    const factors = adjust.factors;
    const fs = factors.factors;
    if (!fs) throw new Error(`${factors.name} declares no factors`);
    const key = `${factors.name}|${source}|${code}|${asOf ?? ''}`;
    const cached = this.factorSeries.get(key);
    if (cached && cached.version === version) return cached.series.dates.length > 0 ? cached.series : null;
    const src = factors.sourceField;
    const where: Condition[] = [{ field: fs.code, op: 'eq', value: code }];
    if (src) where.push({ field: src, op: 'eq', value: source });
    const r = await this.store.datasets.query(
      {
        dataset: factors,
        select: [fs.date, fs.value],
        where,
        orderBy: [{ field: fs.date, dir: 'asc' }],
        limit: Number.MAX_SAFE_INTEGER,
        offset: 0,
        ...(asOf !== undefined ? { asOf } : {}),
      },
      false,
    );
    const series: FactorSeries = { dates: [], values: [] };
    for (const row of r.rows) {
      const v = row[fs.value.apiName];
      if (typeof v !== 'number') continue;
      series.dates.push(String(row[fs.date.apiName]));
      series.values.push(v);
    }
    // Kept only when no batch changed the factors while they were read: a page of the version
    // after would otherwise be cached under this one.
    if ((await this.store.datasets.datasetVersion(factors.name)) === version) {
      if (this.factorSeries.size >= FACTOR_SERIES_SIZE) this.factorSeries.clear();
      this.factorSeries.set(key, { version, series });
    }
    return series.dates.length > 0 ? series : null;
  }

  private async versionOf(plan: QueryPlan): Promise<string> {
    return (await this.answerVersion(plan.dataset, plan.bars?.adjust?.factors ?? null)).key;
  }

  /**
   * Every row of a plan (limit and offset ignored), in chunks of EXPORT_CHUNK rows for exports
   * of any format (the caller checks an adjusted plan first: checkAdjust). Each chunk is one
   * short keyset query: no connection, cursor or transaction is held while the client takes the
   * rows in, so a slow or stalled client cannot starve the pool or pin SQLite's WAL. One version
   * throughout (the dataset's, and its factors' when adjusted): read before the first chunk and
   * after each one (a batch's rows and its version bump commit together, so a chunk
   * that saw a batch's rows is followed by a read that sees its version). A change before any
   * row was yielded starts again; after, the export fails (ExportChangedError) and the response
   * is cut without its end, so a client never takes a mix of two versions for a whole export.
   */
  async *stream(plan: QueryPlan): AsyncIterable<Record<string, Value>[]> {
    const extra = this.extraFields(plan);
    const select = extra.length > 0 ? [...plan.select, ...extra] : plan.select;
    const keyOf = (r: Record<string, Value>): Value[] => plan.orderBy.map((o) => r[o.field.apiName] ?? null);
    const read = async (p: QueryPlan): Promise<Record<string, Value>[]> =>
      (await this.store.datasets.query({ ...p, select }, false)).rows;
    for await (const rows of this.chunks(plan, read, keyOf)) {
      if (extra.length > 0) for (const r of rows) for (const f of extra) delete r[f.apiName];
      yield rows;
    }
  }

  /**
   * `stream` with each row as an array of `plan.select`'s values in that order (the sort fields
   * a projection left out follow them, for the keyset, and are cut off): no object per row, for
   * the columnar exports, which copy the values straight into typed columns.
   */
  async *streamArrays(plan: QueryPlan): AsyncIterable<Value[][]> {
    const extra = this.extraFields(plan);
    const select = extra.length > 0 ? [...plan.select, ...extra] : plan.select;
    const at = plan.orderBy.map((o) => select.indexOf(o.field));
    const keyOf = (r: Value[]): Value[] => at.map((i) => r[i] ?? null);
    const n = plan.select.length;
    for await (const rows of this.chunks(
      plan,
      (p) => this.store.datasets.queryArrays({ ...p, select }),
      keyOf,
    )) {
      if (extra.length > 0) for (const r of rows) r.length = n;
      yield rows;
    }
  }

  /** The version-checked keyset loop of `stream` and `streamArrays`, over one way of reading a chunk. */
  private async *chunks<R>(
    plan: QueryPlan,
    read: (chunk: QueryPlan) => Promise<R[]>,
    keyOf: (row: R) => Value[],
  ): AsyncIterable<R[]> {
    const name = plan.dataset.name;
    let version = await this.versionOf(plan);
    let after = plan.after;
    let yielded = false;
    for (let restarts = 0; ;) {
      const rows = await read({ ...plan, limit: EXPORT_CHUNK, offset: 0, ...(after ? { after } : {}) });
      const now = await this.versionOf(plan);
      if (now !== version) {
        if (yielded || ++restarts > EXPORT_RESTARTS) throw new ExportChangedError(name);
        version = now;
        after = plan.after;
        continue;
      }
      const last = rows[rows.length - 1];
      if (last === undefined) return;
      after = keyOf(last);
      yielded = true;
      yield rows;
      if (rows.length < EXPORT_CHUNK) return;
    }
  }
}

/** The factor in force on `date`: the latest on or before it, else the first (as the SQL's as-of join). */
function factorAt(s: FactorSeries, date: string): number {
  const d = s.dates;
  let lo = 0;
  let hi = d.length;
  // The number of factor dates ≤ date.
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((d[mid] as string) <= date) lo = mid + 1;
    else hi = mid;
  }
  return s.values[lo === 0 ? 0 : lo - 1] as number;
}
