import type { Store } from '../storage/store.js';
import type { QueryPlan } from '../model/query-plan.js';
import { adjustedPrice, anchorFactor, factorOn } from '../model/adjustment.js';
import { anchorDate, lastBars } from './adjust-anchors.js';
import {
  chooseSource,
  pairKey,
  seriesLookup,
  type BarKey,
  type FactorSources,
  type FactorState,
} from './factor-sources.js';
import { NUMBERS } from './in-process-adjust.js';

/** One day's price scaling of a code and source: price → adjusted price; null: the bars stay as stored. */
export type DayAdjust = (price: number | null) => number | null;

/**
 * `adjust=qfq|hfq` on intraday bars (docs/minute-bars.md): every bar of a code's trading day takes
 * the daily factor in force on that date, by the daily bars' rules (model/adjustment.ts: the
 * factor source, the as-of factor, the anchor, adjustedPrice on numbers as in-process-adjust.ts
 * evaluates them), so a minute bar and its day's bar are scaled alike. `keys`: the (code, source)
 * pairs of the bars to adjust, for `adjust_anchor=end` (their last bar in the answer's window).
 */
export async function minuteAdjuster(
  store: Pick<Store, 'datasets'>,
  factors: FactorSources,
  plan: QueryPlan,
  state: FactorState,
  keys: readonly BarKey[],
): Promise<(code: string, source: string, date: string) => Promise<DayAdjust | null>> {
  const adjust = plan.bars?.adjust;
  if (!adjust) throw new Error('minuteAdjuster without adjust');
  const ends = await lastBars(store, plan, keys);
  const perKey = new Map<string, { lookup: ReturnType<typeof seriesLookup>; anchor: number | null } | null>();
  return async (code, source, date) => {
    const key = pairKey(code, source);
    let k = perKey.get(key);
    if (k === undefined) {
      const from = chooseSource(state, adjust.source, code, source);
      const series =
        from === null ? null : await factors.seriesOf(adjust, code, from, state.version, plan.asOf);
      if (series) {
        const lookup = seriesLookup(series);
        // A missing last bar (`end`) is no date: the first factor, as the daily reads give.
        const at = adjust.anchor !== null ? (anchorDate(series, adjust, ends, key) ?? '') : null;
        k = { lookup, anchor: adjust.method === 'qfq' ? anchorFactor(lookup, at) : null };
      } else k = null;
      perKey.set(key, k);
    }
    if (!k) return null;
    const f = factorOn(k.lookup, date);
    const { anchor } = k;
    return (price) => adjustedPrice(NUMBERS, adjust.method, price, f, anchor);
  };
}
