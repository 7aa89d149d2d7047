import { createHash } from 'node:crypto';
import type { Dataset, Field } from '../catalog/catalog.js';
import type { Row, Value } from './values.js';

/**
 * Each data row also keeps its response JSON, written at ingest, so a page is read as one text
 * value per row instead of one value per field and is not serialised again per request (the
 * bench's random pages: about half of a page's CPU went to returning and serialising values).
 * The `mds_` prefix is one no catalog field may take. NULL in rows written before the column
 * existed until migrate() fills it; rebuilt by migrate() when the catalog changes a dataset's
 * row shape (`rowShape` below).
 *
 * The text is the row object as the query routes' response schema serialises it (api names,
 * catalog order, every field) up to, not including, `created_at`: that one is set on first
 * insert and kept on update, so the read appends it (`selectStatement` in sql.ts).
 */
export const ROW_JSON_COLUMN = 'mds_row_json';

export type RowJson = (row: Row) => string;

/** Strings that need no escaping in JSON (printable ASCII without `"` and `\\`). */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * One value's JSON: the same text as fast-json-stringify for these types (numbers are finite,
 * checked at ingest; strings well-formed, lone surrogates refused at ingest).
 */
function jsonValue(v: Value | undefined): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number') return `${v}`;
  return v.length < 128 && PLAIN.test(v) ? `"${v}"` : JSON.stringify(v);
}

const builders = new WeakMap<Dataset, RowJson>();

/** The stored JSON prefix of a row keyed by column names (`{"code":"510300",…,"updated_at":"…"`). */
export function rowJson(d: Dataset): RowJson {
  let build = builders.get(d);
  if (!build) {
    // One concatenation per dataset, generated from the catalog (names match
    // /^[a-z][a-z0-9_]*$/): about a quarter faster than a loop over the fields.
    const body = jsonFields(d)
      .map(
        (f, i) =>
          `${JSON.stringify(`${i === 0 ? '{' : ','}"${f.apiName}":`)} + v(r[${JSON.stringify(f.name)}])`,
      )
      .join(' + ');
    build = new Function('v', `return (r) => ${body};`)(jsonValue) as RowJson;
    builders.set(d, build);
  }
  return build;
}

/** The fields a row's JSON holds: all but an opaque one (a bar block's payload, kept once, in its column). */
const jsonFields = (d: Dataset): readonly Field[] => d.fields.filter((f) => f.opaque !== true);

/** Bumped when this file changes how a row's JSON is written: every stored row JSON is rebuilt. */
const ROW_JSON_FORMAT = 1;

/**
 * What a dataset's stored row JSON depends on: this file's format and the catalog's fields
 * (column name, api name, order). Recorded per dataset (mds_dataset_shapes); when the catalog
 * changes it, migrate() rebuilds the dataset's row JSON (migrations.ts).
 */
export function rowShape(d: Dataset): string {
  const fields = jsonFields(d).map((f) => [f.name, f.apiName]);
  return createHash('sha256')
    .update(JSON.stringify([ROW_JSON_FORMAT, fields]))
    .digest('hex');
}

/**
 * Some fields read back from stored row JSON, and numbers written over some of them (adjusted
 * pages: query/in-process-adjust.ts), without parsing or writing the whole row.
 */
export interface RowJsonFields {
  /**
   * The fields' values, in the order of the fields given (an array: no keyed store per field),
   * and where each one's text is: [start, end) pairs.
   */
  read(json: string): { values: Value[]; at: number[] };
  /** `json` with `values` of the fields at `which` (indexes into the fields) written over theirs. */
  write(json: string, at: readonly number[], values: readonly Value[], which: readonly number[]): string;
}

/** 10^0 … 10^22: every one an exact double. */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

/**
 * The number `json` holds in [start, end), as Number() reads it. Plain decimals of at most 15
 * digits (every stored price) are an exact integer over an exact power of ten, and one IEEE
 * division rounds that quotient correctly, as Number() does (Clinger's fast path): no
 * substring, no general parse. Anything else (an exponent, more digits) goes to Number().
 */
function numberAt(json: string, start: number, end: number): number {
  let i = start;
  const neg = json.charCodeAt(i) === 45;
  if (neg) i++;
  let m = 0;
  let digits = 0;
  let frac = -1;
  for (; i < end; i++) {
    const c = json.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      digits++;
      if (frac >= 0) frac++;
    } else if (c === 46 && frac < 0) frac = 0;
    else return Number(json.slice(start, end));
  }
  if (digits === 0 || digits > 15 || frac === 0) return Number(json.slice(start, end));
  const v = frac > 0 ? m / (POW10[frac] as number) : m;
  return neg ? -v : v;
}

/** A number's JSON as the response serialiser writes it (fast-json-stringify): null when not finite. */
const numberText = (v: Value | undefined): string =>
  typeof v === 'number' ? (Number.isFinite(v) ? `${v}` : 'null') : jsonValue(v);

/**
 * `fields` (each a field of `d` other than created_at, given in `d.fields` order) of the JSON
 * `rowJson` writes. A key is found as `,"name":` (`{"name":` for the first field): inside a JSON
 * string every `"` is escaped, so that text occurs only where the key is. A string value ends
 * at its first unescaped `"`; a number's or null's text at the next `,` or `}`. Numbers read
 * back are the stored doubles (the text is their shortest round-trip form).
 */
export function rowJsonFields(d: Dataset, fields: readonly Field[]): RowJsonFields {
  const first = d.fields[0];
  const keys = fields.map((f) => `${f === first ? '{' : ','}"${f.apiName}":`);
  const text = fields.map((f) => f.type === 'string' || f.type === 'date' || f.type === 'timestamp');
  const fail = (what: string): never => {
    throw new Error(`stored row JSON of ${d.name}: ${what}`);
  };
  return {
    read(json) {
      const values: Value[] = new Array<Value>(keys.length);
      const at: number[] = new Array<number>(2 * keys.length);
      let pos = 0;
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k] as string;
        const i = json.indexOf(key, pos);
        if (i < 0) fail(`no ${key}`);
        const start = i + key.length;
        let end: number;
        let value: Value;
        if (text[k] && json.charCodeAt(start) === 34) {
          let q = start + 1;
          for (;;) {
            q = json.indexOf('"', q);
            if (q < 0) fail(`${key} unterminated`);
            let slashes = 0;
            while (json.charCodeAt(q - 1 - slashes) === 92) slashes++;
            if (slashes % 2 === 0) break;
            q++;
          }
          end = q + 1;
          const token = json.slice(start, end);
          value = token.includes('\\') ? (JSON.parse(token) as string) : token.slice(1, -1);
        } else {
          end = start;
          for (let c = json.charCodeAt(end); c !== 44 && c !== 125; c = json.charCodeAt(++end)) {
            if (end >= json.length) fail(`${key} cut`);
          }
          value = json.charCodeAt(start) === 110 ? null : numberAt(json, start, end);
        }
        values[k] = value;
        at[2 * k] = start;
        at[2 * k + 1] = end;
        pos = end;
      }
      return { values, at };
    },
    write(json, at, values, which) {
      let out = '';
      let pos = 0;
      for (const k of which) {
        out += json.slice(pos, at[2 * k]) + numberText(values[k]);
        pos = at[2 * k + 1] as number;
      }
      return out + json.slice(pos);
    },
  };
}
