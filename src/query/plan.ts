import type { Dataset } from '../catalog/catalog.js';
import type { Condition, QueryPlan } from '../storage/store.js';
import type { ParsedQuery } from './parse.js';

/**
 * Stage 2: parameters → a plan of whitelisted fields. Ties in the sort are broken by the
 * unique key ascending, so consecutive pages never overlap or skip rows.
 */
export function planQuery(d: Dataset, p: ParsedQuery): QueryPlan {
  const where: Condition[] = [
    ...p.exact.map((e) => ({ field: e.field, op: 'eq' as const, value: e.value })),
    ...p.like.map((l) => ({ field: l.field, op: 'like' as const, value: l.value })),
  ];
  if (d.range && p.dateFrom !== null) where.push({ field: d.range, op: 'gte', value: p.dateFrom });
  if (d.range && p.dateTo !== null) where.push({ field: d.range, op: 'lte', value: p.dateTo });
  const orderBy: QueryPlan['orderBy'][number][] = [{ field: p.sort, dir: p.order }];
  for (const k of d.key) if (k !== p.sort) orderBy.push({ field: k, dir: 'asc' });
  return {
    dataset: d,
    select: p.fields ?? d.rowFields,
    where,
    orderBy,
    limit: p.limit,
    offset: p.offset,
  };
}

/** A stable text for the filter part of a plan: the key of the total-count cache. */
export function filterKey(plan: QueryPlan): string {
  return `${plan.dataset.name}|${plan.where.map((c) => `${c.field.name}${c.op}${JSON.stringify(c.value)}`).join('&')}`;
}
