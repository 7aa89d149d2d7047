import { Type, type TSchema } from '@sinclair/typebox';
import type { Dataset, Field } from '../catalog/catalog.js';
import type { FieldType } from '../catalog/types.js';
import { MAX_TEXT } from '../model/values.js';
import { storesBlocks } from '../catalog/catalog.js';

/**
 * JSON Schemas derived from the catalog (data by nature: one per dataset): the rows an endpoint
 * returns and the records a batch carries. The same functions feed response serialisation
 * (fast-json-stringify) and the OpenAPI document, so what is published is what is checked.
 */

type Json = Record<string, unknown>;

/** ISO 8601 with an offset or Z, as the service accepts it (seconds optional, `T` or a space). */
export const TIMESTAMP_PATTERN =
  '^\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-]\\d{2}:?\\d{2})$';

/**
 * Which side of the wire a schema describes: what a client may send (timestamps in any offset,
 * strings up to the stored limit) or what the service answers (timestamps always UTC `Z`).
 */
export type Side = 'request' | 'response';

function base(type: FieldType, side: Side): Json {
  switch (type) {
    case 'string':
      return side === 'request' ? { type: 'string', maxLength: MAX_TEXT } : { type: 'string' };
    case 'number':
      return { type: 'number' };
    case 'integer':
      return { type: 'integer' };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'timestamp':
      return side === 'request'
        ? { type: 'string', pattern: TIMESTAMP_PATTERN, description: 'ISO 8601 with an offset or Z' }
        : { type: 'string', format: 'date-time' };
    case 'flag':
      return { type: 'integer', enum: [0, 1] };
  }
}

/** One field's schema; optional fields also take null (they are null when absent). */
export function fieldJson(f: Field, side: Side = 'response', nullable = !f.required && !f.serverSet): Json {
  const s: Json = base(f.type, side);
  if (f.enum && f.type !== 'flag') s.enum = [...f.enum];
  if (f.pattern) s.pattern = f.pattern.source;
  if (f.exclusiveMinimum !== null) s.exclusiveMinimum = f.exclusiveMinimum;
  const desc = [f.description, s.description, f.unit ? `unit: ${f.unit}` : null].filter(Boolean).join('; ');
  if (desc) s.description = desc;
  // What the number counts (catalog units.ts), as data for clients (the Python client's schema).
  if (f.unit) s['x-mds-unit'] = f.unit;
  if (!nullable) return s;
  s.type = [s.type, 'null'];
  if (Array.isArray(s.enum)) s.enum = [...(s.enum as unknown[]), null];
  return s;
}

export const fieldSchema = (f: Field, side: Side = 'response'): TSchema => Type.Unsafe(fieldJson(f, side));

/**
 * A returned row. `required` lists every field (absent values are null): the published row.
 * Serialisation uses it without `required`, since `fields=` narrows rows to a subset. Daily
 * bars with `interval` may add the resampled rows' period_start and bar_count.
 */
export function rowSchema(d: Dataset, opts: { required?: boolean } = {}): TSchema {
  // updated_at and an optional source are filled by the server (its time, meta.source): never null.
  const filled = (f: Field) => f.name === 'updated_at' || f === d.sourceField;
  const properties = Object.fromEntries(
    (d.daily?.resampledFields ?? d.rowFields).map((f) => [
      f.apiName,
      opts.required && filled(f) ? fieldJson(f, 'response', false) : fieldJson(f),
    ]),
  );
  // latest_on's rows carry how many trading days each is older than the day (query/latest-on.ts).
  if (d.range && !d.blocks)
    properties.stale_days = {
      type: ['integer', 'null'],
      description:
        'latest_on only: trading days between this row and latest_on (null: outside the stored calendar)',
    };
  return Type.Unsafe({
    type: 'object',
    ...(opts.required
      ? {
          title: `${d.name}${storesBlocks(d) ? '_block' : ''}_row`,
          required: d.rowFields.map((f) => f.apiName),
        }
      : {}),
    properties,
  });
}

/** `data` of an ingest record: the dataset's fields, nothing else. */
export function recordDataSchema(d: Dataset): TSchema {
  return Type.Unsafe({
    type: 'object',
    additionalProperties: false,
    required: d.fields.filter((f) => f.required).map((f) => f.name),
    properties: Object.fromEntries(d.fields.map((f) => [f.name, fieldJson(f, 'request')])),
  });
}

/** `unique_key` of an ingest record: exactly the key fields (equal to the same fields in data). */
export function uniqueKeySchema(d: Dataset): TSchema {
  return Type.Unsafe({
    type: 'object',
    additionalProperties: false,
    required: d.key.map((k) => k.name),
    properties: Object.fromEntries(d.key.map((k) => [k.name, fieldJson(k, 'request', false)])),
    description: `the key fields of ${d.name}, equal to the same fields in data`,
  });
}
