import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Catalog } from '../catalog/catalog.js';
import { ChangesAnswerSchema } from '../contract/changes.js';
import { invalid } from '../errors.js';
import { ChangeEventSchema, type ChangeEvent } from '../model/changes.js';
import type { ChangeFeed } from '../query/change-feed.js';
import { json } from './api-operations.js';
import { success } from './envelope.js';
import { registerRoutes, route, type Route } from './route-declaration.js';

/**
 * GET /api/v1/changes (query key): the change feed (docs/changes.md). As JSON, a page of the
 * events after `since`; with `Accept: text/event-stream`, the events after `since` or
 * `Last-Event-ID`, then every new one as it commits. A stream counts as one request of its key
 * and holds one of its MDS_CHANGES_STREAMS_PER_KEY places until it ends; a client that leaves
 * more than MDS_CHANGES_BUFFER_BYTES unread is disconnected (it resumes with Last-Event-ID).
 */

export interface ChangesContext {
  feed: ChangeFeed;
  heartbeatMs: number;
  maxBufferedBytes: number;
  /** Open streams' ends, so that a closing server ends them first. */
  open: Set<() => void>;
}

const PATH = '/api/v1/changes';
/** Events read per page while a stream replays. */
const REPLAY_PAGE = 200;

const querystring = (names: readonly string[]) =>
  Type.Object({
    datasets: Type.Optional(
      Type.String({
        description: `only these datasets' events (comma-separated): ${names.join(', ')}`,
        pattern: `^(${names.join('|')})(,(${names.join('|')}))*$`,
      }),
    ),
    since: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'the events after this id (the last one seen); absent: from the oldest kept (a stream: from now on)',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'events per page (JSON)' }),
    ),
  });

type Query = Static<ReturnType<typeof querystring>>;

export function changesRoute(catalog: Catalog): Route<ChangesContext> {
  const names = catalog.datasets.map((d) => d.name);
  return route<typeof PATH, ChangesContext, ReturnType<typeof querystring>>({
    method: 'get',
    url: PATH,
    operationId: 'changes',
    tags: ['query'],
    summary: 'The change feed: every committed change of the datasets, oldest first (JSON or SSE)',
    description:
      'Each event names a change of a dataset: its kind (batch, revert, snapshot_prune, factor_change, ' +
      'calendar_change, vintage), batch_id, known instant, the dataset version after it, counts by op, ' +
      'the codes and date span it touched. Ids increase in commit order across every dataset and are ' +
      'never reused. With Accept: text/event-stream the answer is a stream: `event: change` with the ' +
      'event as data and its id as the SSE id, replayed from since= or Last-Event-ID, then live; comment ' +
      'lines as heartbeats. A since older than the events kept is 410 / 4100.',
    auth: 'query',
    querystring: querystring(names),
    responses: {
      200: {
        description: 'a page of events, or the event stream',
        content: { ...json(ChangesAnswerSchema), 'text/event-stream': Type.String() },
      },
    },
    errors: [4001, 4100, 4293],
    extensions: { 'x-mds-event-schema': ChangeEventSchema },
    handle: (ctx) => async (req, reply) => {
      const datasets = req.query.datasets === undefined ? null : [...new Set(req.query.datasets.split(','))];
      if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
        const since = req.query.since ?? null;
        const limit = req.query.limit ?? 100;
        const page = await ctx.feed.page(datasets, since, limit);
        return success({
          data: page.events,
          meta: {
            limit,
            since,
            next_since: page.next,
            latest_id: page.latest,
            oldest_id: page.oldest,
            has_more: page.hasMore,
          },
        });
      }
      await stream(ctx, req, reply, datasets);
      return reply;
    },
  });
}

