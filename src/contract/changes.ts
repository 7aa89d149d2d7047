import { Type } from '@sinclair/typebox';
import { ChangeEventSchema } from '../model/changes.js';
import { nullable } from './envelope.js';

/** GET /api/v1/changes as JSON: a page of the change feed (docs/changes.md). */
export const ChangesAnswerSchema = Type.Object(
  {
    code: Type.Integer({ description: '0 on success' }),
    message: Type.String(),
    data: Type.Array(ChangeEventSchema),
    meta: Type.Object({
      limit: Type.Integer(),
      since: nullable(Type.Integer({ description: 'since as given; null: from the oldest event kept' })),
      next_since: Type.Integer({
        description: 'pass as since= for the next page (the latest id scanned when has_more is false)',
      }),
      latest_id: Type.Integer({ description: 'the latest event id of the service (0: none yet)' }),
      oldest_id: nullable(Type.Integer({ description: 'the oldest event kept (null: none)' })),
      has_more: Type.Boolean(),
    }),
  },
  { title: 'ChangesAnswer' },
);
