import { adjustOf, CATALOG, type Catalog, type Dataset } from '../catalog/catalog.js';
import type { BarsPlan, Condition, Membership, QueryPlan } from '../model/query-plan.js';
import { answerFields, type ParsedQuery } from './parse.js';

/**
 * Stage 2: parameters → a plan of whitelisted fields. Ties in the sort are broken by the
 * unique key ascending, so consecutive pages never overlap or skip rows.
 */
export function planQuery(d: Dataset, p: ParsedQuery, catalog: Catalog = CATALOG): QueryPlan {
  const where: Condition[] = [
    ...p.exact.map((e): Condition =>
      e.values.length === 1
        ? { field: e.field, op: 'eq', value: e.values[0] ?? null }
        : { field: e.field, op: 'in', values: e.values },
    ),
    ...p.like.map((l) => ({ field: l.field, op: 'like' as const, value: l.value })),
  ];
  if (d.range && p.dateFrom !== null) where.push({ field: d.range, op: 'gte', value: p.dateFrom });
  if (d.range && p.dateTo !== null) where.push({ field: d.range, op: 'lte', value: p.dateTo });
  if (d.sourceField && p.sourcePriority)
    where.push({ field: d.sourceField, op: 'first', values: p.sourcePriority });
  if (d.daily && p.universe !== null)
    where.push({
      field: d.daily.code,
      op: 'member',
      date: d.daily.date,
      index: p.universe,
      members: membership(catalog),
      // A cross-section's members are the day's, whatever the date of their last row.
      ...(p.latestOn !== null ? { on: p.latestOn } : {}),
    });
  if (d.range && p.latestOn !== null)
    where.push({
      field: d.range,
      op: 'latest',
      on: p.latestOn,
      group: d.key.filter((k) => k !== d.range),
      maxStaleDays: p.maxStaleDays,
    });
  const orderBy: QueryPlan['orderBy'][number][] = [{ field: p.sort, dir: p.order }];
  for (const k of d.key) if (k !== p.sort) orderBy.push({ field: k, dir: 'asc' });
  const plan: QueryPlan = {
    dataset: d,
    select: p.fields ?? answerFields(d, p.interval),
    where,
    orderBy,
    limit: p.limit,
    offset: p.offset,
    ...(p.asOf !== null ? { asOf: p.asOf } : {}),
  };
  const bars = barsPlan(d, p, catalog);
  if (bars) plan.bars = bars;
  return plan;
}

/** The membership intervals `universe=` reads: index_members (docs/universes.md). */
export function membership(catalog: Catalog): Membership {
  const dataset = catalog.byName.get(MEMBERSHIP_DATASET);
  const f = (n: string) => dataset?.fieldByApiName.get(n);
  const [index, code, from, to] = [f('index_code'), f('stock_code'), f('in_date'), f('out_date')];
  if (!dataset || !index || !code || !from || !to)
    throw new Error(`the catalog has no ${MEMBERSHIP_DATASET}`);
  return { dataset, index, code, from, to };
}

export const MEMBERSHIP_DATASET = 'index_members';

function barsPlan(d: Dataset, p: ParsedQuery, catalog: Catalog): BarsPlan | null {
  const interval = p.interval === '1d' ? null : p.interval;
  const factorsName = adjustOf(d)?.factors;
  const factors = factorsName === undefined ? undefined : catalog.byName.get(factorsName);
  const adjust = p.adjust && factors ? { ...p.adjust, factors } : null;
  return adjust || interval ? { adjust, interval } : null;
}

/** A stable text for the filter part of a plan: the key of the total-count cache. */
export function filterKey(plan: QueryPlan): string {
  const where = plan.where
    .map(
      (c) =>
        `${c.field.name}${c.op}${JSON.stringify(
          c.op === 'member'
            ? [c.index, c.on ?? null]
            : c.op === 'latest'
              ? [c.on, c.maxStaleDays]
              : 'values' in c
                ? c.values
                : c.value,
        )}`,
    )
    .join('&');
  const a = plan.bars?.adjust;
  // Resampling changes the rows counted; adjusting changes the values a cursor holds.
  const bars = plan.bars
    ? `|${plan.bars.interval ?? '1d'}|${a ? JSON.stringify([a.method, a.anchor, a.source]) : 'none'}`
    : '';
  const history = plan.trail ? '|trail' : plan.asOf !== undefined ? `|as_of=${plan.asOf}` : '';
  return `${plan.dataset.name}|${where}${bars}${history}`;
}
