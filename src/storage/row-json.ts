import type { Dataset } from '../catalog/catalog.js';
import type { Row, Value } from './store.js';

/**
 * Each data row also keeps its response JSON, written at ingest, so a page is read as one text
 * value per row instead of one value per field and is not serialised again per request (the
 * bench's random pages: about half of a page's CPU went to returning and serialising values).
 * The `mds_` prefix is one no catalog field may take. NULL in rows written before the column
 * existed until migrate() fills it.
 *
 * The text is the row object as the query routes' response schema serialises it (api names,
 * catalog order, every field) up to, not including, `created_at`: that one is set on first
 * insert and kept on update, so the read appends it (`selectStatement` in sql.ts).
 */
export const ROW_JSON_COLUMN = 'mds_row_json';

export type RowJson = (row: Row) => string;

function jsonValue(v: Value): string {
  // Same text as fast-json-stringify for these types: numbers are finite (ingest), strings
  // well-formed (lone surrogates are refused at ingest).
  if (v === null) return 'null';
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

const builders = new WeakMap<Dataset, RowJson>();

/** The stored JSON prefix of a row keyed by column names (`{"code":"510300",…,"updated_at":"…"`). */
export function rowJson(d: Dataset): RowJson {
  let build = builders.get(d);
  if (!build) {
    const parts = d.fields.map((f, i) => ({
      col: f.name,
      head: `${i === 0 ? '{' : ','}${JSON.stringify(f.apiName)}:`,
    }));
    build = (row) => {
      let s = '';
      for (const p of parts) s += p.head + jsonValue(row[p.col] ?? null);
      return s;
    };
    builders.set(d, build);
  }
  return build;
}
