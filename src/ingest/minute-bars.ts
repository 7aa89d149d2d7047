import { BLOCK_BARS, BLOCK_COUNT, type BarBlocks } from '../catalog/catalog.js';
import { encodeBars } from '../model/bar-codec.js';
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
  const reason = barTimeError(b, row, at);
  return reason === null ? at.minute : { field: b.time.name, reason };
}

function barTimeError(b: BarBlocks, row: Row, at: ReturnType<typeof exchangeMinute>): string | null {
  if (!at.whole) return `${b.time.apiName} must be a whole minute (the bar's end minute)`;
  if (at.date !== row[b.date.name])
    return `${b.time.apiName} falls on ${at.date} at ${b.utcOffset}, not on the bar's ${b.date.apiName} ${String(row[b.date.name])}`;
  if (!b.sessions.some(([from, to]) => at.minute > from && at.minute <= to))
    return (
      `${b.time.apiName} ${hhmm(at.minute)} is not the end minute of a bar in a session: bars end at ` +
      `${sessionWords(b)}; the opening call auction belongs to the first bar`
    );
  return null;
}

/**
 * The batch's valid bars as block rows (one per code, date and source), for `applyBatch`;
 * `minutes[i]`: bar i's end minute (barMinute).
 */
export function blockWrite(
  b: BarBlocks,
  bars: readonly Row[],
  given: readonly number[],
  minutes: readonly number[],
  merge: boolean,
): Pick<WriteBatch, 'dataset' | 'rows' | 'updatedAtGiven' | 'blocks'> {
  const groups = new Map<string, { row: Row; bars: { minute: number; values: (number | null)[] }[] }>();
  const updated = b.stored.fieldByName.get('updated_at')?.name ?? 'updated_at';
  const givenOf = new Map<Row, number>();
  bars.forEach((bar, i) => {
    const key = JSON.stringify([bar[b.code.name], bar[b.date.name], bar[b.source.name]]);
    let g = groups.get(key);
    if (!g) {
      const row: Row = {
        [b.code.name]: bar[b.code.name] ?? null,
        [b.date.name]: bar[b.date.name] ?? null,
        [b.source.name]: bar[b.source.name] ?? null,
        [BLOCK_COUNT]: 0,
        [BLOCK_BARS]: '',
        [updated]: bar[updated] ?? null,
      };
      g = { row, bars: [] };
      groups.set(key, g);
      givenOf.set(row, 0);
    }
    // The block's updated_at: the latest of its bars'; given when any bar gave its own.
    const u = bar[updated] ?? null;
    if (u !== null && (g.row[updated] === null || (g.row[updated] as string) < u)) g.row[updated] = u;
    if (given[i] === 1) givenOf.set(g.row, 1);
    g.bars.push({
      minute: minutes[i] as number,
      values: b.values.map((f) => (bar[f.name] as number | null) ?? null),
    });
  });
  const rows: Row[] = [];
  for (const g of groups.values()) {
    g.bars.sort((x, y) => x.minute - y.minute);
    g.row[BLOCK_BARS] = encodeBars({
      minutes: g.bars.map((x) => x.minute),
      columns: b.values.map((_, c) => g.bars.map((x) => x.values[c] ?? null)),
    });
    g.row[BLOCK_COUNT] = g.bars.length;
    rows.push(g.row);
  }
  return {
    dataset: b.stored,
    rows,
    updatedAtGiven: Uint8Array.from(rows.map((r) => givenOf.get(r) ?? 0)),
    blocks: { merge },
  };
}
