import type { Value } from '../model/values.js';

/** The query envelope of spec 2.1, on every query response, errors included. */
export interface Envelope {
  code: number;
  message: string;
  data: Record<string, Value>[];
  meta: { total: number; limit: number; offset: number; has_more: boolean };
}

/**
 * Every success answer, built here only: `{code: 0, message, ...fields}` (`data`, `meta`, or a
 * batch status record's own fields).
 */
export function success<T extends object>(fields: T, message = 'ok'): { code: 0; message: string } & T {
  return { code: 0, message, ...fields };
}

/** The head of a success answer as JSON text, for bodies joined from stored JSON (query-routes.ts). */
export const SUCCESS_JSON_HEAD = JSON.stringify(success({})).slice(0, -1);

export function errorEnvelope(code: number, message: string, limit = 0, offset = 0): Envelope {
  return { code, message, data: [], meta: { total: 0, limit, offset, has_more: false } };
}

/** Paths answered with the query envelope (everything under /api/v1 but the ingest interface). */
export const isQueryPath = (url: string): boolean =>
  url.startsWith('/api/v1/') && !url.startsWith('/api/v1/upstream/');
