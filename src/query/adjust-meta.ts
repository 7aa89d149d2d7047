import type { AdjustMeta, AdjustUsed } from '../contract/envelope.js';
import type { Store } from '../storage/store.js';
import type { QueryPlan } from '../model/query-plan.js';
import { anchorDate, lastBars } from './adjust-anchors.js';
import {
  chooseSource,
  pairKey,
  type BarKey,
  type FactorSources,
  type FactorState,
} from './factor-sources.js';

export type { AdjustMeta, AdjustUsed };

/**
 * `meta.adjust` (its shape: contract/envelope.ts): the method, the qfq anchor given (null: each code's latest factor; `end`), the
 * page's codes without factors, and per code and bar source of the page the factor source and
 * the anchor date used (docs/bars-and-quality.md, "Factor sources").
 */
/** `meta.adjust` of an adjusted page whose bars are `keys` (in page order); undefined when it adjusts nothing. */
export async function adjustMeta(
  store: Pick<Store, 'datasets'>,
  factors: FactorSources,
  plan: QueryPlan,
  state: FactorState,
  keys: readonly BarKey[],
): Promise<AdjustMeta | undefined> {
  const adjust = plan.bars?.adjust;
  if (!adjust) return undefined;
  const bySource = adjust.source === null ? [...state.codes.values()] : [state.codes.get(adjust.source)];
  const have = (c: string): boolean => bySource.some((s) => s?.has(c) === true);
  const seen = new Map<string, BarKey>();
  for (const k of keys) if (!seen.has(pairKey(k.code, k.source))) seen.set(pairKey(k.code, k.source), k);
  const ends = await lastBars(store, plan, [...seen.values()]);
  const used: AdjustUsed[] = [];
  for (const [key, k] of seen) {
    const factorSource = chooseSource(state, adjust.source, k.code, k.source);
    const series =
      factorSource === null
        ? null
        : await factors.seriesOf(adjust, k.code, factorSource, state.version, plan.asOf);
    used.push({
      code: k.code,
      source: k.source,
      factor_source: series ? factorSource : null,
      anchor: series && adjust.method === 'qfq' ? anchorDate(series, adjust, ends, key) : null,
    });
  }
  return {
    method: adjust.method,
    anchor: adjust.anchor,
    codes_without_factors: [...new Set(keys.map((k) => k.code))].filter((c) => !have(c)),
    factors: used,
  };
}
