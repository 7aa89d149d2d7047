/** Values as stored and answered, and checks of single values shared by ingest validation and query parsing. */

/** A stored value: strings for text, dates (YYYY-MM-DD) and timestamps (UTC, `Z`); numbers; null. */
export type Value = string | number | null;
/** A row keyed by ingest (column) names. */
export type Row = Record<string, Value>;

/** The longest string a record field may hold. */
export const MAX_TEXT = 65_536;

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP_RE =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}:?\d{2})$/;

function realDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = [
    31,
    y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28,
    31,
    30,
    31,
    30,
    31,
    31,
    30,
    31,
    30,
    31,
  ];
  return d <= (days[m - 1] as number);
}

/** A real calendar date written YYYY-MM-DD. */
export function isDate(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const m = DATE_RE.exec(v);
  return m !== null && realDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/**
 * An ISO 8601 timestamp with an offset or Z, normalised to UTC `YYYY-MM-DDTHH:mm:ss.sssZ`
 * (millisecond precision); null when the text is not one.
 */
export function normalizeTimestamp(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  // A batch usually repeats one timestamp (updated_at) on every record: remember the last one.
  if (v === lastTimestamp.text) return lastTimestamp.value;
  const value = parseTimestamp(v);
  lastTimestamp = { text: v, value };
  return value;
}

let lastTimestamp: { text: string; value: string | null } = { text: '', value: null };

function parseTimestamp(v: string): string | null {
  const m = TIMESTAMP_RE.exec(v);
  if (!m) return null;
  if (!realDate(Number(m[1]), Number(m[2]), Number(m[3]))) return null;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59) return null;
  const off = m[8] as string;
  if (off.length > 1 && (Number(off.slice(1, 3)) > 23 || Number(off.slice(-2)) > 59)) return null;
  const ms = Date.parse(v.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (!Number.isFinite(ms)) return null;
  return new Date(ms).toISOString();
}

/** Strings must be storable text on every backend: no NUL, no lone surrogate. */
export function isCleanText(s: string): boolean {
  return !s.includes('\u0000') && s.isWellFormed();
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Depth of nested arrays/objects, computed without recursion; stops counting past `limit`. */
export function nestingExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
