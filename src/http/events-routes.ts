import type { FastifyInstance } from 'fastify';
import type { Catalog } from '../catalog/catalog.js';
import { Type, type TObject, type TOptional, type TString } from '@sinclair/typebox';
import { BatchEventSchema } from '../contract/batch.js';
import { registerRoutes, route, type Route } from './route-declaration.js';
import type { EventEmitter } from 'node:events';
import type { RevertEvent } from '../ingest/ingest-service.js';
import type { BatchRecord } from '../model/batch.js';
import type { Gauge } from 'prom-client';

/**
 * GET /api/v1/upstream/ingest/events: a server-sent-event stream of the batches this instance
 * processes (`event: batch`; every cluster worker's, Services.batchEvents), so downstream jobs react to new data instead of polling. Needs
 * an ingest key. Comment lines every `heartbeatMs` keep proxies from closing an idle stream
 * and reveal a dead client; a closed connection removes its listener at once.
 */

export interface EventsOptions {
  heartbeatMs?: number;
  /** A client that stops reading is dropped once this many bytes wait in its buffer. */
  maxBufferedBytes?: number;
  gauge?: Gauge;
}

/** What an event carries: the batch status record without its per-record errors. */
export function batchEvent(rec: BatchRecord): Record<string, unknown> {
  const { errors, ...rest } = rec;
  return { ...rest, error_count: errors.length };
}

/** What the stream's handler shares with its instance: the open streams, the event ids. */
interface EventsContext {
  events: EventEmitter;
  heartbeatMs: number;
  maxBufferedBytes: number;
  gauge: Gauge | undefined;
  open: Set<() => void>;
  nextId: () => number;
}

const PATH = '/api/v1/upstream/ingest/events';

/** The stream's route: `dataset` takes the catalog's names, checked before the stream opens. */
export function eventsRoute(catalog: Catalog): Route<EventsContext> {
  const names = catalog.datasets.map((d) => d.name);
  return route<typeof PATH, EventsContext, TObject<{ dataset: TOptional<TString> }>>({
    method: 'get',
    url: PATH,
    operationId: 'ingest_events',
    tags: ['ingest'],
    summary: 'Server-sent events: one `batch` event per processed batch, one `revert` per revert',
    description:
      'A text/event-stream of the batches this instance processes: `event: batch` with the batch ' +
      'status record (without its per-record errors, with error_count) as `data`, whose schema is ' +
      'x-mds-event-schema; `event: revert` with batch_id, dataset, reverted_at and the counts ' +
      'restored, updated and deleted. Comment lines keep the stream alive.',
    auth: 'ingest',
    querystring: Type.Object({
      dataset: Type.Optional(
        Type.String({
          description: `only batches of these datasets (comma-separated): ${names.join(', ')}`,
          pattern: `^(${names.join('|')})(,(${names.join('|')}))*$`,
        }),
      ),
    }),
    responses: {
      200: { description: 'the event stream', content: { 'text/event-stream': Type.String() } },
    },
    errors: [4001],
    extensions: { 'x-mds-event-schema': BatchEventSchema },
    handle:
      ({ events, heartbeatMs, maxBufferedBytes, gauge, open, nextId }) =>
      async (req, reply) => {
        const only = req.query.dataset === undefined ? null : new Set(req.query.dataset.split(','));
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache, no-transform',
          connection: 'keep-alive',
          // nginx would otherwise buffer the stream.
          'x-accel-buffering': 'no',
        });
        res.write(`retry: 5000\n: connected; events: batch, revert\n\n`);

        let ended = false;
        const send = (chunk: string): void => {
          if (ended) return;
          if (res.writableLength > maxBufferedBytes) {
            end();
            return;
          }
          res.write(chunk);
        };
        const onBatch = (rec: BatchRecord): void => {
          if (only && !only.has(rec.dataset)) return;
          send(`id: ${nextId()}\nevent: batch\ndata: ${JSON.stringify(batchEvent(rec))}\n\n`);
        };
        const onRevert = (ev: RevertEvent): void => {
          if (only && !only.has(ev.dataset)) return;
          send(`id: ${nextId()}\nevent: revert\ndata: ${JSON.stringify(ev)}\n\n`);
        };
        const timer = setInterval(() => send(`: heartbeat ${new Date().toISOString()}\n\n`), heartbeatMs);
        timer.unref();
        function end(): void {
          if (ended) return;
          ended = true;
          clearInterval(timer);
          events.off('batch', onBatch);
          events.off('revert', onRevert);
          open.delete(end);
          gauge?.dec();
          if (!res.writableEnded) res.end();
        }
        events.on('batch', onBatch);
        events.on('revert', onRevert);
        open.add(end);
        gauge?.inc();
        req.raw.on('close', end);
        res.on('close', end);
        res.on('error', end);
      },
  });
}

export function registerEventsRoutes(
  app: FastifyInstance,
  catalog: Catalog,
  events: EventEmitter,
  opts: EventsOptions = {},
): void {
  const open = new Set<() => void>();
  let seq = 0;
  // Streams never go idle, so the server's close would wait for them: end them first.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });
  registerRoutes(app, [eventsRoute(catalog)], {
    events,
    heartbeatMs: opts.heartbeatMs ?? 15_000,
    maxBufferedBytes: opts.maxBufferedBytes ?? 4 * 1024 * 1024,
    gauge: opts.gauge,
    open,
    nextId: () => ++seq,
  });
}
