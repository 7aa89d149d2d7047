import { Type, type Static, type TNull, type TObject, type TSchema, type TUnion } from '@sinclair/typebox';
import { mustBe, optional } from './check.js';

/**
 * The admin API's bodies and answers (keys, usage, batches, coverage, datasets). The key
 * service validates request bodies against these; the OpenAPI document publishes them.
 */

/** Largest rate or quota a key may carry. */
export const MAX_KEY_LIMIT = 1_000_000_000;
export const MAX_KEY_NAME = 100;

// Control characters (Unicode Cc) would break the one-line-per-key listing.
const CC = '\\u0000-\\u001f\\u007f-\\u009f';
const NO_CC = `[^${CC}]`;

const limit = (what: string) =>
  mustBe(
    Type.Union([Type.Integer({ minimum: 1, maximum: MAX_KEY_LIMIT }), Type.Null()], {
      description: `${what}; null: none; absent on create: the configured default`,
    }),
    `an integer from 1 to ${MAX_KEY_LIMIT}, or null for no limit`,
  );

const KeyName = mustBe(
  Type.String({ maxLength: MAX_KEY_NAME, pattern: `^${NO_CC}*[^\\s${CC}]${NO_CC}*$` }),
  `a non-empty string of at most ${MAX_KEY_NAME} characters, without control characters`,
);

export const KeyScopeSchema = Type.Union([Type.Literal('query'), Type.Literal('ingest')]);

const keyLimits = {
  rate_per_minute: optional(limit('requests per minute (query keys only)')),
  daily_quota: optional(limit('requests per UTC day (query keys only)')),
};

export const KeyCreateSchema = Type.Object(
  { scope: KeyScopeSchema, name: optional(KeyName), ...keyLimits },
  { additionalProperties: false, title: 'KeyCreate' },
);

export type KeyCreate = Static<typeof KeyCreateSchema>;

export const KeyUpdateSchema = Type.Object(
  { name: optional(KeyName), ...keyLimits },
  { additionalProperties: false, title: 'KeyUpdate' },
);

export type KeyUpdate = Static<typeof KeyUpdateSchema>;

// Typed, not a bare TSchema: the dashboard's type check reads these answers' fields.
const nullable = <T extends TSchema>(s: T): TUnion<[T, TNull]> => Type.Union([s, Type.Null()]);

/** A key as shown to operators: everything but the hash. */
export const KeyViewSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    scope: KeyScopeSchema,
    prefix: Type.String({ description: 'the first characters of the secret, to recognise it' }),
    rate_per_minute: nullable(Type.Integer()),
    daily_quota: nullable(Type.Integer()),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: nullable(Type.String({ format: 'date-time' })),
    revoked_at: nullable(Type.String({ format: 'date-time' })),
  },
  { title: 'KeyView' },
);

export const KeyUsageSchema = Type.Object(
  {
    today: Type.Integer({ description: 'requests served since 00:00 UTC' }),
    this_minute: Type.Integer({ description: 'requests counted in the current clock minute' }),
    last_hour: Type.Integer({
      description: 'requests in the last 60 minutes (estimated from hourly counts)',
    }),
  },
  { title: 'KeyUsage' },
);

export const KeyWithUsageSchema = Type.Composite([KeyViewSchema, Type.Object({ usage: KeyUsageSchema })], {
  title: 'KeyWithUsage',
});

export const KeyCreatedSchema = Type.Composite(
  [
    KeyViewSchema,
    Type.Object({ secret: Type.String({ description: 'the key; shown in this answer only' }) }),
  ],
  { title: 'KeyCreated' },
);

export const UsageRowSchema = Type.Object(
  {
    key_id: Type.String(),
    hour: Type.String({ description: 'UTC hour, YYYY-MM-DDTHH' }),
    count: Type.Integer(),
  },
  { title: 'UsageRow' },
);

export const CoverageRowSchema = Type.Object(
  {
    dataset: Type.String(),
    endpoint: Type.String(),
    rows: Type.Integer(),
    first_date: nullable(Type.String({ format: 'date' })),
    last_date: nullable(Type.String({ format: 'date' })),
    last_batch_id: nullable(Type.String()),
    last_batch_at: nullable(Type.String({ format: 'date-time' })),
  },
  { title: 'CoverageRow' },
);

export const DatasetInfoSchema = Type.Object(
  {
    name: Type.String(),
    endpoint: Type.String(),
    layer: Type.String(),
    description: Type.String(),
  },
  { title: 'DatasetInfo' },
);

/** Every admin answer: `{code: 0, message: "ok", data}`. */
export function adminAnswerSchema(data: TSchema): TObject {
  return Type.Object({ code: Type.Literal(0), message: Type.String(), data });
}
