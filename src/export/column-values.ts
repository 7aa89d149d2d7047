import type { Field } from '../catalog/catalog.js';
import type { Value } from '../model/values.js';

/**
 * Typed columns for the columnar formats (Arrow, Parquet), from the catalog's field types:
 * date → days since 1970-01-01 (date32), timestamp → ms since the epoch, UTC (the service keeps
 * timestamps to the millisecond), number → float64 (the stored double, never re-parsed; −0 as 0, like the JSON answer),
 * integer → int64, flag → int8 (0 or 1, as in the JSON answer), string → UTF-8 text.
 */

const DAY_MS = 86_400_000;

/** A row value as the column's number: days for dates, ms for timestamps; null stays null. */
export type Converter = (v: Value) => number | null;

/** Repeated dates and timestamps (a sorted export repeats them) are parsed once. */
function memo(parse: (s: string) => number): Converter {
  let last: Value = null;
  let lastValue = 0;
  return (v) => {
    if (v === null || v === undefined) return null;
    if (v !== last) {
      last = v;
      lastValue = parse(String(v));
    }
    return lastValue;
  };
}

/** The numeric converter of a field, or null for text fields. A fresh one per column (memo). */
export function numericConverter(f: Field): Converter | null {
  switch (f.type) {
    case 'string':
      return null;
    case 'date':
      // Date.parse reads YYYY-MM-DD as UTC midnight, for every year (Date.UTC maps 0–99 to 19xx).
      return memo((s) => Date.parse(s) / DAY_MS);
    case 'timestamp':
      return memo((s) => Date.parse(s));
    case 'number':
      // + 0 turns −0 into 0 and leaves every other double as it is: the JSON answer has no −0.
      return (v) => (v === null || v === undefined ? null : Number(v) + 0);
    case 'integer':
    case 'flag':
      return (v) => (v === null || v === undefined ? null : Number(v));
  }
}

/** Required fields and the server-set created_at are never null; the rest may be. */
export function nullable(f: Field): boolean {
  return !f.required && !f.serverSet;
}
