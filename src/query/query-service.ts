import { CATALOG, type Catalog, type Dataset, type Field } from '../catalog/catalog.js';
import type { Store } from '../storage/store.js';
import { latestCondition, memberCondition, type QueryPlan } from '../model/query-plan.js';
import { latestOnStep } from './latest-on.js';
import { invalid } from '../errors.js';
import type { Value } from '../model/values.js';
import { parseQuery, type ParsedQuery } from './parse.js';
import { filterKey, planQuery } from './plan.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { parseRevisionQuery } from './revision-query.js';
import { AsOfHorizon } from './as-of-horizon.js';
import { PageTotals } from './page-totals.js';
import { FactorSources, type FactorCodes, type FactorState } from './factor-sources.js';
import { InProcessAdjust } from './in-process-adjust.js';
import { adjustMeta } from './adjust-meta.js';
import { AnswerNotes, severalSources } from './answer-notes.js';
import { exportChunks, exportChunksOf, type ChunkShape } from './export-chunks.js';
import { valueAt, type ValueColumn, type ValueColumns } from '../model/value-columns.js';
import type { FetchedRows, QueryPage } from './query-page.js';

export type { PageRows, QueryPage } from './query-page.js';
export type { AdjustMeta, AdjustUsed } from './adjust-meta.js';
export { ExportChangedError } from './export-chunks.js';

export interface QueryOptions {
  /** MDS_REVISIONS_KEEP_DAYS: an as_of earlier than now minus this many days is refused (4005). */
  revisionsKeepDays?: number | undefined;
  /** MDS_SOURCE_PRIORITY: each dataset's default source_priority (parse.ts sourcePriorityDefaults). */
  sourcePriority?: Map<string, string[]>;
  /** Clock (ms), injectable for tests. */
  now?: () => number;
  /**
   * false: every adjusted page is adjusted by the database (bars-sql.ts); the tests compare
   * both ways. Default true: see `InProcessAdjust.applies`.
   */
  adjustInProcess?: boolean;
}

/**
 * Stage 3: execute. The parts, each in its own file: the `as_of` horizon (as-of-horizon.ts),
 * the totals cache (page-totals.ts), the factors of adjusted answers and their caches
 * (factor-sources.ts), adjusting in the process (in-process-adjust.ts), `meta.adjust`
 * (adjust-meta.ts) and export chunking (export-chunks.ts); here they are put together behind
 * the one surface the routes, the MCP tools and the tests call.
 */
export class QueryService {
  private readonly totals = new PageTotals();
  private readonly asOfHorizon: AsOfHorizon;
  /** The factors of adjusted answers, shared with the intraday reads (minute-query.ts). */
  readonly factors: FactorSources;
  private readonly inProcess: InProcessAdjust;
  private readonly notes: AnswerNotes;

  constructor(
    private readonly store: Pick<Store, 'datasets'>,
    private readonly catalog: Catalog = CATALOG,
    private readonly opts: QueryOptions = {},
  ) {
    this.asOfHorizon = new AsOfHorizon(opts.revisionsKeepDays, opts.now);
    this.factors = new FactorSources(store);
    this.inProcess = new InProcessAdjust(store, this.factors, opts.adjustInProcess ?? true);
    this.notes = new AnswerNotes(store);
  }

  /** 400 / 4007 for a source named in another case than the stored one (answer-notes.ts). */
  checkSources(plan: QueryPlan, version: number): Promise<void> {
    return this.notes.checkSources(plan, version);
  }

  /**
   * What a page of `plan` says beyond its rows (answer-notes.ts): `as_of` before the dataset's
   * first change, several sources for one key. Any reader's page (daily, minute).
   */
  async annotate(plan: QueryPlan, page: QueryPage): Promise<void> {
    const before = await this.notes.beforeHistory(plan.dataset, plan.asOf);
    if (before) page.beforeHistory = before;
    const several = plan.trail ? null : severalSources(plan.dataset, page.rows);
    if (several) page.severalSources = several;
  }

