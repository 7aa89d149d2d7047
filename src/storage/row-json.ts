import { createHash } from 'node:crypto';
import type { Dataset } from '../catalog/catalog.js';
import type { Row, Value } from './store.js';

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
    const body = d.fields
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

/** Bumped when this file changes how a row's JSON is written: every stored row JSON is rebuilt. */
const ROW_JSON_FORMAT = 1;

/**
 * What a dataset's stored row JSON depends on: this file's format and the catalog's fields
 * (column name, api name, order). Recorded per dataset (mds_dataset_shapes); when the catalog
 * changes it, migrate() rebuilds the dataset's row JSON (migrations.ts).
 */
export function rowShape(d: Dataset): string {
  const fields = d.fields.map((f) => [f.name, f.apiName]);
  return createHash('sha256')
    .update(JSON.stringify([ROW_JSON_FORMAT, fields]))
    .digest('hex');
}
