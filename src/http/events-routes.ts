import type { FastifyInstance } from 'fastify';
import type { Catalog } from '../catalog/catalog.js';
import { invalid } from '../errors.js';
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

export function registerEventsRoutes(
  app: FastifyInstance,
  catalog: Catalog,
  events: EventEmitter,
  opts: EventsOptions = {},
): void {
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const maxBuffered = opts.maxBufferedBytes ?? 4 * 1024 * 1024;
  const open = new Set<() => void>();
  let seq = 0;

  // Streams never go idle, so the server's close would wait for them: end them first.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get<{ Querystring: Record<string, unknown> }>(
    '/api/v1/upstream/ingest/events',
    { schema: { hide: true } },
    async (req, reply) => {
      const q = req.query;
      for (const k of Object.keys(q)) {
        if (k !== 'dataset') throw invalid(`unknown parameter "${k}"; allowed: dataset`, { parameter: k });
      }
      let only: Set<string> | null = null;
      if (q.dataset !== undefined) {
        const names = String(q.dataset).split(',');
        for (const n of names) {
          if (!catalog.byName.has(n)) throw invalid(`unknown dataset "${n}"`, { parameter: 'dataset' });
        }
        only = new Set(names);
      }

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
        if (res.writableLength > maxBuffered) {
          end();
          return;
        }
        res.write(chunk);
      };
      const onBatch = (rec: BatchRecord): void => {
        if (only && !only.has(rec.dataset)) return;
        send(`id: ${++seq}\nevent: batch\ndata: ${JSON.stringify(batchEvent(rec))}\n\n`);
      };
      const onRevert = (ev: RevertEvent): void => {
        if (only && !only.has(ev.dataset)) return;
        send(`id: ${++seq}\nevent: revert\ndata: ${JSON.stringify(ev)}\n\n`);
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
        opts.gauge?.dec();
        if (!res.writableEnded) res.end();
      }
      events.on('batch', onBatch);
      events.on('revert', onRevert);
      open.add(end);
      opts.gauge?.inc();
      req.raw.on('close', end);
      res.on('close', end);
      res.on('error', end);
    },
  );
}
