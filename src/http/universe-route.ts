import { Type, type Static } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { UniverseAnswerSchema } from '../contract/universe.js';
import { MAX_LIMIT } from '../query/query-params.js';
import { UniverseService } from '../query/universe.js';
import { json } from './api-operations.js';
import { success } from './envelope.js';
import { route } from './route-declaration.js';

const DATE = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$';

const UniverseQuerySchema = Type.Object({
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
    Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: MAX_LIMIT, description: 'rows per page' }),
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

const PATH = '/api/v1/universe';

/** GET /api/v1/universe: the codes there on a day (docs/universes.md). */
export const UNIVERSE_ROUTE = route<typeof PATH, Services, typeof UniverseQuerySchema>({
  method: 'get',
  url: PATH,
  operationId: 'universe',
  tags: ['reference'],
  summary: 'Who was there: the codes listed (and index members) on a day, as of that day',
  description:
    'One row per A-share code listed on `date` (from list_date to the day before delist_date), ' +
    'delisted-since codes included, with the name it had that day, is_st that day, its listing ' +
    'dates and, with index=, its membership (index_members intervals, else the last ' +
    'index_constituents snapshot on or before the day) and weight (from that snapshot). ' +
    'meta says what could not be judged (docs/universes.md).',
  auth: 'query',
  querystring: UniverseQuerySchema,
  responses: { 200: { description: 'the universe on the day', content: json(UniverseAnswerSchema) } },
  errors: [4001, 4005],
  handle: (services) => {
    const universe = new UniverseService(services.catalog, services.store, services.query);
    return async (req) => {
      const q = req.query as Static<typeof UniverseQuerySchema>;
      const { rows, meta } = await universe.universe(
        universe.read({ ...q, include_st: q.include_st !== 'false' }),
      );
      const limit = q.limit ?? MAX_LIMIT;
      const offset = q.offset ?? 0;
      const data = rows.slice(offset, offset + limit);
      return success({
        data,
        meta: {
          total: rows.length,
          limit,
          offset,
          has_more: offset + data.length < rows.length,
          next_cursor: null,
          ...meta,
        },
      });
    };
  },
});
