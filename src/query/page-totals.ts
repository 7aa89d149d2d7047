/** Filters whose totals are kept; the oldest entry goes first. */
const TOTAL_CACHE_SIZE = 10_000;

/**
 * `meta.total` per filter (plan.ts filterKey) and dataset version, so a large unfiltered table
 * is counted once per change, not once per request.
 */
export class PageTotals {
  private readonly totals = new Map<string, { version: number; total: number }>();

  /** The total counted for `key` at `version`, if any. */
  get(key: string, version: number): number | undefined {
    const cached = this.totals.get(key);
    return cached !== undefined && cached.version === version ? cached.total : undefined;
  }

  set(key: string, version: number, total: number): void {
    if (this.totals.size >= TOTAL_CACHE_SIZE) this.totals.delete(this.totals.keys().next().value as string);
    this.totals.set(key, { version, total });
  }
}
