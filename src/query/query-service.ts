import type { Dataset } from '../catalog/catalog.js';
import type { QueryPlan, Store, Value } from '../storage/store.js';
import { parseQuery, type ParsedQuery } from './parse.js';
import { filterKey, planQuery } from './plan.js';

export interface QueryPage {
  rows: Record<string, Value>[];
  total: number;
  limit: number;
  offset: number;
  hasMore: boolean;
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
    return { parsed, plan: planQuery(d, parsed) };
  }

  version(d: Dataset): Promise<number> {
    return this.store.datasetVersion(d.name);
  }

  async page(plan: QueryPlan, version: number): Promise<QueryPage> {
    const key = filterKey(plan);
    const cached = this.totals.get(key);
    const hit = cached !== undefined && cached.version === version;
    const result = await this.store.query(plan, !hit);
    const total = hit ? cached.total : result.total;
    if (!hit) {
      if (this.totals.size >= TOTAL_CACHE_SIZE) this.totals.delete(this.totals.keys().next().value as string);
      this.totals.set(key, { version, total });
    }
    return {
      rows: result.rows,
      total,
      limit: plan.limit,
      offset: plan.offset,
      hasMore: plan.offset + result.rows.length < total,
      version,
    };
  }

  stream(plan: QueryPlan): AsyncIterable<Record<string, Value>[]> {
    return this.store.stream(plan);
  }
}
