import type { Field } from '../catalog/catalog.js';
import { adjustedFields, pagesBeforeAdjusting } from '../model/adjustment.js';
import { rowJsonFields, type RowJsonFields } from '../model/row-json.js';
import type { Store } from '../storage/store.js';
import type { QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import { anchorDate, lastBars } from './adjust-anchors.js';
import {
  chooseSource,
  factorAt,
  pairKey,
  type FactorSeries,
  type FactorSources,
  type FactorState,
} from './factor-sources.js';
import type { FetchedRows } from './query-page.js';

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
   * The same IEEE double operations in the same order as the SQL (price × f(d) ÷ f(anchor)), so
   * the same values: test/bars-adjust.test.ts compares both ways on both backends. The SQL
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
    const ends = await lastBars(
      this.store,
      plan,
      rows.map((r) => ({ code: String(r[layout.code]), source: barSource(r) })),
    );
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
        series = source === null ? null : await this.factors.seriesOf(adjust, code, source, state.version);
        if (series && !hfq) anchor = factorAt(series, anchorDate(series, adjust, ends, key) ?? '');
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
}
