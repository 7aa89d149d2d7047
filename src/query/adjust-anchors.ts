import type { Store } from '../storage/store.js';
import { ANCHOR_END, mergedSource, type Condition, type QueryPlan } from '../model/query-plan.js';
import { adjustedBars, pairKey, type BarKey, type FactorSeries, type PlanAdjust } from './factor-sources.js';

/**
 * The qfq anchor date of a code's bars (docs/bars-and-quality.md, "Factor sources"): the date
 * given; each code's latest factor date (no anchor given); or, with `adjust_anchor=end`, its last
 * bar's in the answer's window (`ends`, from lastBars, by pairKey). null: no such bar.
 */
export function anchorDate(
  series: FactorSeries,
  adjust: PlanAdjust,
  ends: Map<string, string | null> | null,
  key: string,
): string | null {
  if (adjust.anchor === null) return series.dates[series.dates.length - 1] as string;
  return ends ? (ends.get(key) ?? null) : adjust.anchor;
}

/**
 * `adjust_anchor=end`: the last bar's date of each (code, source) of `keys` among the rows the
 * plan's filters select (not only its page), by pairKey; null for a plan with another anchor.
 * Under `source_priority` a code's sources form one series: every source of the code gets the
 * code's last bar, so the series has one anchor.
 */
export async function lastBars(
  store: Pick<Store, 'datasets'>,
  given: QueryPlan,
  keys: readonly BarKey[],
): Promise<Map<string, string | null> | null> {
  if (given.bars?.adjust?.anchor !== ANCHOR_END) return null;
  const out = new Map<string, string | null>();
  const bars = adjustedBars(given);
  if (!bars) return out;
  const { plan, code, date } = bars;
  const merged = mergedSource(plan.where) !== null;
  const own = merged ? null : plan.dataset.sourceField;
  // Per series: (code, source), or the code alone when merged.
  const ofSeries = new Map<string, string | null>();
  for (const k of keys) {
    const key = pairKey(k.code, k.source);
    if (out.has(key)) continue;
    const series = merged ? pairKey(k.code, null) : key;
    let last = ofSeries.get(series);
    if (last === undefined) {
      const where: Condition[] = [...plan.where, { field: code, op: 'eq', value: k.code }];
      if (own && k.source !== null) where.push({ field: own, op: 'eq', value: k.source });
      const r = await store.datasets.query(
        {
          dataset: plan.dataset,
          select: [date],
          where,
          orderBy: [{ field: date, dir: 'desc' }],
          limit: 1,
          offset: 0,
          ...(plan.asOf !== undefined ? { asOf: plan.asOf } : {}),
        },
        false,
      );
      const d = r.rows[0]?.[date.apiName];
      last = typeof d === 'string' ? d : null;
      ofSeries.set(series, last);
    }
    out.set(key, last);
  }
  return out;
}
