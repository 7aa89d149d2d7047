import { Type, type Static, type TObject, type TSchema, type TUnsafe } from '@sinclair/typebox';

/**
 * The query envelope (spec 2.1, decisions.md "Query") and the error bodies of every interface.
 * One literal each: the query routes serialise with them, the OpenAPI document publishes them.
 */

/**
 * A nullable value as a type list (`["string", "null"]`), as the rows' fields are: the response
 * serialiser writes it with a type check, where a `Union` (anyOf) had it run a schema validator
 * per value, compiled on the route's first answer (about 15 ms of a quality report's first
 * request).
 */
export function nullable<T extends TSchema>(s: T): TUnsafe<Static<T> | null> {
  const { type, ...rest } = s as unknown as { type: string } & Record<string, unknown>;
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

/**
 * `meta.adjust` of an adjusted page, declared once: query/adjust-meta.ts builds it and the
 * TypeScript client reads it as `AdjustMeta`.
 */
export const AdjustMetaSchema = Type.Object(
  {
    method: Type.Unsafe<'qfq' | 'hfq'>({ type: 'string', enum: ['qfq', 'hfq'] }),
    anchor: nullable(
      Type.String({
        description: "adjust_anchor as given (a date, or end); null: each code's latest factor date",
      }),
    ),
    codes_without_factors: Type.Array(Type.String(), {
      description: 'codes on this page returned as stored (they have no factors)',
    }),
    factors: Type.Array(
      Type.Object({
        code: Type.String(),
        source: nullable(Type.String({ description: "the bars' source" })),
        factor_source: nullable(Type.String({ description: "the factors' source used; null: none" })),
        anchor: nullable(
          Type.String({
            format: 'date',
            description: 'qfq: the anchor date used (pass it as adjust_anchor to reproduce); null: hfq',
          }),
        ),
      }),
      { description: 'per code and bar source on this page: what adjusted its bars' },
    ),
  },
  { description: 'adjusted pages only (adjust=qfq|hfq)' },
);

export type AdjustMeta = Static<typeof AdjustMetaSchema>;
/** What adjusted a code's bars of one source: the factors' source, and the qfq anchor date (null: hfq). */
export type AdjustUsed = AdjustMeta['factors'][number];

/** `meta.latest_on` of a cross-section (query/latest-on.ts builds it; docs/universes.md). */
export const LatestOnMetaSchema = Type.Object(
  {
    date: Type.String({ format: 'date', description: 'latest_on as given' }),
    calendar: Type.String({ description: 'the exchange whose stored calendar stale_days count by' }),
    max_stale_days: nullable(Type.Integer()),
    stale_since: nullable(
      Type.String({ format: 'date', description: 'max_stale_days: the earliest date kept; null: no bound' }),
    ),
    left_out: Type.Integer({ description: 'rows left out as staler than max_stale_days' }),
    warnings: Type.Array(Type.String(), { description: 'what could not be judged, in words' }),
  },
  { description: 'latest_on answers only' },
);

export type LatestOnMeta = Static<typeof LatestOnMetaSchema>;

export const PageMetaSchema = Type.Object(
  {
    total: Type.Integer({ description: 'total matching rows, ignoring pagination' }),
    limit: Type.Integer({ description: 'page size applied (1..1000)' }),
    offset: Type.Integer(),
    has_more: Type.Boolean({ description: 'offset + data.length < total' }),
    next_cursor: Type.Optional(
      nullable(
        Type.String({
          description: 'opaque keyset cursor of the next page (pass as cursor=); null on the last page',
        }),
      ),
    ),
    adjust: Type.Optional(AdjustMetaSchema),
    before_history: Type.Optional(
      Type.Object(
        {
          first_change: nullable(
            Type.String({
              format: 'date-time',
              description: "when the dataset's first change became known; null: it has none yet",
            }),
          ),
          message: Type.String(),
        },
        {
          description:
            "as_of before the dataset's first change: the service holds no state of it then, so the answer is empty",
        },
      ),
    ),
    several_sources: Type.Optional(
      Type.Object(
        {
          sources: Type.Array(Type.String(), { description: 'the sources of the rows on this page' }),
          message: Type.String(),
        },
        {
          description:
            'this page holds rows of several sources for one key (code and date): pass source= for one source, source_priority= for one row per key',
        },
      ),
    ),
    latest_on: Type.Optional(LatestOnMetaSchema),
  },
  { title: 'PageMeta' },
);

/** A query page's `meta` as the query routes write it (its cursor always there, null on the last page). */
export type PageMeta = Omit<Static<typeof PageMetaSchema>, 'next_cursor'> & { next_cursor: string | null };

/** The envelope around a page of rows; `meta` adds what an answer says beyond its page. */
export function envelopeSchema(row: TSchema, meta?: TObject): TObject {
  return Type.Object({
    code: Type.Integer({ description: '0 on success' }),
    message: Type.String(),
    data: Type.Array(row),
    meta: meta ? Type.Composite([PageMetaSchema, meta]) : PageMetaSchema,
  });
}

/** Fields an error may add to name what was wrong. */
const errorDetails = {
  field: Type.Optional(Type.String({ description: 'the request field at fault (ingest: meta.batch_id, …)' })),
  parameter: Type.Optional(Type.String({ description: 'the query parameter at fault' })),
  allowed: Type.Optional(Type.Array(Type.String(), { description: 'the values or names allowed there' })),
  horizon: Type.Optional(
    Type.String({ format: 'date-time', description: '4005: the revision retention horizon' }),
  ),
  conflicts: Type.Optional(
    Type.Array(Type.Record(Type.String(), Type.Unknown()), {
      description: '4092: up to 100 keys a later batch changed',
    }),
  ),
  conflict_count: Type.Optional(Type.Integer({ description: '4092: how many keys a later batch changed' })),
};

/** An error of the ingest, admin and operations interfaces. */
export const ErrorSchema = Type.Object(
  {
    code: Type.Integer({ description: 'the error code (docs/errors.md)' }),
    message: Type.String(),
    ...errorDetails,
  },
  { title: 'Error' },
);

export type ErrorBody = Static<typeof ErrorSchema>;

/** An error of a query endpoint: the envelope with no rows (decisions.md "Query"). */
export const QueryErrorSchema = Type.Object(
  {
    code: Type.Integer({ description: 'the error code (docs/errors.md)' }),
    message: Type.String(),
    data: Type.Array(Type.Unknown(), { maxItems: 0 }),
    meta: PageMetaSchema,
    ...errorDetails,
  },
  { title: 'QueryError' },
);
