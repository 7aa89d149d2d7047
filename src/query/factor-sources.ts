import type { Dataset, Field } from '../catalog/catalog.js';
import { invalid } from '../errors.js';
import { factorSource, type FactorLookup } from '../model/adjustment.js';
import type { Store } from '../storage/store.js';
import { allowedValues, type Condition, type QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';

/**
 * The factors an adjusted answer reads (docs/bars-and-quality.md, "Factor sources"): which codes
 * have factors from which sources, each code's factor series, and the checks an adjusted plan
 * passes before its rows are read. Three caches, each per version of the factor dataset, so the
 * factors are read once per change, not once per request.
 */

/** The codes that have factors, per factor source. */
export type FactorCodes = Map<string, Set<string>>;

/** The codes with factors at one version of the factor dataset. */
export interface FactorState {
  version: number;
  codes: FactorCodes;
  /** Each code's factor sources. */
  byCode: Map<string, string[]>;
}

/** One code's factors (of one source, or its only one), dates ascending. */
export interface FactorSeries {
  dates: string[];
  values: number[];
}

/** The `adjust` of an adjusted plan. */
export type PlanAdjust = NonNullable<NonNullable<QueryPlan['bars']>['adjust']>;

/** A bar's code and source: what picks its factors. */
export interface BarKey {
  code: string;
  source: string | null;
}

export const pairKey = (code: string, source: string | null): string => `${code}\u0000${source ?? ''}`;

/** The factor source of a bar: model/adjustment.ts's factorSource on this state (null: none). */
export function chooseSource(
  state: FactorState,
  given: string | null,
  code: string,
  bar: string | null,
): string | null {
  return factorSource<string | null, boolean>({
    given,
    own: bar,
    ownHasFactors: (own) => own !== null && state.codes.get(own)?.has(code) === true,
    only: () => {
      const all = state.byCode.get(code);
      return all?.length === 1 ? (all[0] as string) : null;
    },
    when: (test, then, otherwise) => (test ? then : otherwise),
  });
}

/**
 * Where an adjusted plan's bars are read, to find their codes and sources: a daily dataset's own
 * rows, or an intraday dataset's stored blocks (catalog.ts `BarBlocks`; one per code, day and
 * source, so the same codes and sources as its bars), the plan's filters moved onto them.
 * null: the dataset has no adjusted bars.
 */
export function adjustedBars(plan: QueryPlan): { plan: QueryPlan; code: Field; date: Field } | null {
  const daily = plan.dataset.daily;
  if (daily?.adjust) return { plan, code: daily.code, date: daily.date };
  const b = plan.dataset.blocks;
  if (!b?.adjust) return null;
  const s = b.stored;
  const onStored = (f: Field): Field => s.fieldByName.get(f.name) ?? f;
  return {
    plan: {
      ...plan,
      dataset: s,
      where: plan.where.map((c) => ({ ...c, field: onStored(c.field) }) as Condition),
    },
    code: onStored(b.code),
    date: onStored(b.date),
  };
}

/** A code's factors for model/adjustment.ts's lookups; the as-of search is a binary search. */
export function seriesLookup(s: FactorSeries): FactorLookup<number | null, string> {
  const d = s.dates;
  return {
    onOrBefore: (date) => {
      let lo = 0;
      let hi = d.length;
      // The number of factor dates ≤ date.
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((d[mid] as string) <= date) lo = mid + 1;
        else hi = mid;
      }
      return lo === 0 ? null : (s.values[lo - 1] as number);
    },
    first: () => s.values[0] ?? null,
    last: () => s.values[s.values.length - 1] ?? null,
    coalesce: (a, b) => a ?? b,
  };
}

/** Entries per cache; a full one is cleared. */
const CODES_CACHE_SIZE = 10_000;
/** Codes whose factors are kept in memory (each a few dozen numbers); cleared when full. */
const FACTOR_SERIES_SIZE = 20_000;

export class FactorSources {
  private readonly factorCodes = new Map<string, FactorState>();
  private readonly sourceNames = new Map<string, { version: number; names: string[] }>();
  private readonly factorSeries = new Map<string, { version: number; series: FactorSeries }>();

