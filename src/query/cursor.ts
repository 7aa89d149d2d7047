import { createHash } from 'node:crypto';
import { invalid } from '../errors.js';
import type { QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import { filterKey } from './plan.js';

/**
 * Keyset-pagination cursors: opaque to clients, base64url of JSON
 * `{v: [the last row's values of the sort and key fields], h: hash of filters and sort}`.
 * The hash ties a cursor to the query that produced it, so one reused with other filters or
 * another sort is refused (400 / 4001) instead of silently skipping or repeating rows.
 */

interface CursorBody {
  v: Value[];
  h: string;
}

/** What a cursor is bound to: the dataset, the filters and the full order. */
export function planFingerprint(plan: QueryPlan): string {
  const order = plan.orderBy.map((o) => `${o.field.name} ${o.dir}`).join(',');
  return createHash('sha256')
    .update(`${filterKey(plan)}|${order}`)
    .digest('base64url')
    .slice(0, 16);
}

export function encodeCursor(plan: QueryPlan, values: readonly Value[]): string {
  const body: CursorBody = { v: [...values], h: planFingerprint(plan) };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

const MAX_CURSOR_LENGTH = 4096;

/** The cursor's values, checked against the plan; 400 / 4001 when malformed or foreign. */
export function decodeCursor(plan: QueryPlan, cursor: string): Value[] {
  const bad = (why: string) =>
    invalid(`cursor is ${why}; use the meta.next_cursor of a previous page of the same query`, {
      parameter: 'cursor',
    });
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw bad('malformed');
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad('malformed');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('malformed');
  const { v, h } = body as Record<string, unknown>;
  if (typeof h !== 'string' || !Array.isArray(v) || v.length !== plan.orderBy.length) throw bad('malformed');
  if (h !== planFingerprint(plan)) throw bad('for a different query (filters or sort changed)');
  return v.map((x, i) => {
    const field = plan.orderBy[i]?.field;
    if (x === null) {
      if (field && (field.required || field.serverSet)) throw bad('malformed');
      return null;
    }
    const numeric = field?.type === 'number' || field?.type === 'integer' || field?.type === 'flag';
    if (numeric ? typeof x !== 'number' || !Number.isFinite(x) : typeof x !== 'string')
      throw bad('malformed');
    return x as Value;
  });
}
