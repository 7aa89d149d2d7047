import type { DailySeries, Dataset, Field } from '../catalog/catalog.js';
import type { TableSpec } from './schema.js';
import { DAY, isoDay, ms } from '../model/days.js';
import type { BarsPlan } from '../model/query-plan.js';

/**
 * Stored period bars: for each daily dataset that declares `aggregate`, its weekly and monthly
 * bars kept in `mds_periods_<dataset>` (one row per interval, group and period, the columns of
 * bars-sql.ts periodColumns), computed by the on-demand pages' own SQL and kept current by the
 * batch transaction (period-store.ts). A monthly or weekly page of one code over a date range
 * reads its whole periods from here and computes only the edge periods from daily rows
 * (bars-sql.ts). Which intervals are stored is this constant, not the catalog's: it is a
 * storage trade (bytes and ingest time for page speed), the same for every daily dataset.
 */
export const STORED_INTERVALS = ['1w', '1M'] as const;
export type StoredInterval = (typeof STORED_INTERVALS)[number];

export const isStoredInterval = (i: BarsPlan['interval']): i is StoredInterval => i === '1w' || i === '1M';

/**
 * A period's key (the SQL periodKey of bars-sql.ts, computed in JavaScript: the same strings,
 * ordered as the periods), its first calendar day, and the next period's key.
 */
export interface PeriodMath {
  key(date: string): string;
  start(key: string): string;
  next(key: string): string;
}

export const PERIODS: Record<StoredInterval, PeriodMath> = {
  // The Monday of the date's ISO week (Dialect.weekStart).
  '1w': {
    key: (date) => isoDay(ms(date) - ((new Date(ms(date)).getUTCDay() + 6) % 7) * DAY),
    start: (key) => key,
    next: (key) => isoDay(ms(key) + 7 * DAY),
  },
  '1M': {
    key: (date) => date.slice(0, 7),
    start: (key) => `${key}-01`,
    next: (key) => isoDay(Date.UTC(Number(key.slice(0, 4)), Number(key.slice(5, 7)), 1)).slice(0, 7),
  },
};

export const periodTableName = (d: Dataset): string => `mds_periods_${d.name}`;

/** Columns of the stored periods besides periodColumns. */
export const PERIOD_INTERVAL = 'interval';
export const PERIOD_KEY = 'period';

/**
 * The running state of each summed double (`sum` of a `number` field) where the engine's sum is
 * compensated (Dialect.fold, SQLite): `sum` the running sum and `err` the error term that
 * `sum()` added to it, so that a day appended to the period continues the same summation
 * (period-store.ts). NULL: not known (the period was computed from several daily rows at once),
 * and the period is computed again from its days. Unused (NULL) on PostgreSQL, whose sum is
 * plain addition: the stored sum is its own state.
 */
export interface SumState {
  field: Field;
  sum: string;
  err: string;
}

export function sumStates(daily: DailySeries): SumState[] {
  return [...(daily.aggregate ?? [])]
    .filter(([f, how]) => how === 'sum' && f.type === 'number')
    .map(([field]) => ({ field, sum: `_s_${field.name}`, err: `_e_${field.name}` }));
}

/**
 * The stored periods' table of a daily dataset that declares `aggregate`: the interval and
 * period key, then the group, the last bar's date, each aggregated field (its own type),
 * `period_start`, `bar_count` and `_pre0`; keyed by interval, code, period, the rest of the group.
 */
export function periodTable(d: Dataset): TableSpec | null {
  const daily = d.daily;
  if (!daily?.aggregate) return null;
  const rest = daily.group.filter((f) => f !== daily.code);
  return {
    name: periodTableName(d),
    columns: [
      { name: PERIOD_INTERVAL, type: 'string', notNull: true },
      { name: PERIOD_KEY, type: 'string', notNull: true },
      ...daily.group.map((f) => ({ name: f.name, type: f.type, notNull: true })),
      { name: daily.date.name, type: 'date', notNull: true },
      ...[...daily.aggregate.keys()].map((f) => ({ name: f.name, type: f.type, notNull: false })),
      { name: 'period_start', type: 'date', notNull: true },
      { name: 'bar_count', type: 'integer', notNull: true },
      ...(daily.bar?.preClose ? [{ name: '_pre0', type: 'number' as const, notNull: false }] : []),
      ...sumStates(daily).flatMap((s) => [
        { name: s.sum, type: 'number' as const, notNull: false },
        { name: s.err, type: 'number' as const, notNull: false },
      ]),
    ],
    // The period before the rest of the group: a page filters on the code and a period range.
    primaryKey: [PERIOD_INTERVAL, daily.code.name, PERIOD_KEY, ...rest.map((f) => f.name)],
    unique: [],
    uniqueDesc: [],
    indexes: [],
    // A page reads a key range of one code's periods.
    clustered: true,
  };
}

/**
 * What the stored periods were computed under, their table's layout included: a release or
 * catalog that changes any of it rebuilds them, the table created afresh (period-store.ts
 * buildMissingPeriods). Version 2: the key's period before the rest of the group; 3: the sums'
 * running state (sumStates).
 */
export function periodShape(d: Dataset): string | null {
  const daily = d.daily;
  if (!daily?.aggregate) return null;
  return JSON.stringify({
    version: 3,
    intervals: STORED_INTERVALS,
    group: daily.group.map((f) => f.name),
    date: daily.date.name,
    aggregate: [...daily.aggregate].map(([f, how]) => [f.name, how, f.type]),
    preClose: daily.bar?.preClose?.name ?? null,
  });
}
