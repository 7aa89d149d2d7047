import type { BarBlocks } from '../catalog/catalog.js';

const MINUTES: Record<string, number> = { '5m': 5, '15m': 15, '30m': 30, '60m': 60 };

/**
 * A period's label, by session (docs/minute-bars.md): the end minute of the k-minute span from
 * the session's start that holds the bar, never past the session's end, so no period crosses
 * the lunch break or the day; `1d`: the end of the day's last session that has a bar.
 */
function periodOf(b: BarBlocks, minute: number, interval: string, dayEnd: number): number {
  if (interval === '1d') return dayEnd;
  const k = MINUTES[interval] ?? 1;
  const s = b.sessions.find(([from, to]) => minute > from && minute <= to);
  if (!s) return minute;
  const [from, to] = s;
  return Math.min(from + Math.ceil((minute - from) / k) * k, to);
}

/** The end of the session holding a day's last bar: the label of its `1d` bar. */
function dayEndOf(b: BarBlocks, last: number): number {
  return b.sessions.find(([from, to]) => last > from && last <= to)?.[1] ?? last;
}

/** The period label of each of a day's minutes [lo, hi) (minute order) at `interval` (the read path's columns). */
export function periodLabels(
  b: BarBlocks,
  minutes: Int32Array,
  lo: number,
  hi: number,
  interval: string,
): Int32Array {
  const out = new Int32Array(hi - lo);
  if (hi <= lo) return out;
  const dayEnd = dayEndOf(b, minutes[hi - 1] as number);
  for (let i = lo; i < hi; i++) out[i - lo] = periodOf(b, minutes[i] as number, interval, dayEnd);
  return out;
}

const HALF_ULP = 2 ** -52;

/**
 * `Number(s.toFixed(6))` without the string: an integer is its own (volumes); otherwise s × 10^6
 * rounded to the nearest integer and divided back, which is the same double whenever the product
 * is not within its own rounding error of a half (toFixed rounds the exact value, this the
 * rounded product) and is an exact integer range — else the string form decides.
 */
export function roundedSum(s: number): number {
  // + 0: toFixed writes −0 as 0.
  if (Number.isInteger(s) && Math.abs(s) < 1e21) return s + 0;
  const p = s * 1e6;
  const f = p - Math.floor(p);
  if (Math.abs(p) < 2 ** 52 && Math.abs(f - 0.5) > Math.abs(p) * HALF_ULP * 4) return Math.round(p) / 1e6;
  return Number(s.toFixed(6));
}
