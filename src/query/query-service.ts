import type { Dataset, Field } from '../catalog/catalog.js';
import type { QueryPlan, Store, Value } from '../storage/store.js';
import { parseQuery, type ParsedQuery } from './parse.js';
import { filterKey, planQuery } from './plan.js';
import { decodeCursor, encodeCursor } from './cursor.js';

/**
 * A page's rows, either as objects (a `fields=` projection) or, for whole rows, each as its
 * response JSON text (the store keeps it: no per-field values, no serialisation per request).
 */
export type PageRows = { kind: 'objects'; rows: Record<string, Value>[] } | { kind: 'json'; rows: string[] };

export interface QueryPage {
  rows: PageRows;
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

  constructor(private readonly store: Pick<Store, 'datasets'>) {}

  parse(d: Dataset, raw: Record<string, unknown>): { parsed: ParsedQuery; plan: QueryPlan } {
    const parsed = parseQuery(d, raw);
    const plan = planQuery(d, parsed);
    if (parsed.cursor !== null) plan.after = decodeCursor(plan, parsed.cursor);
    return { parsed, plan };
  }

  version(d: Dataset): Promise<number> {
    return this.store.datasets.datasetVersion(d.name);
  }

  async page(plan: QueryPlan, version: number): Promise<QueryPage> {
    const key = filterKey(plan);
    const cached = this.totals.get(key);
    let hit = cached !== undefined && cached.version === version;
    const keyset = plan.after !== undefined;
    // After a cursor, one row more than the page tells whether another page follows.
    const query = { ...plan, limit: keyset ? plan.limit + 1 : plan.limit };
    let result = await this.fetch(query, !hit);
    // A batch committed between reading `version` and the rows: the cached total is of the old
    // rows (a full snapshot showed 300 rows with total 500). Count again, in the rows' statement.
    if (hit && (await this.store.datasets.datasetVersion(plan.dataset.name)) !== version) {
      result = await this.fetch(query, true);
      hit = false;
    }
    const total = hit && cached ? cached.total : result.total;
    if (!hit) {
      if (this.totals.size >= TOTAL_CACHE_SIZE) this.totals.delete(this.totals.keys().next().value as string);
      this.totals.set(key, { version, total });
    }
    const rows = result.rows;
    const hasMore = keyset ? rows.rows.length > plan.limit : plan.offset + rows.rows.length < total;
    // The keyset probe row is not part of the page.
    if (rows.rows.length > plan.limit) rows.rows.length = plan.limit;
    const last = rows.rows[rows.rows.length - 1];
    let nextCursor: string | null = null;
    if (hasMore && last !== undefined) {
      const values = typeof last === 'string' ? (JSON.parse(last) as Record<string, Value>) : last;
      nextCursor = encodeCursor(
        plan,
        plan.orderBy.map((o) => values[o.field.apiName] ?? null),
      );
    }
    if (rows.kind === 'objects') {
      const extra = this.extraFields(plan);
      if (extra.length > 0) for (const r of rows.rows) for (const f of extra) delete r[f.apiName];
    }
    return { rows, total, limit: plan.limit, offset: plan.offset, hasMore, nextCursor, version };
  }

  /** Sort and key fields the cursor needs that a projection left out. */
  private extraFields(plan: QueryPlan): Field[] {
    return plan.orderBy.map((o) => o.field).filter((f) => !plan.select.includes(f));
  }

  /**
   * Whole rows as stored JSON; a projection (or a row stored without its JSON) as objects, with
   * the sort fields the next cursor needs.
   */
  private async fetch(plan: QueryPlan, withTotal: boolean): Promise<{ rows: PageRows; total: number }> {
    if (plan.select === plan.dataset.rowFields) {
      const r = await this.store.datasets.queryJson(plan, withTotal);
      if (!r.rows.includes(null)) return { rows: { kind: 'json', rows: r.rows as string[] }, total: r.total };
    }
    const r = await this.store.datasets.query(
      { ...plan, select: [...plan.select, ...this.extraFields(plan)] },
      withTotal,
    );
    return { rows: { kind: 'objects', rows: r.rows }, total: r.total };
  }

  stream(plan: QueryPlan): AsyncIterable<Record<string, Value>[]> {
    return this.store.datasets.stream(plan);
  }
}
