import type { Value } from '../storage/store.js';

/** The query envelope of spec 2.1, on every query response, errors included. */
export interface Envelope {
  code: number;
  message: string;
  data: Record<string, Value>[];
  meta: { total: number; limit: number; offset: number; has_more: boolean };
}

export function errorEnvelope(code: number, message: string, limit = 0, offset = 0): Envelope {
  return { code, message, data: [], meta: { total: 0, limit, offset, has_more: false } };
}

/** Paths answered with the query envelope (everything under /api/v1 but the ingest interface). */
export const isQueryPath = (url: string): boolean =>
  url.startsWith('/api/v1/') && !url.startsWith('/api/v1/upstream/');
