import { createHash } from 'node:crypto';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { adjustOf, type Catalog, type Dataset, type Field } from '../catalog/catalog.js';
import type { QueryService } from '../query/query-service.js';
import type { MinuteQueryService } from '../query/minute-query.js';
import type { ParsedQuery } from '../query/parse.js';
import { pageMeta } from '../query/query-page.js';
import { revisionExport, revisionItem, revisionsPath } from '../query/revision-query.js';
import type { QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import { EXPORT_FORMATS, objectSource, type ExportSource, type RowChunk } from '../export/export-formats.js';
import type { ExportEncoders } from '../export/encoder-pool.js';
import { envelopeSchema } from '../contract/envelope.js';
import { rowSchema } from '../contract/rows.js';
import { revisionItemSchema } from '../contract/revisions.js';
import { ResponseCache } from './response-cache.js';
import { SUCCESS_JSON_HEAD, success } from './envelope.js';
import { exportBody } from './export-body.js';
import { notePageNeeds } from './read-needs.js';

/** What Fastify sends for a serialised object; a cached body is sent with the same type. */
const JSON_TYPE = 'application/json; charset=utf-8';

export interface QueryRouteOptions {
  /** ms an export may wait for a client that reads nothing before its connection is closed. */
  exportStallTimeoutMs: number;
  /** Where exports are encoded (off the request thread unless MDS_EXPORT_THREADS=0). */
  encoders: ExportEncoders;
  /** The intraday datasets' rows (catalog `blocks`); without it their routes answer as others. */
  minute?: MinuteQueryService;
}

/** What reads a dataset route's rows: QueryService, or MinuteQueryService for bar blocks. */
type RowReader = Pick<QueryService, 'parse' | 'page' | 'stream'> & {
  streamArrays(plan: QueryPlan): AsyncIterable<RowChunk>;
} & Partial<Pick<MinuteQueryService, 'streamColumns' | 'jsonPage'>>;

/**
 * One GET route per catalog dataset, and one for its revision trail (docs/point-in-time.md):
 * parse → plan → execute, answered in the envelope.
 */
export function registerQueryRoutes(
  app: FastifyInstance,
  catalog: Catalog,
  query: QueryService,
  opts: QueryRouteOptions,
): void {
  const cache = new ResponseCache();
  for (const d of catalog.datasets) {
    // A response schema gives fast-json-stringify serialisation of the rows (or trail items).
    const route = (
      url: string,
      item: TSchema,
      parse: (q: Record<string, unknown>) => { parsed: ParsedQuery; plan: QueryPlan },
      shape: ((r: Record<string, Value>) => unknown) | null,
      rows: RowReader = query,
    ): void => {
      const schema: FastifySchema = { response: { 200: envelopeSchema(item) } };
      app.get(url, { schema }, (req, reply) =>
        servePage(
          req,
          reply,
          d,
          query,
          cache,
          opts,
          () => parse(req.query as Record<string, unknown>),
          shape,
          rows,
        ),
      );
    };
    const rows: RowReader = (d.blocks && opts.minute) || query;
    route(d.endpoint, rowSchema(d), (q) => rows.parse(d, q), null, rows);
    // Bar blocks' revisions are the stored blocks' (catalog.ts `BarBlocks`).
    const stored = d.blocks?.stored ?? d;
    route(
      revisionsPath(stored),
      revisionItemSchema(stored),
      (q) => query.parseTrail(stored, q),
      (r) => revisionItem(stored, r),
    );
  }
}

/**
 * A page in the envelope or an export, with the ETag and the response cache: both exact, since
 * they follow the dataset's version. `item`: the shape of a trail item (null: the row itself).
 */
async function servePage(
  req: FastifyRequest,
  reply: FastifyReply,
  d: Dataset,
  query: QueryService,
  cache: ResponseCache,
  opts: QueryRouteOptions,
  parse: () => { parsed: ParsedQuery; plan: QueryPlan },
  item: ((r: Record<string, Value>) => unknown) | null,
  rows: RowReader,
): Promise<FastifyReply> {
  notePageNeeds(req, d, adjustOf(d)?.factors);
  // A polled URL is answered from the cache while its dataset's version (and an adjusted
  // answer's factors' version) is unchanged.
  const cached = cache.get(req.url);
  const seen = cached ? await query.answerVersion(d, cached.factors) : null;
  if (cached && cached.version === seen?.key) {
    reply.header('ETag', cached.etag).header('Cache-Control', cached.cacheControl ?? 'private, no-cache');
    if (req.headers['if-none-match'] === cached.etag) return reply.code(304).send();
    return reply.type(JSON_TYPE).send(cached.body);
  }
  const { parsed, plan } = parse();
  const factors = plan.bars?.adjust?.factors ?? null;
  const also = query.alsoReads(plan);
  let own = seen?.own;
  let cacheControl = 'private, no-cache';
  if (plan.asOf !== undefined) {
    const asOf = plan.asOf;
    const state = await query.state(d);
    own = state.version;
    // Every later change is known after the dataset's last one: an instant at or before it has
    // its final answer (docs/point-in-time.md); an adjusted answer needs that of its factors too.
    const settled = (s: { changedAt: string | null }): boolean => s.changedAt !== null && asOf <= s.changedAt;
    if (
      settled(state) &&
      (!factors || settled(await query.state(factors))) &&
      (await Promise.all(also.map((x) => query.state(x)))).every(settled)
    ) {
      cacheControl = 'private, max-age=31536000, immutable';
    }
  }
  const { own: version, key, factors: factorsVersion } = await query.answerVersion(d, factors, own, also);
  // Changes exactly when a batch changes the dataset or the factors of an adjusted answer (the
  // version key) or the request changes.
  const etag = `W/"${key}-${createHash('sha1').update(req.url).digest('base64url').slice(0, 16)}"`;
  reply.header('ETag', etag).header('Cache-Control', cacheControl);
  if (req.headers['if-none-match'] === etag) return reply.code(304).send();
  await query.checkSources(plan, version);
  if (parsed.format !== 'json') {
    // Before the first byte: an ambiguous factor source is a 400, not a broken export.
    await query.checkAdjust(plan);
    await query.checkUniverse(plan);
    let fields: readonly Field[] = plan.select;
    const columns = rows.streamColumns?.bind(rows);
    let source: ExportSource = {
      objects: () => rows.stream(plan),
      arrays: () => rows.streamArrays(plan),
      ...(columns ? { columns: () => columns(plan) } : {}),
    };
    if (item) {
      const trail = revisionExport(d, parsed.format, query.stream(plan));
      fields = trail.fields;
      source = objectSource(fields, trail.rows);
    }
    // Every format through exportBody: the stall timeout, and nothing read ahead of the client.
    return reply
      .type(EXPORT_FORMATS[parsed.format].contentType)
      .send(exportBody(opts.encoders.encode(parsed.format, fields, source), opts.exportStallTimeoutMs));
  }
  // Rows as their JSON where the reader writes it (bar blocks), else as it reads them.
  const page = await (rows.jsonPage ?? rows.page).call(rows, plan, version, factorsVersion);
  await query.annotate(plan, page);
  const meta = pageMeta(page);
  let json: string;
  if (page.rows.kind === 'json') {
    // Stored row JSON joined into the envelope: the same bytes the response schema produces
    // (test/query/query-row-json.test.ts compares them), without a value per field.
    json = `${SUCCESS_JSON_HEAD},"data":[${page.rows.rows.join(',')}],"meta":${JSON.stringify(meta)}}`;
  } else {
    const data = item ? page.rows.rows.map(item) : page.rows.rows;
    json = reply.serialize(success({ data, meta })) as string;
  }
  // The cache revalidates by the dataset's and the factors' versions only: universe= and latest_on pages are not kept.
  if (also.length > 0 || !cache.admit(req.url, key)) return reply.type(JSON_TYPE).send(json);
  const body = Buffer.from(json);
  cache.set(req.url, { version: key, factors, etag, body, cacheControl });
  return reply.type(JSON_TYPE).send(body);
}
