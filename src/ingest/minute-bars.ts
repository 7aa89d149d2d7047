import { BLOCK_BARS, BLOCK_COUNT, type BarBlocks } from '../catalog/catalog.js';
import { encodeBarColumns } from '../model/bar-codec.js';
import type { WriteBatch } from '../storage/store.js';
import type { Row } from '../model/values.js';

/**
 * Intraday bars at ingest (docs/minute-bars.md): each bar checked against the sessions, then
 * the batch's bars grouped into one block row per code, trading date and source, as storage
 * holds them (catalog.ts `BarBlocks`, model/bar-codec.ts).
 */

const DAY_MS = 86_400_000;

/** A bar's end minute in the exchange's day and its date there, from a stored (UTC) timestamp. */
export function exchangeMinute(b: BarBlocks, time: string): { date: string; minute: number; whole: boolean } {
  const local = Date.parse(time) + b.offsetMinutes * 60_000;
  const ms = ((local % DAY_MS) + DAY_MS) % DAY_MS;
  return { date: dayText(local - ms), minute: Math.floor(ms / 60_000), whole: ms % 60_000 === 0 };
}

// A batch's bars fall on a handful of days: the last day's text is kept, not built per bar.
let lastDay = { ms: NaN, text: '' };
function dayText(ms: number): string {
  if (ms !== lastDay.ms) lastDay = { ms, text: new Date(ms).toISOString().slice(0, 10) };
  return lastDay.text;
}

export const hhmm = (minute: number): string =>
  `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

/** The sessions' bar labels as words: `09:31–11:30, 13:01–15:00 (+08:00)`. */
export function sessionWords(b: BarBlocks): string {
  return `${b.sessions.map(([from, to]) => `${hhmm(from + 1)}–${hhmm(to)}`).join(', ')} (${b.utcOffset})`;
}

/**
 * A validated bar's end minute in the exchange's day, or why it cannot be stored (its time
 * against the date and sessions). The minute is kept for blockWrite, which would otherwise
 * parse the time again.
 */
export function barMinute(b: BarBlocks, row: Row): number | { field: string; reason: string } {
  const time = row[b.time.name] as string;
  const at = exchangeMinute(b, time);
  const reason = barTimeError(b, row[b.date.name] as string, at);
  return reason === null ? at.minute : { field: b.time.name, reason };
}

/** Why a bar at `at` cannot be stored under its trading date `date`; null when it can. */
export function barTimeError(
  b: BarBlocks,
  date: string,
  at: ReturnType<typeof exchangeMinute>,
): string | null {
  if (!at.whole) return `${b.time.apiName} must be a whole minute (the bar's end minute)`;
  if (at.date !== date)
    return `${b.time.apiName} falls on ${at.date} at ${b.utcOffset}, not on the bar's ${b.date.apiName} ${date}`;
  if (!b.sessions.some(([from, to]) => at.minute > from && at.minute <= to))
    return (
      `${b.time.apiName} ${hhmm(at.minute)} is not the end minute of a bar in a session: bars end at ` +
      `${sessionWords(b)}; the opening call auction belongs to the first bar`
    );
  return null;
}

/**
 * A batch's valid bars as columns (bar i of every array is one bar), as both ingest paths hand
 * them to blockWrite: the record path from its rows (barsOfRows), the columnar path
 * (minute-columns.ts) straight from the body's bytes, without an object per bar.
 */
export interface BarInput {
  count: number;
  code: string[];
  date: string[];
  source: string[];
  /** updated_at as stored; null when the bar did not give one (the batch's time stands in). */
  updated: (string | null)[];
  /** End minute in the exchange's day (barMinute). */
  minutes: Int32Array;
  /** One column per `BarBlocks.values` field; NaN is null (stored values are finite). */
  values: Float64Array[];
}

