import type { Static } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { UNIVERSE_PAGE, UniverseAnswerSchema, UniverseQuerySchema } from '../contract/universe.js';
import { json } from './api-operations.js';
import { success } from './envelope.js';
import { route } from './route-declaration.js';

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
  handle: ({ universe }) => {
    return async (req) => {
      const q = req.query as Static<typeof UniverseQuerySchema>;
      const { rows, meta } = await universe.universe(
        universe.read({ ...q, include_st: q.include_st !== 'false' }),
      );
      const limit = q.limit ?? UNIVERSE_PAGE;
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
