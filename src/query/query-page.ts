import type { LatestOnMeta } from '../contract/envelope.js';
import type { Value } from '../model/values.js';
import type { AdjustMeta } from './adjust-meta.js';
import type { PageMeta } from '../contract/envelope.js';
import type { BarKey } from './factor-sources.js';

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
  /** `meta.adjust` of an adjusted page. */
  adjust?: AdjustMeta;
  /** `meta.before_history`: `as_of` before the dataset's first change (answer-notes.ts). */
  beforeHistory?: NonNullable<PageMeta['before_history']>;
  /** `meta.several_sources`: rows of several sources for one key on the page (answer-notes.ts). */
  severalSources?: NonNullable<PageMeta['several_sources']>;
  /** `meta.latest_on` of a cross-section (latest-on.ts). */
  latestOn?: LatestOnMeta;
}

/** A page's `meta` in a JSON answer: its counts, its cursor and, adjusted, what adjusted it. */
export function pageMeta(page: QueryPage): PageMeta {
  return {
    total: page.total,
    limit: page.limit,
    offset: page.offset,
    has_more: page.hasMore,
    next_cursor: page.nextCursor,
    ...(page.adjust ? { adjust: page.adjust } : {}),
    ...(page.beforeHistory ? { before_history: page.beforeHistory } : {}),
    ...(page.severalSources ? { several_sources: page.severalSources } : {}),
    ...(page.latestOn ? { latest_on: page.latestOn } : {}),
  };
}

/** A page's rows as read, with the total when counted; `keys`: each JSON row's code and source (adjusted pages). */
export interface FetchedRows {
  rows: PageRows;
  total: number;
  keys?: BarKey[];
}
