import type { Dataset, Field } from '../catalog/catalog.js';
import type { Value } from './values.js';

/**
 * A query as data (parse → plan → execute): what the query stage plans and the storage stage
 * compiles into SQL, with every column from the catalog.
 */

export type ConditionOp = 'eq' | 'like' | 'gte' | 'lte';

export type Condition =
  | {
      field: Field;
      op: ConditionOp;
      /** For `like`: the raw text to find anywhere, case-insensitively (no wildcards of its own). */
      value: Value;
    }
  /** Any of several values (an exact filter given a list). */
  | { field: Field; op: 'in'; values: readonly Value[] }
  /**
   * Source precedence (`source_priority`) on the source field: of the rows sharing the rest of
   * the unique key, the one whose source comes first in `values` (rows of other sources: none).
   */
  | { field: Field; op: 'first'; values: readonly Value[] }
  /**
   * `universe=`: the row's code (`field`) was a member of `index` on the row's `date`, by the
   * membership intervals of `members` (docs/universes.md).
   */
  | {
      field: Field;
      op: 'member';
      date: Field;
      index: string;
      members: Membership;
      /** Membership judged on this day rather than on each row's date (`latest_on`). */
      on?: string;
    }
  /**
   * `latest_on`: of the rows sharing the key without the range field (`group`), the one with the
   * latest range date (`field`) on or before `on` (the plan's other conditions apply first).
   */
  | { field: Field; op: 'latest'; on: string; group: readonly Field[]; maxStaleDays: number | null };

/** Membership intervals: a dataset of (index, code, first day, last day or null: still a member). */
export interface Membership {
  dataset: Dataset;
  index: Field;
  code: Field;
  from: Field;
  to: Field;
}

/** The `latest` condition of a plan (`latest_on`), if any. */
export function latestCondition(where: readonly Condition[]): Extract<Condition, { op: 'latest' }> | null {
  for (const c of where) if (c.op === 'latest') return c;
  return null;
}

/** The `member` condition of a plan (`universe=`), if any. */
export function memberCondition(where: readonly Condition[]): Extract<Condition, { op: 'member' }> | null {
  for (const c of where) if (c.op === 'member') return c;
  return null;
}

/** The values an equality or list condition on `field` allows; null: none restricts it. */
export function allowedValues(where: readonly Condition[], field: Field): readonly Value[] | null {
  for (const c of where) {
    if (c.field !== field) continue;
    if (c.op === 'eq') return [c.value];
    if (c.op === 'in' || c.op === 'first') return c.values;
  }
  return null;
}

/**
 * The source field `source_priority` merges (its `first` condition): each code's rows then form
 * one series whatever their source. null: every source is its own series.
 */
export function mergedSource(where: readonly Condition[]): Field | null {
  return where.find((c) => c.op === 'first')?.field ?? null;
}

/**
 * `adjust_anchor=end`: each series anchored at its last bar among the rows the filters select; a
 * series is a code and source, or a code alone when `source_priority` merges its sources.
 */
export const ANCHOR_END = 'end';

/**
 * Daily bars adjusted by a factor dataset and/or resampled into periods (catalog `daily`).
 * Filters apply to the daily bars; order, keyset and page to the answer's rows.
 */
export interface BarsPlan {
  adjust: {
    method: 'qfq' | 'hfq';
    /** qfq: the factor as of this date (or of each code's last bar: ANCHOR_END) divides; null: each code's latest factor. */
    anchor: string | null;
    /** The factors' source; null: each code's only one. */
    source: string | null;
    /** The dataset declaring the factors. */
    factors: Dataset;
  } | null;
  interval: '1w' | '1M' | '1Q' | '1Y' | null;
  /**
   * Every period computed from the daily rows, none read from the stored periods (periods.ts):
   * the reference the stored ones are tested against.
   */
  computed?: boolean;
}

/** A query as data: whitelisted fields only, so every column name comes from the catalog. */
export interface QueryPlan {
  dataset: Dataset;
  select: readonly Field[];
  where: readonly Condition[];
  orderBy: readonly { field: Field; dir: 'asc' | 'desc' }[];
  limit: number;
  offset: number;
  /**
   * Keyset pagination: values of `orderBy`'s fields (same order) of the last row already seen;
   * only rows after it are selected. Not applied to the count.
   */
  after?: readonly Value[];
  /** Adjusted or resampled daily bars (`adjust`, `interval`). */
  bars?: BarsPlan;
  /** Distinct rows of the selected fields (plan.orderBy must be on selected fields). */
  distinct?: boolean;
  /**
   * Point in time (ISO UTC, ms): the rows as they were at this instant, read from the revision
   * table (revision-schema.ts) with the same filters, order and paging.
   */
  asOf?: string;
  /** The revision trail: every kept revision; `where`/`orderBy`/`select` may use REVISION_FIELDS. */
  trail?: boolean;
  /**
   * A chunk of an export: never read on the request thread even when bounded
   * (storage/bounded-read.ts), so an export's reads keep a reader's deadline and stop.
   */
  bulk?: boolean;
}
