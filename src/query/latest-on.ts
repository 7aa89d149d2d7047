import type { Catalog, Dataset, Field } from '../catalog/catalog.js';
import { latestCondition, type Condition, type QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import type { Store } from '../storage/store.js';
import type { PageRows } from './query-page.js';
import type { LatestOnMeta } from '../contract/envelope.js';

/**
 * `latest_on=D` (docs/universes.md): the plan already selects each group's latest row on or
 * before D (storage/sql.ts); here the stored calendar gives each row its `stale_days` (open days
 * after the row's date up to D) and turns `max_stale_days=N` into a lower bound on the range
 * date (the N-th open day before D, counting D's own as 0), and the answer's meta says what it
 * judged by and what it left out.
 */

/** The calendar a dataset's staleness is counted by: its daily calendar, else SSE's. */
const DEFAULT_CALENDAR = 'SSE';

export interface LatestOnStep {
  /** The plan to read: with the staleness bound when there is one. */
  plan: QueryPlan;
  /** Each row's stale_days added (the page's rows, in place). */
  finish(rows: PageRows, total: number, unbounded: () => Promise<number>): Promise<LatestOnMeta>;
}

/** Open days (ascending) of `exchange` on or before `day`, and whether the calendar holds `day` itself. */
async function openDays(
  store: Pick<Store, 'datasets'>,
  cal: Dataset,
  exchange: string,
  day: string,
  asOf: string | undefined,
): Promise<{ days: string[]; holdsDay: boolean }> {
  const c = cal.calendar;
  if (!c) return { days: [], holdsDay: false };
  const ex: Condition = { field: c.exchange, op: 'eq', value: exchange };
  const plan = (where: Condition[], limit: number): QueryPlan => ({
    dataset: cal,
    select: [c.date, c.isOpen],
    where: [ex, ...where],
    orderBy: cal.key.map((field) => ({ field, dir: 'asc' as const })),
    limit,
    offset: 0,
    ...(asOf !== undefined ? { asOf } : {}),
  });
  const [open, on] = await Promise.all([
    store.datasets.query(
      plan(
        [
          { field: c.isOpen, op: 'eq', value: 1 },
          { field: c.date, op: 'lte', value: day },
        ],
        1_000_000,
      ),
      false,
    ),
    store.datasets.query(plan([{ field: c.date, op: 'eq', value: day }], 1), false),
  ]);
  const days = [...new Set(open.rows.map((r) => String(r[c.date.apiName])))].sort();
  return { days, holdsDay: on.rows.length > 0 };
}

/** How many of the ascending `days` are after `date` (binary search). */
function after(days: readonly string[], date: string): number {
  let lo = 0;
  let hi = days.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((days[mid] as string) <= date) lo = mid + 1;
    else hi = mid;
  }
  return days.length - lo;
}

export async function latestOnStep(
  store: Pick<Store, 'datasets'>,
  catalog: Catalog,
  plan: QueryPlan,
): Promise<LatestOnStep | null> {
  const c = latestCondition(plan.where);
  if (c === null) return null;
  const exchange = plan.dataset.daily?.calendar ?? DEFAULT_CALENDAR;
  const cal = catalog.calendar;
  const { days, holdsDay } = cal
    ? await openDays(store, cal, exchange, c.on, plan.asOf)
    : { days: [], holdsDay: false };
  const warnings: string[] = [];
  const judged = holdsDay && days.length > 0;
  if (!judged) warnings.push(`${c.on} is outside the stored ${exchange} calendar: stale_days are null`);
  let bound: string | null = null;
  if (c.maxStaleDays !== null && judged) {
    bound = days[days.length - 1 - c.maxStaleDays] ?? null;
    if (bound === null)
      warnings.push(
        `the stored ${exchange} calendar holds ${days.length} open days on or before ${c.on}: max_stale_days is not applied`,
      );
  } else if (c.maxStaleDays !== null)
    warnings.push('max_stale_days is not applied (no calendar to count by)');
  const read: QueryPlan =
    bound === null ? plan : { ...plan, where: [...plan.where, { field: c.field, op: 'gte', value: bound }] };
  const first = days[0];
  const field: Field = c.field;
  const stale = (date: Value | undefined): number | null =>
    !judged || typeof date !== 'string' || first === undefined || date < first ? null : after(days, date);
  return {
    plan: read,
    async finish(rows, total, unbounded) {
      let older = 0;
      if (rows.kind === 'json') {
        rows.rows = rows.rows.map((j) => {
          const row = JSON.parse(j) as Record<string, Value>;
          row.stale_days = stale(row[field.apiName]);
          if (row.stale_days === null) older++;
          return JSON.stringify(row);
        });
      } else {
        for (const row of rows.rows) {
          row.stale_days = stale(row[field.apiName]);
          if (row.stale_days === null) older++;
        }
      }
      if (judged && older > 0)
        warnings.push(
          `${older} row(s) of this page are older than the stored calendar: their stale_days are null`,
        );
      const leftOut = bound === null ? 0 : (await unbounded()) - total;
      return {
        date: c.on,
        calendar: exchange,
        max_stale_days: c.maxStaleDays,
        stale_since: bound,
        left_out: leftOut,
        warnings,
      };
    },
  };
}
