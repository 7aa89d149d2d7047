import { Type } from '@sinclair/typebox';
import { envelopeSchema, nullable } from './envelope.js';

/** `GET /api/v1/universe`: one row per code there on the day (query/universe.ts, docs/universes.md). */
export const UniverseRowSchema = Type.Object(
  {
    code: Type.String(),
    name: nullable(Type.String({ description: 'the name the code had on the day' })),
    exchange: nullable(Type.String({ description: 'SH, SZ or BJ' })),
    board: nullable(Type.String({ description: 'main, star, chinext or bse' })),
    list_date: nullable(Type.String({ format: 'date' })),
    delist_date: nullable(Type.String({ format: 'date', description: 'null: never delisted' })),
    list_status: nullable(Type.String({ description: 'today: L listed, D delisted, P listing suspended' })),
    is_st: nullable(Type.Boolean({ description: 'its name on the day began ST or *ST; null: no name span' })),
    index_code: nullable(Type.String({ description: 'index= as given (normalized); null without it' })),
    in_date: nullable(
      Type.String({ format: 'date', description: 'first day of the membership interval covering the day' }),
    ),
    weight: nullable(
      Type.Number({ description: 'percent, from the last constituents snapshot on or before the day' }),
    ),
  },
  { title: 'UniverseRow' },
);

/** Rows of a universe page at most (and by default): a day's universe in a few pages. */
export const UNIVERSE_PAGE = 1000;

const DATE = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$';

export const UniverseQuerySchema = Type.Object({
  date: Type.String({ pattern: DATE, description: 'the day (YYYY-MM-DD)' }),
  index: Type.Optional(
    Type.String({ minLength: 1, description: 'only members of this index on the day (000300, 000300.SH)' }),
  ),
  exchange: Type.Optional(Type.String({ enum: ['SH', 'SZ', 'BJ'], description: 'only this exchange' })),
  board: Type.Optional(
    Type.String({ enum: ['main', 'star', 'chinext', 'bse'], description: 'only this board' }),
  ),
  list_status: Type.Optional(
    Type.String({
      enum: ['L', 'D', 'P'],
      description: "only codes of this listing status today (stock_basic's)",
    }),
  ),
  include_st: Type.Optional(
    Type.String({
      enum: ['true', 'false'],
      default: 'true',
      description: 'false: leave out codes that were ST or *ST on the day',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: UNIVERSE_PAGE,
      default: UNIVERSE_PAGE,
      description: 'rows per page',
    }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  as_of: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'point in time: the universe as the stored data gave it at that instant (docs/point-in-time.md)',
    }),
  ),
});

const codes = (description: string) => Type.Array(Type.String(), { description });

export const UniverseMetaSchema = Type.Object({
  date: Type.String({ format: 'date' }),
  index: nullable(Type.String()),
  membership: nullable(
    Type.Unsafe<'members' | 'snapshots' | 'none'>({
      type: 'string',
      // null too: an enum holds every value allowed, the type list's null included.
      enum: ['members', 'snapshots', 'none', null],
      description:
        'members: index_members intervals; snapshots: the last index_constituents snapshot on or before the day; none: neither is stored',
    }),
  ),
  snapshot_date: nullable(Type.String({ format: 'date', description: 'the constituents snapshot used' })),
  calendar: Type.Unsafe<'open' | 'closed' | 'outside'>({
    type: 'string',
    enum: ['open', 'closed', 'outside'],
    description: 'the day in the stored A-share calendars: open, closed, or not in them',
  }),
  no_basic: codes('members without a stock_basic row (listing fields null)'),
  no_name: codes('codes without a stock_names span covering the day (is_st null)'),
  no_weight: codes('members absent from the weight snapshot (weight null)'),
  warnings: Type.Array(Type.String(), { description: 'what could not be judged, in words' }),
});

export const UniverseAnswerSchema = envelopeSchema(UniverseRowSchema, UniverseMetaSchema);
