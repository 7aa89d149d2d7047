import type { Dataset } from '../catalog/catalog.js';
import type { QueryPlan, Store, Value } from '../storage/store.js';
import { parseQuery, type ParsedQuery } from './parse.js';
import { filterKey, planQuery } from './plan.js';
import { decodeCursor, encodeCursor } from './cursor.js';

export interface QueryPage {
  rows: Record<string, Value>[];
  total: number;
  limit: number;
  offset: number;
  hasMore: boolean;
  /** Keyset cursor for the page after this one; null on the last page. */
  nextCursor: string | null;
  version: number;
}

const TOTAL_CACHE_SIZE = 10_000;

/**
 * Stage 3: execute. `meta.total` is exact: totals are cached per filter and dataset version,
 * so a large unfiltered table is counted once per change, not once per request.
 */
export class QueryService {
  private readonly totals = new Map<string, { version: number; total: number }>();

  constructor(private readonly store: Store) {}

  parse(d: Dataset, raw: Record<string, unknown>): { parsed: ParsedQuery; plan: QueryPlan } {
    const parsed = parseQuery(d, raw);
    const plan = planQuery(d, parsed);
    if (parsed.cursor !== null) plan.after = decodeCursor(plan, parsed.cursor);
    return { parsed, plan };
  }

  version(d: Dataset): Promise<number> {
    return this.store.datasetVersion(d.name);
  }

  async page(plan: QueryPlan, version: number): Promise<QueryPage> {
    const key = filterKey(plan);
    const cached = this.totals.get(key);
    let hit = cached !== undefined && cached.version === version;
    // The next cursor needs the sort and key values of the last row, selected or not.
    const extra = plan.orderBy.map((o) => o.field).filter((f) => !plan.select.includes(f));
    const keyset = plan.after !== undefined;
    const query = {
      ...plan,
      select: [...plan.select, ...extra],
      limit: keyset ? plan.limit + 1 : plan.limit,
    };
    // After a cursor, one row more than the page tells whether another page follows.
    let result = await this.store.query(query, !hit);
    // A batch committed between reading `version` and the rows: the cached total is of the old
    // rows (a full snapshot showed 300 rows with total 500). Count again, in the rows' statement.
    if (hit && (await this.store.datasetVersion(plan.dataset.name)) !== version) {
      result = await this.store.query(query, true);
      hit = false;
    }
    const total = hit && cached ? cached.total : result.total;
    if (!hit) {
      if (this.totals.size >= TOTAL_CACHE_SIZE) this.totals.delete(this.totals.keys().next().value as string);
      this.totals.set(key, { version, total });
    }
    let rows = result.rows;
    const hasMore = keyset ? rows.length > plan.limit : plan.offset + rows.length < total;
    if (rows.length > plan.limit) rows = rows.slice(0, plan.limit);
    const last = rows[rows.length - 1];
    const nextCursor =
      hasMore && last
        ? encodeCursor(
            plan,
            plan.orderBy.map((o) => last[o.field.apiName] ?? null),
          )
        : null;
    if (extra.length > 0) {
      for (const r of rows) for (const f of extra) delete r[f.apiName];
    }
    return { rows, total, limit: plan.limit, offset: plan.offset, hasMore, nextCursor, version };
  }

  stream(plan: QueryPlan): AsyncIterable<Record<string, Value>[]> {
    return this.store.stream(plan);
  }
}
