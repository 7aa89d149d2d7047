import type { Dataset, Field } from '../catalog/catalog.js';
import type { RecordError } from '../model/batch.js';
import {
  MAX_TEXT,
  isCleanText,
  isDate,
  isPlainObject,
  normalizeTimestamp,
  type Row,
  type Value,
} from '../model/values.js';
import { normalizeCode } from '../query/codes.js';

export interface RecordContext {
  /** Server time for an absent updated_at. */
  now: string;
  /** meta.source: fills an absent optional source field. */
  source: string;
  /** Full snapshot: the partition every record must belong to. */
  partition: { value: string; source: string } | null;
}

export type RecordResult =
  { ok: true; row: Row; updatedAtGiven: boolean; idempotencyKey: string } | { ok: false; error: RecordError };

/**
 * UTF-8 bytes of a text value in a field the database indexes (key, exact filters, date range,
 * partition, default sort). PostgreSQL refuses a btree entry over 2,704 bytes (a 2.7 KB key gave a
 * 500 there while SQLite stored it); the widest index holds five text columns, and 5 × 512 bytes
 * plus overheads stays under that limit (test/ingest/ingest-text-limits.test.ts checks the catalog).
 * Enforced on both backends, so they accept and refuse the same records.
 */
export const MAX_INDEXED_TEXT_BYTES = 512;

/** The fields a dataset's indexes may hold: every one whose values must fit a btree entry. */
export function indexedFields(d: Dataset): Set<Field> {
  const out = new Set<Field>([...d.key, ...d.exact, d.sort.field]);
  if (d.range) out.add(d.range);
  if (d.partition) out.add(d.partition);
  return out;
}

/** Returns the stored value, or the reason the value is refused. */
export function checkValue(f: Field, v: unknown, indexed: boolean): { value: Value } | { reason: string } {
  switch (f.type) {
    case 'string':
      if (typeof v !== 'string') return { reason: 'must be a string' };
      if (!isCleanText(v)) return { reason: 'must not contain NUL or unpaired surrogates' };
      if (v.length > MAX_TEXT) return { reason: `must be at most ${MAX_TEXT} characters` };
      // Characters are at most 3 UTF-8 bytes each (no lone surrogates): only long text is measured.
      if (indexed && v.length * 3 > MAX_INDEXED_TEXT_BYTES && Buffer.byteLength(v) > MAX_INDEXED_TEXT_BYTES)
        return { reason: `must be at most ${MAX_INDEXED_TEXT_BYTES} bytes in UTF-8 (an indexed field)` };
      if (f.pattern && !f.pattern.test(v)) return { reason: `must match ${f.pattern.source}` };
      break;
    case 'number':
      // A 64-bit float like any JSON number, 2^53 and beyond included (docs/ingest.md "Values").
      if (typeof v !== 'number' || !Number.isFinite(v)) return { reason: 'must be a finite number' };
      break;
    case 'integer':
      // Exact integers only: beyond ±(2^53 − 1) a JSON number no longer names one integer.
      if (typeof v !== 'number' || !Number.isInteger(v)) return { reason: 'must be an integer' };
      if (!Number.isSafeInteger(v))
        return { reason: 'must be an integer within ±9007199254740991 (2^53 − 1), exactly representable' };
      break;
    case 'flag':
      if (v !== 0 && v !== 1) return { reason: 'must be 0 or 1' };
      break;
    case 'date':
      if (!isDate(v)) return { reason: 'must be a real calendar date YYYY-MM-DD' };
      break;
    case 'timestamp': {
      const ts = normalizeTimestamp(v);
      if (ts === null) return { reason: 'must be an ISO 8601 timestamp with an offset or Z' };
      return { value: ts };
    }
  }
  if (f.exclusiveMinimum !== null && typeof v === 'number' && !(v > f.exclusiveMinimum)) {
    return { reason: `must be greater than ${f.exclusiveMinimum}` };
  }
  if (f.enum && !f.enum.includes(v as string | number)) {
    return { reason: `must be one of ${f.enum.join(', ')}` };
  }
  return { value: v as Value };
}