/** `Last-Event-ID` (a reconnecting client's last id): wins over `since`, as the newer. */
function resumeId(req: FastifyRequest<{ Querystring: Query }>): number | null {
  const h = req.headers['last-event-id'];
  if (h === undefined || h === '') return req.query.since ?? null;
  const text = Array.isArray(h) ? h[0] : h;
  if (text === undefined || !/^\d{1,15}$/.test(text)) {
    throw invalid('Last-Event-ID must be an event id (a whole number)', { parameter: 'Last-Event-ID' });
  }
  return Number(text);
}

const frame = (e: ChangeEvent): string => `id: ${e.id}\nevent: change\ndata: ${JSON.stringify(e)}\n\n`;

async function stream(
  ctx: ChangesContext,
  req: FastifyRequest<{ Querystring: Query }>,
  reply: FastifyReply,
  datasets: readonly string[] | null,
): Promise<void> {
  const { feed, heartbeatMs, maxBufferedBytes, open } = ctx;
  const since = resumeId(req);
  const only = datasets ? new Set(datasets) : null;
  // Everything that can refuse the stream runs before its head is sent: a plain error answer.
  const release = feed.openStream(req.principal?.id ?? req.ip);
  let live = false;
  let pos = 0;
  let ended = false;
  const res = reply.raw;
  const send = (chunk: string): void => {
    if (ended) return;
    // A reader this far behind is cut, never buffered for: it resumes with Last-Event-ID. The
    // socket is destroyed, not ended: an end would wait, holding the buffer, for it to read.
    if (res.writableLength > maxBufferedBytes) {
      end();
      res.destroy();
      return;
    }
    res.write(chunk);
  };
  const onEvents = (events: readonly ChangeEvent[]): void => {
    if (!live) return;
    for (const e of events) {
      if (e.id <= pos || (only && !only.has(e.dataset))) continue;
      pos = e.id;
      send(frame(e));
    }
  };
  let unsubscribe: () => void = () => {};
  let timer: NodeJS.Timeout | null = null;
  function end(): void {
    if (ended) return;
    ended = true;
    if (timer) clearInterval(timer);
    unsubscribe();
    release();
    open.delete(end);
    if (!res.writableEnded) res.end();
  }
  let first;
  try {
    unsubscribe = await feed.subscribe(onEvents);
    if (feed.position < 0) throw new Error('the change feed could not be read');
    first = since === null ? null : await feed.page(datasets, since, REPLAY_PAGE);
  } catch (err) {
    unsubscribe();
    release();
    throw err;
  }
  reply.hijack();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(`retry: 5000\n: connected; events: change\n\n`);
  open.add(end);
  req.raw.on('close', end);
  res.on('close', end);
  res.on('error', end);
  timer = setInterval(() => send(`: heartbeat ${new Date().toISOString()}\n\n`), heartbeatMs);
  timer.unref();
  if (first === null) {
    pos = feed.position;
    live = true;
    return;
  }
  try {
    let page = first;
    for (;;) {
      for (const e of page.events) res.write(frame(e));
      pos = page.next;
      // Replay at the reader's pace: the next page once this one has left the buffer.
      if (res.writableNeedDrain) {
        await new Promise<void>((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
      }
      if (ended) return;
      // Caught up with what the live streams were given: from here on the shared poll's events
      // follow, checked in the same turn, so none is lost or sent twice.
      if (!page.hasMore && pos >= feed.position) break;
      page = await feed.page(datasets, pos, REPLAY_PAGE);
      if (ended) return;
    }
    live = true;
  } catch (err) {
    // Retention or the database in the middle of a replay: the client resumes from its last id.
    req.log.warn({ err }, 'change stream replay stopped');
    end();
  }
}

export function registerChangesRoutes(
  app: FastifyInstance,
  catalog: Catalog,
  ctx: Omit<ChangesContext, 'open'>,
): void {
  const open = new Set<() => void>();
  // Streams never go idle, so the server's close would wait for them: end them first.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });
  registerRoutes(app, [changesRoute(catalog)], { ...ctx, open });
}
