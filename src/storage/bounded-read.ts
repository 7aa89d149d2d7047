import { storesBlocks, type Dataset, type Field } from '../catalog/catalog.js';
import type { Condition, QueryPlan } from '../model/query-plan.js';
import { datasetIndexes, keyIndexOrder } from './schema.js';

/**
 * Which reads of dataset rows are *bounded*: served by an index in the order asked, so the
 * statement reads at most about offset + limit index entries (a page) or one series' rows (a
 * count), whatever its parameters' values. On SQLite a bounded read runs on the request
 * thread's own connection (a reader process's round trip costs more CPU than such a statement);
 * every other read goes to a reader process (sqlite/reader-pool.ts, docs/architecture.md
 * "Heavy reads never run on the request thread"). Decided here only, from the plan and the
 * catalog's indexes (schema.ts); test/storage/bounded-read.test.ts checks every shape classed
 * bounded against SQLite's EXPLAIN QUERY PLAN (no table scan, no sorting step).
 */

/** The longest bounded page: the largest page (query-params.ts MAX_LIMIT) and a keyset's probe row. */
export const BOUNDED_LIMIT = 1001;

/** The deepest offset a bounded page may skip: skipped rows are read (index entries and rows). */
export const BOUNDED_OFFSET = 1000;

/** A page's statement is bounded; `count`: its total's count too. */
export interface Boundedness {
  page: boolean;
  count: boolean;
}

const UNBOUNDED: Boundedness = { page: false, count: false };

interface IndexOrder {
  columns: { name: string; desc: boolean }[];
}

/** The dataset's indexes over its rows, each column with its direction (key index first). */
const indexCache = new WeakMap<Dataset, IndexOrder[]>();
function indexesOf(d: Dataset): IndexOrder[] {
  let out = indexCache.get(d);
  if (!out) {
    out = [
      { columns: keyIndexOrder(d) },
      ...datasetIndexes(d).map((i) => ({
        columns: i.columns.map((name) => ({ name, desc: i.desc?.includes(name) ?? false })),
      })),
    ];
    indexCache.set(d, out);
  }
  return out;
}

/**
 * Whether an index serves the plan: its equality conditions fix exactly the index's first
 * columns, its range conditions (and a keyset's leading bound) are on the next one, and its
 * order (less the fixed fields) is the index's next columns, all in the index's direction or
 * all reversed. The order always ends with the unique key (plan.ts), so such an index holds the
 * whole order and no sorting step is left.
 */
function servedBy(plan: QueryPlan, ix: IndexOrder): boolean {
  const eq = new Set(plan.where.filter((c) => c.op === 'eq').map((c) => c.field.name));
  const cols = ix.columns;
  let k = 0;
  while (k < cols.length && eq.has((cols[k] as { name: string }).name)) k++;
  if (k !== eq.size) return false;
  const order = plan.orderBy.filter((o) => !eq.has(o.field.name));
  const next = cols[k]?.name;
  for (const c of plan.where) {
    if ((c.op === 'gte' || c.op === 'lte') && c.field.name !== next) return false;
  }
  if (order.length === 0 || order.length > cols.length - k) return false;
  // A keyset page bounds its first sort field (sql.ts keysetPredicate): it must be the ranged column.
  if (plan.after !== undefined && order[0]?.field.name !== next) return false;
  let reversed: boolean | null = null;
  for (const [i, o] of order.entries()) {
    const col = cols[k + i] as { name: string; desc: boolean };
    if (col.name !== o.field.name) return false;
    const flip = (o.dir === 'desc') !== col.desc;
    if (reversed === null) reversed = flip;
    else if (reversed !== flip) return false;
  }
  return true;
}

/**
 * A count reads one series at most: every key field but the date range's and the source is
 * fixed by an equality (one code's bars: one row per day and source).
 */
function countBounded(plan: QueryPlan): boolean {
  const d = plan.dataset;
  const eq = new Set(plan.where.filter((c) => c.op === 'eq').map((c) => c.field));
  const free = new Set<Field | null>([d.range, d.sourceField]);
  return d.key.every((k) => eq.has(k) || free.has(k));
}

const PLAIN: ReadonlySet<Condition['op']> = new Set(['eq', 'gte', 'lte']);

/**
 * One code's day of bar blocks (a minute page of `code` and `date`): every key field but the
 * source fixed by an equality (the same one given twice included), so the key index gives one
 * row per source whatever the limit. Measured: two reader round trips were most of such a page's
 * CPU (docs/minute-bars.md). Any other read of a block table is not bounded.
 */
function oneBlockDay(plan: QueryPlan): boolean {
  const d = plan.dataset;
  if (!storesBlocks(d) || plan.bulk || plan.asOf !== undefined || plan.trail || plan.distinct) return false;
  if (plan.offset > 0 || !plan.where.every((c) => c.op === 'eq')) return false;
  const fixed = new Set(plan.where.map((c) => c.field));
  return d.key.every((k) => k === d.sourceField || fixed.has(k));
}

/**
 * The plan's boundedness. Never bounded: adjusted or resampled rows (bars-sql.ts: windows and a
 * factor lookup per row), `as_of` and trails (a union of the rows and their revisions), DISTINCT,
 * `like`, lists and source precedence (filters no index range serves), block tables (but one
 * code's day: oneBlockDay), a page
 * deeper than BOUNDED_OFFSET or longer than the largest page (and its keyset probe row), an
 * export's chunks (`bulk`).
 */
export function boundedRead(plan: QueryPlan): Boundedness {
  const d = plan.dataset;
  if (oneBlockDay(plan)) return { page: true, count: true };
  if (
    plan.bulk ||
    plan.bars ||
    plan.asOf !== undefined ||
    plan.trail ||
    plan.distinct ||
    d.blocks ||
    storesBlocks(d)
  ) {
    return UNBOUNDED;
  }
  if (plan.limit > BOUNDED_LIMIT || plan.offset > BOUNDED_OFFSET) return UNBOUNDED;
  if (!plan.where.every((c) => PLAIN.has(c.op))) return UNBOUNDED;
  // Two conditions on one field of the same kind (a filter given twice): not an index range.
  const seen = new Set<string>();
  for (const c of plan.where) {
    const tag = `${c.field.name}:${c.op}`;
    if (seen.has(tag)) return UNBOUNDED;
    seen.add(tag);
  }
  if (!indexesOf(d).some((ix) => servedBy(plan, ix))) return UNBOUNDED;
  return { page: true, count: countBounded(plan) };
}
