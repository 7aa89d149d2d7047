import type { Field } from '../catalog/catalog.js';
import { rowJsonFields, type RowJsonFields } from '../model/row-json.js';
import type { Store } from '../storage/store.js';
import { ANCHOR_END, type QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import { anchorDate, lastBars } from './adjust-anchors.js';
import {
  adjustedChange,
  adjustedPrice,
  adjustedFields,
  anchorFactor,
  factorOn,
  pagesBeforeAdjusting,
  recomputedChange,
  type Arithmetic,
  type FactorLookup,
} from '../model/adjustment.js';
import {
  chooseSource,
  pairKey,
  seriesLookup,
  type FactorSources,
  type FactorState,
} from './factor-sources.js';
import type { FetchedRows } from './query-page.js';

/** model/adjustment.ts's arithmetic on numbers: a null operand gives null, as in SQL. */
export const NUMBERS: Arithmetic<number | null> = {
  times: (a, b) => (a === null || b === null ? null : a * b),
  over: (a, b) => (a === null || b === null ? null : a / b),
  minus: (a, b) => (a === null || b === null ? null : a - b),
  ifNull: (test, then, otherwise) => (test === null ? then : otherwise),
  ifEqual: (a, b, then, otherwise) => (a !== null && a === b ? then : otherwise),
};

const num = (v: Value | undefined): number | null => (typeof v === 'number' ? v : null);

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

/**
 * Adjusted pages computed in the process: the stored rows' page (the same rows, order, cursor
 * and total as the adjusted page's), adjusted with the codes' factors kept in memory per factor
 * version (FactorSources); whole rows as their stored JSON with the adjusted values written over
 * the stored ones.
 */
export class InProcessAdjust {
  private readonly adjusters = new Map<string, JsonAdjuster>();

  constructor(
    private readonly store: Pick<Store, 'datasets'>,
    private readonly factors: FactorSources,
    private readonly enabled: boolean,
  ) {}

  /**
   * Whether a page is adjusted here rather than by its SQL (bars-sql.ts): an adjusted page that
   * resamples nothing, sorts by no adjusted value (its page is then a page of the stored rows)
   * and reads the current rows (under as_of the factors known at that instant would be needed).
   * Both run the rules of model/adjustment.ts, the same IEEE double operations in the same order
   * (price × f(d) ÷ f(anchor)), so the same values: test/query/bars-adjust.test.ts compares both ways
   * on both backends. The SQL
   * version's cost was the statement (the stored rows wrapped in two levels and an as-of
   * subquery per row): docs/performance.md.
   */
  applies(plan: QueryPlan): boolean {
    const bars = plan.bars;
    return (
      this.enabled &&
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
   * The adjusted page of `plan` (applies() true). `extra`: the fields a projection left out that
   * the page needs (its cursor's, the code and source meta.adjust names), read and kept.
   */
  async fetch(plan: QueryPlan, withTotal: boolean, state: FactorState, extra: Field[]): Promise<FetchedRows> {
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
    const recomputed = recomputedChange(plan);
    const own = plan.dataset.sourceField;
    return {
      code: at(daily.code),
      source: own ? at(own) : -1,
      date: at(daily.date),
      prices: daily.adjust.prices.filter((f) => plan.select.some((s) => s.apiName === f.apiName)).map(at),
      change:
        recomputed && plan.select.includes(recomputed.change)
          ? { change: at(recomputed.change), close: at(recomputed.close), pre: at(recomputed.pre) }
          : null,
    };
  }

  /**
   * The adjusted values of stored rows, in place: model/adjustment.ts's rules (the factor source,
   * the factor in force on each bar's date and on the anchor, adjustedPrice, adjustedChange)
   * evaluated on numbers, as bars-sql.ts evaluates them in SQL. A code without factors, or a
   * null value, stays as stored.
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
    const method = adjust.method;
    const barSource = (row: Value[]): string | null =>
      layout.source < 0 ? null : String(row[layout.source]);
    // `adjust_anchor=end` only: the rows' keys, then their last bars (one statement per key).
    const ends =
      adjust.anchor === ANCHOR_END
        ? await lastBars(
            this.store,
            plan,
            rows.map((r) => ({ code: String(r[layout.code]), source: barSource(r) })),
          )
        : null;
    let lastKey: string | null = null;
    let lookup: FactorLookup<number | null, string> | null = null;
    let a: number | null = null;
    const adjusted: boolean[] = [];
    for (const row of rows) {
      const code = String(row[layout.code]);
      const bar = barSource(row);
      const key = pairKey(code, bar);
      if (key !== lastKey) {
        lastKey = key;
        const source = chooseSource(state, adjust.source, code, bar);
        const series =
          source === null ? null : await this.factors.seriesOf(adjust, code, source, state.version);
        lookup = series ? seriesLookup(series) : null;
        // A missing last bar (`end`) is no date: the first factor, as the SQL's COALESCE gives.
        const date = series && adjust.anchor !== null ? (anchorDate(series, adjust, ends, key) ?? '') : null;
        a = lookup && method === 'qfq' ? anchorFactor(lookup, date) : null;
      }
      adjusted.push(lookup !== null);
      if (!lookup) continue;
      const f = factorOn(lookup, String(row[layout.date]));
      // The change is read before the prices are overwritten.
      if (change) {
        const [c, close, pre] = [num(row[change.change]), num(row[change.close]), num(row[change.pre])];
        row[change.change] = adjustedChange(NUMBERS, method, c, close, pre, f, a);
      }
      for (const p of prices) row[p] = adjustedPrice(NUMBERS, method, num(row[p]), f, a);
    }
    return adjusted;
  }
}