  constructor(private readonly store: Pick<Store, 'datasets'>) {}

  /**
   * The factor sources of the codes an adjusted plan may touch (its `code` filter, else every
   * code with factors), cached per version of the factor dataset; null for a plan that adjusts
   * nothing. `known`: that version when the caller has already read it (the page's ETag is of
   * it), saving a statement. An unknown `adjust_source`, or without one a bar of the answer
   * whose code has factors from several sources, none of them its own, is 400 / 4001 naming them.
   */
  async stateOf(given: QueryPlan, known?: number): Promise<FactorState | null> {
    const adjust = given.bars?.adjust;
    const bars = adjustedBars(given);
    if (!adjust || !bars) return null;
    const { plan, code: codeField } = bars;
    const asked = allowedValues(plan.where, codeField);
    const code = asked?.length === 1 && typeof asked[0] === 'string' ? asked[0] : null;
    const state = await this.codesOf(adjust.factors, code, known, plan.asOf);
    if (adjust.source !== null) {
      const names = await this.sourceNamesOf(adjust.factors, state.version, plan.asOf);
      if (!names.includes(adjust.source)) {
        throw invalid(
          `adjust_source ${adjust.source} has no ${adjust.factors.name}${plan.asOf === undefined ? '' : ` as of ${plan.asOf}`}; sources: ${names.join(', ') || 'none'}`,
          { parameter: 'adjust_source', allowed: names },
        );
      }
      return state;
    }
    await this.checkAnswerSources(plan, codeField, state, asked);
    return state;
  }

  /**
   * Without `adjust_source`: 400 naming the sources when a bar of the answer (every row the
   * filters select, not only a page) has a code with factors from several sources, none of them
   * the bar's own. Only codes with several factor sources are looked at: none, no statement.
   */
  private async checkAnswerSources(
    plan: QueryPlan,
    codeField: Field,
    state: FactorState,
    asked: readonly Value[] | null,
  ): Promise<void> {
    const several = [...state.byCode].filter(([c, s]) => s.length > 1 && (!asked || asked.includes(c)));
    if (several.length === 0) return;
    const own = plan.dataset.sourceField;
    const select = own ? [codeField, own] : [codeField];
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
              several.map(([c]) => read([...plan.where, { field: codeField, op: 'eq', value: c }])),
            )
          ).flat()
        : await read(plan.where);
    for (const r of rows) {
      const c = String(r[codeField.apiName]);
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
  private async sourceNamesOf(factors: Dataset, version: number, asOf?: string): Promise<string[]> {
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
    if (this.sourceNames.size >= CODES_CACHE_SIZE) this.sourceNames.clear();
    this.sourceNames.set(key, { version, names });
    return names;
  }

  /** The codes with factors per source (of `code` only, null: all); `asOf`: as known at that instant. */
  private async codesOf(
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
    const byCode = new Map<string, string[]>();
    for (const [source, set] of codes) for (const c of set) byCode.set(c, [...(byCode.get(c) ?? []), source]);
    const state: FactorState = { version, codes, byCode };
    // Kept only when no batch changed the factors while they were read (as seriesOf).
    if (await this.unchanged(factors, version)) {
      if (this.factorCodes.size >= CODES_CACHE_SIZE) this.factorCodes.clear();
      this.factorCodes.set(key, state);
    }
    return state;
  }

  /** A code's factors of one source (as known at `asOf`; null: none), cached per version of the factor dataset. */
  async seriesOf(
    adjust: PlanAdjust,
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
    if (await this.unchanged(factors, version)) {
      if (this.factorSeries.size >= FACTOR_SERIES_SIZE) this.factorSeries.clear();
      this.factorSeries.set(key, { version, series });
    }
    return series.dates.length > 0 ? series : null;
  }

  private async unchanged(factors: Dataset, version: number): Promise<boolean> {
    return (await this.store.datasets.datasetVersion(factors.name)) === version;
  }
}
