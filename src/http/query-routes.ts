import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifySchema } from 'fastify';
import type { Catalog, Dataset } from '../catalog/catalog.js';
import type { QueryService } from '../query/query-service.js';
import { EXPORT_FORMATS, exportStream } from '../export/export-formats.js';
import { envelopeSchema } from '../contract/envelope.js';
import { rowSchema } from '../contract/rows.js';
import { ResponseCache } from './response-cache.js';
import { exportBody } from './export-body.js';

/** What Fastify sends for a serialised object; a cached body is sent with the same type. */
const JSON_TYPE = 'application/json; charset=utf-8';

export interface QueryRouteOptions {
  /** ms an export may wait for a client that reads nothing before its connection is closed. */
  exportStallTimeoutMs: number;
}

/** One GET route per catalog dataset: parse → plan → execute, answered in the envelope. */
export function registerQueryRoutes(
  app: FastifyInstance,
  catalog: Catalog,
  query: QueryService,
  opts: QueryRouteOptions,
): void {
  const cache = new ResponseCache();
  for (const d of catalog.datasets) registerDataset(app, d, query, cache, opts);
}

function registerDataset(
  app: FastifyInstance,
  d: Dataset,
  query: QueryService,
  cache: ResponseCache,
  opts: QueryRouteOptions,
): void {
  // A response schema gives fast-json-stringify serialisation of the rows.
  const schema: FastifySchema = { response: { 200: envelopeSchema(rowSchema(d)) } };
  app.get(d.endpoint, { schema }, async (req, reply) => {
    // A polled URL is answered from the cache while its dataset's version is unchanged.
    const cached = cache.get(req.url);
    const current = cached ? await query.version(d) : null;
    if (cached && cached.version === current) {
      reply.header('ETag', cached.etag).header('Cache-Control', 'private, no-cache');
      if (req.headers['if-none-match'] === cached.etag) return reply.code(304).send();
      return reply.type(JSON_TYPE).send(cached.body);
    }
    const { parsed, plan } = query.parse(d, req.query as Record<string, unknown>);
    const version = current ?? (await query.version(d));
    // Changes exactly when a batch changes the dataset (the version) or the request changes.
    const etag = `W/"${version}-${createHash('sha1').update(req.url).digest('base64url').slice(0, 16)}"`;
    reply.header('ETag', etag).header('Cache-Control', 'private, no-cache');
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    if (parsed.format !== 'json') {
      // Before the first byte: an ambiguous factor source is a 400, not a broken export.
      await query.checkAdjust(plan);
      // Every format through exportBody: the stall timeout, and nothing read ahead of the client.
      const body = exportStream(parsed.format, plan.select, query.stream(plan));
      return reply
        .type(EXPORT_FORMATS[parsed.format].contentType)
        .send(exportBody(body, opts.exportStallTimeoutMs));
    }
    const page = await query.page(plan, version);
    const meta = {
      total: page.total,
      limit: page.limit,
      offset: page.offset,
      has_more: page.hasMore,
      next_cursor: page.nextCursor,
      ...(page.adjust ? { adjust: page.adjust } : {}),
    };
    let json: string;
    if (page.rows.kind === 'json') {
      // Stored row JSON joined into the envelope: the same bytes the response schema produces
      // (test/query-row-json.test.ts compares them), without a value per field.
      json = `{"code":0,"message":"ok","data":[${page.rows.rows.join(',')}],"meta":${JSON.stringify(meta)}}`;
    } else {
      json = reply.serialize({ code: 0, message: 'ok', data: page.rows.rows, meta }) as string;
    }
    if (!cache.admit(req.url, version)) return reply.type(JSON_TYPE).send(json);
    const body = Buffer.from(json);
    cache.set(req.url, { version, etag, body });
    return reply.type(JSON_TYPE).send(body);
  });
}
