import { BLOCK_BARS, BLOCK_COUNT } from '../catalog/catalog.js';
import { decodeBars, encodeBars, type BarColumns } from '../model/bar-codec.js';
import type { Tx } from './db.js';
import { ident, join, sql } from './sql.js';
import type { Step } from './step.js';
import type { BarCounts, WriteBatch } from './store.js';
import type { Row, Value } from '../model/values.js';

/** A block's key as one text, to find it among the stored ones. */
const keyString = (values: readonly Value[]): string => JSON.stringify(values);

/** Keys per statement reading the stored blocks (well under either backend's bound on values). */
const CHUNK = 500;

/**
 * Inside the batch transaction, under the dataset's lock (so no other batch slips between the
 * read and the write): the stored blocks of the batch's keys, each bar of the batch compared
 * with its stored one (the per-bar accepted and duplicate counts), and — for an incremental
 * batch — each of the batch's blocks merged into the stored one, the batch's bars replacing
 * those of the same minute. A full snapshot's blocks replace the stored ones as sent.
 */
export function* mergeBlocks(tx: Tx, batch: WriteBatch, merge: boolean): Step<BarCounts> {
  const d = batch.dataset;
  const [code, date, source] = d.key.map((k) => k.name) as [string, string, string];
  const stored = new Map<string, string>();
  const distinct = (name: string): Value[] => [...new Set(batch.rows.map((r) => r[name] ?? null))];
  const dates = distinct(date);
  const sources = distinct(source);
  const codes = distinct(code);
  for (let i = 0; i < codes.length; i += CHUNK) {
    const list = (vs: readonly Value[]) => join(vs.map((v) => sql`${v}`));
    const rows = yield* tx.rows(
      sql`SELECT ${ident(code)}, ${ident(date)}, ${ident(source)}, ${ident(BLOCK_BARS)} FROM ${ident(d.name)} WHERE ${ident(code)} IN (${list(codes.slice(i, i + CHUNK))}) AND ${ident(date)} IN (${list(dates)}) AND ${ident(source)} IN (${list(sources)})`,
    );
    for (const r of rows)
      stored.set(keyString([r[code], r[date], r[source]] as Value[]), r[BLOCK_BARS] as string);
  }
  const counts: BarCounts = { accepted: 0, unchanged: 0 };
  for (const row of batch.rows) {
    const text = stored.get(keyString([row[code] ?? null, row[date] ?? null, row[source] ?? null]));
    if (text === undefined) {
      // A new block: all its bars are accepted, counted without decoding what was just encoded.
      counts.accepted += row[BLOCK_COUNT] as number;
      continue;
    }
    const given = decodeBars(row[BLOCK_BARS] as string);
    const before = decodeBars(text);
    const same = sameBars(given, before);
    counts.unchanged += same;
    counts.accepted += given.minutes.length - same;
    if (merge && same < before.minutes.length) setBars(row, mergeBars(before, given));
  }
  return counts;
}

export function setBars(row: Row, bars: BarColumns): void {
  row[BLOCK_BARS] = encodeBars(bars);
  row[BLOCK_COUNT] = bars.minutes.length;
}

/** How many of `given`'s bars `stored` holds with the same minute and values. */
function sameBars(given: BarColumns, stored: BarColumns): number {
  const at = new Map(stored.minutes.map((m, i) => [m, i]));
  let same = 0;
  given.minutes.forEach((m, i) => {
    const j = at.get(m);
    if (j !== undefined && given.columns.every((col, c) => col[i] === stored.columns[c]?.[j])) same++;
  });
  return same;
}

/** `stored`'s bars with `given`'s put over them (same minute: given's), in minute order. */
function mergeBars(stored: BarColumns, given: BarColumns): BarColumns {
  const byMinute = new Map<number, (number | null)[]>();
  const put = (b: BarColumns) =>
    b.minutes.forEach((m, i) =>
      byMinute.set(
        m,
        b.columns.map((col) => col[i] ?? null),
      ),
    );
  put(stored);
  put(given);
  const minutes = [...byMinute.keys()].sort((a, b) => a - b);
  const columns = stored.columns.map((_, c) => minutes.map((m) => byMinute.get(m)?.[c] ?? null));
  return { minutes, columns };
}
