import type { Dataset } from '../catalog/catalog.js';
import { AppError } from '../errors.js';
import type { Store } from '../storage/store.js';
import { allowedValues, type QueryPlan } from '../model/query-plan.js';
import type { PageMeta } from '../contract/envelope.js';
import type { PageRows } from './query-page.js';

export type BeforeHistory = NonNullable<PageMeta['before_history']>;
export type SeveralSources = NonNullable<PageMeta['several_sources']>;

/**
 * What an answer says beyond its rows where they alone would mislead (docs/endpoints.md,
 * docs/point-in-time.md): a source named in another case than the stored one (400 / 4007), an
 * `as_of` before the dataset's first change, a page with several sources for one key.
 */
export class AnswerNotes {
  /** Per stored dataset, once known: the first change's instant never moves. */
  private readonly firsts = new Map<string, string>();
  /** Per dataset: its stored sources at a version (one index probe per source to refresh). */
  private readonly sources = new Map<string, { version: number; values: string[] }>();

  constructor(private readonly store: Pick<Store, 'datasets'>) {}

  /**
   * 400 / 4007 when a source the plan names (`source=`, `source_priority=`) is not stored while
   * one differing only in case is: the answer would be silently empty, or silently lack it.
   */
  async checkSources(plan: QueryPlan, version: number): Promise<void> {
    const d = plan.dataset;
    const field = d.sourceField;
    const named = field ? allowedValues(plan.where, field) : null;
    if (!field || !named || named.length === 0) return;
    const stored = await this.storedSources(d, version);
    const have = new Set(stored);
    for (const v of named) {
      if (typeof v !== 'string' || have.has(v)) continue;
      const like = stored.filter((s) => s.toLowerCase() === v.toLowerCase());
      if (like.length === 0) continue;
      const parameter = plan.where.some((c) => c.field === field && c.op === 'first')
        ? 'source_priority'
        : field.apiName;
      throw new AppError(
        4007,
        `no ${field.apiName} "${v}" is stored; sources are matched exactly, and the stored one is ` +
          `spelt ${like.map((s) => `"${s}"`).join(' or ')}`,
        { extra: { parameter, allowed: like } },
      );
    }
  }

  private async storedSources(d: Dataset, version: number): Promise<string[]> {
    const kept = this.sources.get(d.name);
    if (kept?.version === version) return kept.values;
    const values = await this.store.datasets.sourceValues((d.blocks?.stored ?? d).name);
    this.sources.set(d.name, { version, values });
    return values;
  }

  /** `meta.before_history` of an `as_of` answer before the dataset's first change; null otherwise. */
  async beforeHistory(d: Dataset, asOf: string | undefined): Promise<BeforeHistory | null> {
    if (asOf === undefined) return null;
    const stored = (d.blocks?.stored ?? d).name;
    let first = this.firsts.get(stored) ?? null;
    if (first === null) {
      first = await this.store.datasets.firstChange(stored);
      if (first !== null) this.firsts.set(stored, first);
    }
    if (first !== null && asOf >= first) return null;
    return {
      first_change: first,
      message:
        first === null
          ? `the service holds no state of ${d.name} at ${asOf}: it has no change yet`
          : `the service holds no state of ${d.name} before its first change, known at ${first}; ` +
            `as_of ${asOf} is earlier`,
    };
  }
}

/**
 * `meta.several_sources` when two rows of the page share every key field but the source (a
 * code's day from two sources); null otherwise, or when the rows do not carry the key (a
 * `fields=` projection without it). Bounded by the page (at most 1000 rows).
 */
export function severalSources(d: Dataset, rows: PageRows): SeveralSources | null {
  const source = d.sourceField;
  if (!source) return null;
  const key = d.key.filter((k) => k !== source).map((k) => k.apiName);
  const objects =
    rows.kind === 'json' ? rows.rows.map((j) => JSON.parse(j) as Record<string, unknown>) : rows.rows;
  const seen = new Map<string, unknown>();
  const sources = new Set<string>();
  let several = false;
  for (const r of objects) {
    const s = r[source.apiName];
    if (s === undefined || key.some((k) => r[k] === undefined)) return null;
    sources.add(String(s));
    const k = JSON.stringify(key.map((f) => r[f]));
    const before = seen.get(k);
    if (before !== undefined && before !== s) several = true;
    else seen.set(k, s);
  }
  if (!several) return null;
  const list = [...sources].sort();
  return {
    sources: list,
    message:
      `rows of several sources (${list.join(', ')}) for one key on this page: pass ` +
      `${source.apiName}= for one source, or source_priority= for one row per key`,
  };
}