  parse(d: Dataset, raw: Record<string, unknown>): { parsed: ParsedQuery; plan: QueryPlan } {
    const parsed = parseQuery(d, raw);
    // The dataset's default precedence, unless the request ranks or picks sources itself.
    const preset = this.opts.sourcePriority?.get(d.name);
    const picked = parsed.exact.some((e) => e.field === d.sourceField);
    if (preset && parsed.sourcePriority === null && !picked) {
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

  /** The earliest instant whose revisions are all kept (null: all are kept): as-of-horizon.ts. */
  horizon(): string | null {
    return this.asOfHorizon.horizon();
  }

  /** 400 / 4005 naming the horizon when `at` is before it. */
  checkHorizon(at: string): void {
    this.asOfHorizon.check(at);
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
    also: readonly Dataset[] = [],
  ): Promise<{ own: number; key: string; factors?: number }> {
    if (also.length > 0) {
      // universe= and latest_on: the intervals' and the calendar's changes change the answer too.
      const [a, ...v] = await Promise.all([
        this.answerVersion(d, factors, own),
        ...also.map((x) => this.version(x)),
      ]);
      return { ...a, key: `${a.key}:m${v.join('.')}` };
    }
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
    return (await this.factors.stateOf(plan))?.codes ?? null;
  }

  /** The version and the time of the dataset's last change. */
  state(d: Dataset): Promise<{ version: number; changedAt: string | null }> {
    return this.store.datasets.datasetState(d.name);
  }

  /** `factorsVersion`: an adjusted answer's factor version as answerVersion read it (else read here). */
  async page(asked: QueryPlan, version: number, factorsVersion?: number): Promise<QueryPage> {
    const factorState = await this.factors.stateOf(asked, factorsVersion);
    const members = await this.checkUniverse(asked);
    // latest_on: its staleness bound read from the calendar, its rows' stale_days after the read.
    const latest = await latestOnStep(this.store, this.catalog, asked);
    const plan = latest?.plan ?? asked;
    // A total under universe= is of the intervals' version too.
    const key = members === null ? filterKey(plan) : `${filterKey(plan)}|m${members}`;
    const cached = this.totals.get(key, version);
    let hit = cached !== undefined;
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
    const total = hit && cached !== undefined ? cached : result.total;
    if (!hit) this.totals.set(key, version, total);
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
    const codeField = plan.dataset.daily?.code;
    const own = plan.dataset.sourceField;
    const pageKeys =
      rows.kind === 'objects' && codeField
        ? rows.rows.map((r) => ({
            code: String(r[codeField.apiName]),
            source: own ? String(r[own.apiName]) : null,
          }))
        : result.keys?.slice(0, rows.rows.length);
    const adjust =
      factorState && pageKeys
        ? await adjustMeta(this.store, this.factors, plan, factorState, pageKeys)
        : undefined;
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
    if (latest) {
      const { after: _after, ...whole } = asked;
      page.latestOn = await latest.finish(
        rows,
        total,
        async () => (await this.store.datasets.query({ ...whole, limit: 1, offset: 0 }, true)).total,
      );
    }
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

  /**
   * Whole rows as stored JSON; a projection (or a row stored without its JSON) as objects, with
   * the sort fields the next cursor needs.
   */
  private async fetch(plan: QueryPlan, withTotal: boolean, state: FactorState | null): Promise<FetchedRows> {
    if (state && this.inProcess.applies(plan)) {
      return this.inProcess.fetch(plan, withTotal, state, this.extraFields(plan));
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
   * What an export must not see change (export-chunks.ts): an adjusted export's factor version;
   * nothing else (batches into the dataset itself do not stop an export).
   */
  private factorsGuard(plan: QueryPlan): (() => Promise<string>) | null {
    const factors = plan.bars?.adjust?.factors;
    return factors ? async () => String(await this.version(factors)) : null;
  }

  /** The datasets besides its own and its factors that an answer depends on (universe=, latest_on). */
  alsoReads(plan: QueryPlan): Dataset[] {
    const members = memberCondition(plan.where)?.members.dataset;
    const calendar = latestCondition(plan.where) ? this.catalog.calendar : null;
    return [...(members ? [members] : []), ...(calendar ? [calendar] : [])];
  }

  /**
   * `universe=`: 400 / 4001 when the index has no membership interval at all (as the plan reads
   * them), rather than an empty answer; else the intervals' version. null: no universe.
   */
  async checkUniverse(plan: QueryPlan): Promise<number | null> {
    const c = memberCondition(plan.where);
    if (c === null) return null;
    const m = c.members;
    const version = await this.version(m.dataset);
    const probe: QueryPlan = {
      dataset: m.dataset,
      select: [m.code],
      where: [{ field: m.index, op: 'eq', value: c.index }],
      orderBy: m.dataset.key.map((field) => ({ field, dir: 'asc' as const })),
      limit: 1,
      offset: 0,
      ...(plan.asOf !== undefined ? { asOf: plan.asOf } : {}),
    };
    if ((await this.store.datasets.query(probe, false)).rows.length === 0)
      throw invalid(
        `universe: index ${c.index} has no membership intervals in ${m.dataset.name} ` +
          '(universe= reads those only; docs/universes.md)',
        { parameter: 'universe' },
      );
    return version;
  }

  /**
   * Every row of a plan (limit and offset ignored), in chunks for exports of any format (the
   * caller checks an adjusted plan first: checkAdjust), continuing after its cursor: export-chunks.ts.
   */
  async *stream(plan: QueryPlan): AsyncIterable<Record<string, Value>[]> {
    const extra = this.extraFields(plan);
    const select = extra.length > 0 ? [...plan.select, ...extra] : plan.select;
    const keyOf = (r: Record<string, Value>): Value[] => plan.orderBy.map((o) => r[o.field.apiName] ?? null);
    const read = async (p: QueryPlan): Promise<Record<string, Value>[]> =>
      (await this.store.datasets.query({ ...p, select, bulk: true }, false)).rows;
    for await (const rows of exportChunks(plan, read, keyOf, this.factorsGuard(plan))) {
      if (extra.length > 0) for (const r of rows) for (const f of extra) delete r[f.apiName];
      yield rows;
    }
  }

  /**
   * `stream` as columns of `plan.select`'s values in that order (the sort fields a projection
   * left out follow them, for the keyset, and are cut off): no object per row, and each chunk
   * made column by column where it is read (model/value-columns.ts), so it reaches the encoding
   * thread as a few buffers.
   */
  async *streamArrays(plan: QueryPlan): AsyncIterable<ValueColumns> {
    const extra = this.extraFields(plan);
    const select = extra.length > 0 ? [...plan.select, ...extra] : plan.select;
    const at = plan.orderBy.map((o) => select.indexOf(o.field));
    const shape: ChunkShape<ValueColumns> = {
      size: (c) => c.length,
      lastKey: (c) => at.map((i) => valueAt(c.columns[i] as ValueColumn, c.length - 1)),
    };
    const read = (p: QueryPlan): Promise<ValueColumns> => this.store.datasets.queryColumns({ ...p, select });
    for await (const chunk of exportChunksOf(plan, read, shape, this.factorsGuard(plan))) {
      chunk.columns.length = Math.min(chunk.columns.length, plan.select.length);
      yield chunk;
    }
  }
}
