import type { QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';

/** Rows per export query: large enough that a 250,000-row export is 250 short queries. */
export const EXPORT_CHUNK = 1000;
/** Times an export starts again when a batch lands before its first rows were sent. */
const EXPORT_RESTARTS = 3;

/** A batch changed the dataset during an export: the export is cut rather than mix versions. */
export class ExportChangedError extends Error {
  constructor(dataset: string) {
    super(`dataset ${dataset} changed during the export; retry it`);
  }
}

/**
 * Every row of a plan (limit and offset ignored) in chunks of EXPORT_CHUNK rows, each read by
 * `read` as one short keyset query continuing after `keyOf` of the last row: no connection,
 * cursor or transaction is held while the client takes the rows in, so a slow or stalled client
 * cannot starve the pool or pin SQLite's WAL. One version throughout (`versionOf`: the
 * dataset's, and its factors' when adjusted): read before the first chunk and after each one (a
 * batch's rows and its version bump commit together, so a chunk that saw a batch's rows is
 * followed by a read that sees its version). A change before any row was yielded starts again;
 * after, the export fails (ExportChangedError) and the response is cut without its end, so a
 * client never takes a mix of two versions for a whole export.
 */
export function exportChunks<R>(
  plan: QueryPlan,
  read: (chunk: QueryPlan) => Promise<R[]>,
  keyOf: (row: R) => Value[],
  versionOf: () => Promise<string>,
): AsyncIterable<R[]> {
  return exportChunksOf(
    plan,
    read,
    { size: (rows) => rows.length, lastKey: (rows) => keyOf(rows[rows.length - 1] as R) },
    versionOf,
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
  versionOf: () => Promise<string>,
): AsyncIterable<C> {
  const name = plan.dataset.name;
  let version = await versionOf();
  let after = plan.after;
  let yielded = false;
  for (let restarts = 0; ;) {
    const rows = await read({ ...plan, limit: EXPORT_CHUNK, offset: 0, ...(after ? { after } : {}) });
    const now = await versionOf();
    if (now !== version) {
      if (yielded || ++restarts > EXPORT_RESTARTS) throw new ExportChangedError(name);
      version = now;
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
