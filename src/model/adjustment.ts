import type { Field } from '../catalog/catalog.js';
import type { QueryPlan } from './query-plan.js';

/**
 * Adjusted daily bars (`adjust=qfq|hfq`, docs/bars-and-quality.md): which fields adjusting
 * changes and when a page can be cut before adjusting; both the query stage (adjusting in the
 * process) and the storage stage (adjusting in SQL, bars-sql.ts) follow these.
 */

/** Fields whose values `adjust` changes: the prices, and the change recomputed from them. */
export function adjustedFields(plan: QueryPlan): Set<Field> {
  const daily = plan.dataset.daily;
  const out = new Set<Field>();
  if (!plan.bars?.adjust || !daily?.adjust) return out;
  for (const f of daily.adjust.prices) out.add(f);
  if (daily.bar?.change) out.add(daily.bar.change);
  return out;
}

/**
 * True when the page can be cut from the stored rows before adjusting (the sort is on no
 * adjusted value and nothing is resampled): the factors are then looked up for the page's
 * rows only.
 */
export function pagesBeforeAdjusting(plan: QueryPlan): boolean {
  if (!plan.bars || plan.bars.interval) return false;
  const adjusted = adjustedFields(plan);
  return !plan.orderBy.some((o) => adjusted.has(o.field));
}