/** The record path's rows as BarInput (`given[i]`: row i gave its own updated_at). */
export function barsOfRows(
  b: BarBlocks,
  rows: readonly Row[],
  given: readonly number[],
  minutes: readonly number[],
): BarInput {
  const updated = b.stored.fieldByName.get('updated_at')?.name ?? 'updated_at';
  const text = (name: string) => rows.map((r) => r[name] as string);
  return {
    count: rows.length,
    code: text(b.code.name),
    date: text(b.date.name),
    source: text(b.source.name),
    updated: rows.map((r, i) => (given[i] === 1 ? (r[updated] as string) : null)),
    minutes: Int32Array.from(minutes),
    values: b.values.map((f) => Float64Array.from(rows, (r) => (r[f.name] as number | null) ?? NaN)),
  };
}

/** The bars of each block: indexes into a BarInput, per block in minute order. */
export interface BarGroups {
  /** Bar indexes, block after block. */
  order: Int32Array;
  /** Block g's bars are order[starts[g]] … order[starts[g + 1] − 1]. */
  starts: Int32Array;
}

/**
 * The bars grouped by block (code, date, source) and sorted by minute, or null when two bars of
 * one block share a minute (the record path has removed such bars; the columnar path leaves
 * the batch to it). A counting sort over block numbers: no object per bar.
 */
export function groupBars(bars: BarInput): BarGroups | null {
  const n = bars.count;
  const { code, date, source, minutes } = bars;
  const block = new Int32Array(n);
  const ids = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    // A batch is mostly a code's bars in a row: the previous bar's block is tried first.
    if (i > 0 && code[i] === code[i - 1] && date[i] === date[i - 1] && source[i] === source[i - 1]) {
      block[i] = block[i - 1] as number;
      continue;
    }
    const key = JSON.stringify([code[i], date[i], source[i]]);
    let id = ids.get(key);
    if (id === undefined) ids.set(key, (id = ids.size));
    block[i] = id;
  }
  const starts = new Int32Array(ids.size + 1);
  for (let i = 0; i < n; i++) {
    const at = (block[i] as number) + 1;
    starts[at] = (starts[at] as number) + 1;
  }
  for (let g = 0; g < ids.size; g++) starts[g + 1] = (starts[g + 1] as number) + (starts[g] as number);
  const next = starts.slice(0, ids.size);
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const g = block[i] as number;
    const at = next[g] as number;
    order[at] = i;
    next[g] = at + 1;
  }
  for (let g = 0; g < ids.size; g++) {
    const part = order.subarray(starts[g], starts[g + 1]);
    let sorted = true;
    for (let k = 1; k < part.length && sorted; k++)
      sorted = (minutes[part[k - 1] as number] as number) < (minutes[part[k] as number] as number);
    if (sorted) continue;
    part.sort((x, y) => (minutes[x] as number) - (minutes[y] as number));
    for (let k = 1; k < part.length; k++)
      if (minutes[part[k - 1] as number] === minutes[part[k] as number]) return null;
  }
  return { order, starts };
}

/**
 * The batch's valid bars as block rows (one per code, date and source), for `applyBatch`. A
 * block's updated_at is the latest of its bars' (`now` for a bar that gave none).
 */
export function blockWrite(
  b: BarBlocks,
  bars: BarInput,
  groups: BarGroups,
  now: string,
  merge: boolean,
): Pick<WriteBatch, 'dataset' | 'rows' | 'blocks'> {
  const updatedName = b.stored.fieldByName.get('updated_at')?.name ?? 'updated_at';
  const { order, starts } = groups;
  const blocks = starts.length - 1;
  const rows: Row[] = new Array<Row>(blocks);
  for (let g = 0; g < blocks; g++) {
    const part = order.subarray(starts[g], starts[g + 1]);
    const first = part[0] as number;
    let updated: string | null = null;
    for (const i of part) {
      const u = bars.updated[i] ?? null;
      const at = u ?? now;
      if (updated === null || updated < at) updated = at;
    }
    rows[g] = {
      [b.code.name]: bars.code[first] ?? null,
      [b.date.name]: bars.date[first] ?? null,
      [b.source.name]: bars.source[first] ?? null,
      [BLOCK_COUNT]: part.length,
      [BLOCK_BARS]: encodeBarColumns(bars.minutes, bars.values, part),
      [updatedName]: updated,
    };
  }
  return { dataset: b.stored, rows, blocks: { merge } };
}
