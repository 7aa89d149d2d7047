import type { Row, Value } from '../../model/values.js';

/**
 * Rows in PostgreSQL's COPY text format (tab-separated, `\N` for NULL, backslash escapes), in
 * chunks of about CHUNK_CHARS so a 100,000-record batch is never one giant string.
 */

const CHUNK_CHARS = 256 * 1024;
const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

export function copyValue(v: Value): string {
  if (v === null) return '\\N';
  // Numbers are validated finite; String() is the shortest form that round-trips a double,
  // which float8in reads back to the same double.
  if (typeof v === 'number') return String(v);
  return SPECIAL.test(v) ? v.replace(SPECIAL_ALL, (c) => ESCAPES[c] as string) : v;
}

/** Yields COPY text for `rows`: the columns `cols`. */
export function* copyChunks(rows: readonly Row[], cols: readonly string[]): Generator<string> {
  let buf = '';
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Row;
    buf += cols.map((c) => copyValue(row[c] ?? null)).join('\t') + '\n';
    if (buf.length >= CHUNK_CHARS) {
      yield buf;
      buf = '';
    }
  }
  if (buf.length > 0) yield buf;
}
