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

/*
 * The arithmetic and the choices of adjusting, written once over small algebras: the query
 * stage evaluates them on numbers (query/in-process-adjust.ts), the storage stage on SQL text
 * (bars-sql.ts). Both run the same IEEE double operations in the same order, so both give the
 * same values (test/query/bars-adjust.test.ts compares them on both backends).
 */

export type AdjustMethod = NonNullable<NonNullable<QueryPlan['bars']>['adjust']>['method'];

/** Numbers, or the expressions of numbers; a null (NULL) operand gives null, as in SQL. */
export interface Arithmetic<N> {
  times(a: N, b: N): N;
  over(a: N, b: N): N;
  minus(a: N, b: N): N;
  /** `then` where `test` is null, else `otherwise`. */
  ifNull(test: N, then: N, otherwise: N): N;
  /** `then` where `a` equals `b` (neither null), else `otherwise`. */
  ifEqual(a: N, b: N, then: N, otherwise: N): N;
}

/** price × f(d) ÷ f(anchor) (qfq) or price × f(d) (hfq), evaluated left to right. */
function scaled<N>(m: Arithmetic<N>, method: AdjustMethod, v: N, f: N, a: N): N {
  const vf = m.times(v, f);
  return method === 'hfq' ? vf : m.over(vf, a);
}

/**
 * `adjusted`, or `stored` where the factor ratio is 1 (qfq: the bar's factor is the anchor's):
 * 1.901 × f ÷ f is not always 1.901 in doubles (1.9010000000000002), and a bar its factors do not
 * change is answered as stored. hfq multiplies by the factor alone, exact where it is 1.
 */
function unlessRatioOne<N>(m: Arithmetic<N>, method: AdjustMethod, stored: N, adjusted: N, f: N, a: N): N {
  return method === 'hfq' ? adjusted : m.ifEqual(f, a, stored, adjusted);
}

/** An adjusted price: `f` the bar's factor, `a` the anchor's (qfq); without a factor, as stored. */
export function adjustedPrice<N>(m: Arithmetic<N>, method: AdjustMethod, price: N, f: N, a: N): N {
  return m.ifNull(f, price, unlessRatioOne(m, method, price, scaled(m, method, price, f, a), f, a));
}

/**
 * The adjusted change: adjusted close − adjusted pre-close; the stored change adjusted when there
 * is no pre-close; without a factor, or where the factor ratio is 1 (qfq), as stored.
 */
export function adjustedChange<N>(
  m: Arithmetic<N>,
  method: AdjustMethod,
  change: N,
  close: N,
  pre: N,
  f: N,
  a: N,
): N {
  const recomputed = m.minus(scaled(m, method, close, f, a), scaled(m, method, pre, f, a));
  const adjusted = m.ifNull(pre, scaled(m, method, change, f, a), recomputed);
  return m.ifNull(f, change, unlessRatioOne(m, method, change, adjusted, f, a));
}

/**
 * The change a daily dataset recomputes from its adjusted close and pre-close (adjustedChange),
 * with those two; null: its change (if any) is not recomputed and stays as stored.
 */
export function recomputedChange(plan: QueryPlan): { change: Field; close: Field; pre: Field } | null {
  const daily = plan.dataset.daily;
  const bar = daily?.bar;
  const prices = daily?.adjust?.prices;
  if (!bar?.change || !bar.preClose || !prices) return null;
  if (!prices.includes(bar.close) || !prices.includes(bar.preClose)) return null;
  return { change: bar.change, close: bar.close, pre: bar.preClose };
}

/** A code's factors, looked up by date (D: a date or its expression); N as in Arithmetic. */
export interface FactorLookup<N, D> {
  /** The latest factor on or before `date`; null (NULL) when there is none. */
  onOrBefore(date: D): N;
  first(): N;
  last(): N;
  /** `a`, or `b` where `a` is null. */
  coalesce(a: N, b: N): N;
}

/** The factor in force on a date: the latest on or before it, else the first (an as-of join). */
export function factorOn<N, D>(l: FactorLookup<N, D>, date: D): N {
  return l.coalesce(l.onOrBefore(date), l.first());
}

/**
 * qfq's divisor: the factor in force on the anchor date (`adjust_anchor`, or each code's last bar
 * in the window with `end`); with no anchor given (null), the code's latest factor.
 */
export function anchorFactor<N, D>(l: FactorLookup<N, D>, anchorDate: D | null): N {
  return anchorDate === null ? l.last() : factorOn(l, anchorDate);
}

/** What picks a bar's factor source; S a source or its expression, C a condition or its expression. */
export interface SourceChoice<S, C> {
  /** `adjust_source`, when given. */
  given: S | null;
  /** The bar's own source; null: the dataset has none. */
  own: S | null;
  /** Whether the bar's own source (`own`) has factors for its code. */
  ownHasFactors(own: S): C;
  /** The code's only factor source; null (NULL) when it has none or several. */
  only(): S;
  when(test: C, then: S, otherwise: S): S;
}

/**
 * The factor source of a bar (docs/bars-and-quality.md, "Factor sources"): `adjust_source` when
 * given; else the bar's own source when it has factors for the code; else the code's only
 * factor source; else none (the bar stays as stored; the service refuses such an answer before
 * reading it, naming the sources).
 */
export function factorSource<S, C>(c: SourceChoice<S, C>): S {
  if (c.given !== null) return c.given;
  if (c.own === null) return c.only();
  return c.when(c.ownHasFactors(c.own), c.own, c.only());
}
