import type { QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';

/** Rows per export query: large enough that a 250,000-row export is 250 short queries. */
export const EXPORT_CHUNK = 1000;
/** Times an adjusted export starts again when its factors change before its first rows were sent. */
const EXPORT_RESTARTS = 3;

/** The factors of an adjusted export changed during it: cut rather than adjust its rows two ways. */
export class ExportChangedError extends Error {
  constructor(dataset: string) {
    super(`the adjustment factors of ${dataset} changed during the export; retry it`);
  }
}

/**
 * Every row of a plan (limit and offset ignored) in chunks of EXPORT_CHUNK rows, each read by
 * `read` as one short keyset query continuing after `keyOf` of the last row: no connection,
 * cursor or transaction is held while the client takes the rows in, so a slow or stalled client
 * cannot starve the pool or pin SQLite's WAL.
 *
 * A batch landing in the dataset during an export does not stop it: the export goes on after its
 * cursor, as a client paging with cursors does, so each row is sent once, as it stood when its
 * chunk was read (one statement), and an export completes under any rate of ingest. (Cutting it
 * instead made every export of a dataset under steady ingest impossible; `as_of` gives one fixed
 * instant.) `fixedOf`, when given, is the version of what an export must not see change (an
 * adjusted export's factors: its rows would be adjusted two ways), read before the first chunk
 * and after each one: a change before any row was yielded starts again; after, the export fails
 * (ExportChangedError) and the response is cut without its end.
 */
export function exportChunks<R>(
  plan: QueryPlan,
  read: (chunk: QueryPlan) => Promise<R[]>,
  keyOf: (row: R) => Value[],
  fixedOf: (() => Promise<string>) | null,
): AsyncIterable<R[]> {
  return exportChunksOf(
    plan,
    read,
    { size: (rows) => rows.length, lastKey: (rows) => keyOf(rows[rows.length - 1] as R) },
    fixedOf,
  );
}

/** How exportChunksOf sees a chunk of any shape (rows, or columns: model/value-columns.ts). */
export interface ChunkShape<C> {
  size(chunk: C): number;
  /** The sort key of the chunk's last row (the chunk is not empty). */
  lastKey(chunk: C): Value[];
}

/** `exportChunks` for chunks of any shape. */
export async function* exportChunksOf<C>(
  plan: QueryPlan,
  read: (chunk: QueryPlan) => Promise<C>,
  shape: ChunkShape<C>,
  fixedOf: (() => Promise<string>) | null,
): AsyncIterable<C> {
  const name = plan.dataset.name;
  let fixed = fixedOf ? await fixedOf() : '';
  let after = plan.after;
  let yielded = false;
  for (let restarts = 0; ;) {
    const rows = await read({ ...plan, limit: EXPORT_CHUNK, offset: 0, ...(after ? { after } : {}) });
    const now = fixedOf ? await fixedOf() : '';
    if (now !== fixed) {
      if (yielded || ++restarts > EXPORT_RESTARTS) throw new ExportChangedError(name);
      fixed = now;
      after = plan.after;
      continue;
    }
    const size = shape.size(rows);
    if (size === 0) return;
    after = shape.lastKey(rows);
    yielded = true;
    yield rows;
    if (size < EXPORT_CHUNK) return;
  }
}
