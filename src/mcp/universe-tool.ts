import { UniverseMetaSchema, UniverseQuerySchema } from '../contract/universe.js';
import { invalid } from '../errors.js';
import type { UniverseService } from '../query/universe.js';

/**
 * The `universe` tool: GET /api/v1/universe for an assistant (docs/universes.md), its arguments
 * the route's query parameters (`include_st` a boolean), its page the tool's own (≤ 200 codes).
 */

export const UNIVERSE_ROWS = 200;

// tool-schemas.ts lists this tool: its types are restated here, so the two files import one way.
type JsonSchema = { [k: string]: unknown };

/** The route's parameter schemas as plain JSON Schema, less what the tool words differently. */
function routeParams(): Record<string, JsonSchema> {
  const plain = JSON.parse(JSON.stringify(UniverseQuerySchema.properties)) as Record<string, JsonSchema>;
  const { include_st: _st, limit: _limit, ...rest } = plain;
  return rest;
}

export function universeToolDefinition() {
  return {
    name: 'universe' as const,
    title: 'Universe on a day',
    description:
      'Who was there on a day: every A-share code listed on `date` (delisted-since codes included), or every member of ' +
      '`index` on it, with the name and ST state it had that day, its listing dates and index weight — a survivorship-free ' +
      'cross-section. meta says how membership was judged and what could not be (codes without listing data, an index ' +
      `with neither intervals nor snapshots, a day outside the calendar). At most ${UNIVERSE_ROWS} codes per answer; ` +
      'next_offset pages on.',
    inputSchema: {
      type: 'object',
      properties: {
        ...routeParams(),
        include_st: {
          type: 'boolean',
          description: 'false: leave out codes that were ST or *ST on the day (default true)',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: UNIVERSE_ROWS,
          description: `codes in this answer, 1..${UNIVERSE_ROWS} (default ${UNIVERSE_ROWS})`,
        },
      },
      required: ['date'],
      additionalProperties: false,
    } as JsonSchema & { type: 'object' },
    outputSchema: {
      type: 'object',
      properties: {
        rows: { type: 'array', items: { type: 'object' } },
        returned: { type: 'integer' },
        total: { type: 'integer' },
        offset: { type: 'integer' },
        next_offset: { type: ['integer', 'null'] },
        meta: JSON.parse(JSON.stringify(UniverseMetaSchema)) as JsonSchema,
      },
      required: ['rows', 'returned', 'total', 'offset', 'next_offset', 'meta'],
    } as JsonSchema & { type: 'object' },
    annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true } as const,
  };
}

const optionalText = (args: Record<string, unknown>, name: string): string | undefined => {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(`${name} must be a string`, { parameter: name });
  return v;
};

/** One page of the universe, summarised for an assistant. */
export async function universeTool(
  universe: Pick<UniverseService, 'read' | 'universe'>,
  args: Record<string, unknown>,
): Promise<{ summary: string; rows: unknown[]; structured: Record<string, unknown> }> {
  const date = optionalText(args, 'date');
  if (date === undefined) throw invalid('date is required', { parameter: 'date' });
  const text = (name: string): Record<string, string> => {
    const v = optionalText(args, name);
    return v === undefined ? {} : { [name]: v };
  };
  const q = universe.read({
    date,
    ...text('index'),
    ...text('exchange'),
    ...text('board'),
    ...text('list_status'),
    ...text('as_of'),
    include_st: args.include_st !== false,
  });
  const { rows, meta } = await universe.universe(q);
  const limit = typeof args.limit === 'number' ? args.limit : UNIVERSE_ROWS;
  const offset = typeof args.offset === 'number' ? args.offset : 0;
  const page = rows.slice(offset, offset + limit);
  const next = offset + page.length < rows.length ? offset + page.length : null;
  const who = q.index === null ? 'listed codes' : `members of ${q.index} (membership: ${meta.membership})`;
  const summary =
    `${rows.length} ${who} on ${q.date}; codes ${offset + 1}–${offset + page.length} returned. ` +
    (meta.warnings.length > 0 ? `Not judged: ${meta.warnings.join('; ')}. ` : '') +
    (next !== null ? `More: call again with offset=${next}.` : 'This is the last page.');
  return {
    summary,
    rows: page,
    structured: { rows: page, returned: page.length, total: rows.length, offset, next_offset: next, meta },
  };
}