/**
 * Builds the validator of one dataset's records (decisions.md "Records"): types, required
 * fields, real dates, finite numbers, ISO timestamps, unknown fields refused, unique_key equal
 * to the dataset's key and agreeing with data, and — for a full snapshot — the partition.
 */
export function recordValidator(
  d: Dataset,
): (record: unknown, index: number, ctx: RecordContext) => RecordResult {
  const keyNames = d.key.map((k) => k.name);
  const keyFields = new Set(keyNames);
  const indexed = indexedFields(d);
  const sourceName = d.sourceField?.name ?? null;
  const sourceOptional = d.sourceField !== null && !d.sourceField.required;

  return (record, index, ctx) => {
    let idem: string | null = null;
    const fail = (field: string | null, reason: string): RecordResult => ({
      ok: false,
      error: { index, idempotency_key: idem, field, reason },
    });
    if (!isPlainObject(record)) return fail(null, 'record must be an object');
    const rawIdem = record.idempotency_key;
    if (typeof rawIdem === 'string' && rawIdem.length > 0 && isCleanText(rawIdem)) idem = rawIdem;
    else return fail('idempotency_key', 'must be a non-empty string');
    for (const k of Object.keys(record)) {
      if (k !== 'idempotency_key' && k !== 'unique_key' && k !== 'data')
        return fail(k, 'unknown record field');
    }
    const data = record.data;
    if (!isPlainObject(data)) return fail('data', 'must be an object');
    const uk = record.unique_key;
    if (!isPlainObject(uk)) return fail('unique_key', 'must be an object');

    for (const k of Object.keys(data)) {
      if (!d.fieldByName.has(k)) return fail(k, `unknown field for dataset ${d.name}`);
    }
    const row: Row = {};
    for (const f of d.fields) {
      const v = data[f.name];
      if (v === undefined || v === null) {
        if (f.name === 'updated_at' && !f.required) row[f.name] = ctx.now;
        else if (f.name === sourceName && sourceOptional) row[f.name] = ctx.source;
        else if (f.required) return fail(f.name, v === null ? 'must not be null' : 'required field missing');
        else row[f.name] = null;
        continue;
      }
      const checked = checkValue(f, v, indexed.has(f));
      if ('reason' in checked) return fail(f.name, checked.reason);
      if (checked.value === '' && keyFields.has(f.name))
        return fail(f.name, 'must not be empty (a key field)');
      // A CN code is stored as its 6 digits whatever the upstream wrote (`sh510300`,
      // `510300.SH`): stored as written, no query could find it, as queries read those spellings.
      const market = d.codes.get(f);
      row[f.name] =
        market && typeof checked.value === 'string' ? normalizeCode(market, checked.value) : checked.value;
    }

    const ukNames = Object.keys(uk);
    for (const k of ukNames) {
      if (!keyNames.includes(k))
        return fail(`unique_key.${k}`, `not a key field; the key is ${keyNames.join(', ')}`);
    }
    for (const k of keyNames) {
      if (!(k in uk)) return fail(`unique_key.${k}`, `missing; the key is ${keyNames.join(', ')}`);
      if (uk[k] !== data[k]) return fail(`unique_key.${k}`, 'does not agree with data');
    }

    if (ctx.partition) {
      if (d.partition && row[d.partition.name] !== ctx.partition.value) {
        return fail(
          d.partition.name,
          `outside the snapshot partition (business_date ${ctx.partition.value})`,
        );
      }
      if (sourceName && row[sourceName] !== ctx.partition.source) {
        return fail(sourceName, `outside the snapshot partition (source ${ctx.partition.source})`);
      }
    }
    return {
      ok: true,
      row,
      updatedAtGiven: data.updated_at !== undefined && data.updated_at !== null,
      idempotencyKey: idem,
    };
  };
}
