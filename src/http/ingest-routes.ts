import type { FastifyInstance } from 'fastify';
import type { BatchIngest } from '../ingest/ingest-service.js';
import type { IngestMemoryBudget, IngestReservation } from '../access/budgets.js';
import { answerOf } from '../model/batch-registry.js';
import { readIngestBody } from './ingest-body.js';
import { success } from './envelope.js';
import type { Catalog } from '../catalog/catalog.js';
import { BatchStatusSchema, batchRequestSchemas } from '../contract/batch.js';
import { BATCH_ID, json, type ApiResponse } from './api-operations.js';
import { registerRoutes, route, type Route } from './route-declaration.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The batch body's share of MDS_INGEST_MEMORY_BUDGET, held until the batch is answered. */
    ingestMemory?: IngestReservation;
  }
}

/**
 * Spec 4.4: push a batch, look a batch up. Both need UP-API-KEY. `readToken`: the store's
 * read-your-writes token, sent as MDS-Read-After with every batch answer when there is one.
 */
export function registerIngestRoutes(
  app: FastifyInstance,
  catalog: Catalog,
  ingest: BatchIngest,
  opts: { bodyLimit: number; memory: IngestMemoryBudget; readToken: () => Promise<string | null> },
): void {
  // In the ingest plugin's scope: the batch body is read as bytes (ingest-body.ts).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (req, payload, done) => {
    const memory = opts.memory.reservation();
    req.ingestMemory = memory;
    readIngestBody(req, payload, opts.bodyLimit, memory).then(
      (bytes) => done(null, bytes),
      (err: Error) => {
        memory.release();
        done(err, undefined);
      },
    );
  });
  // Whatever happened to the request, its body's memory is given back with the answer.
  app.addHook('onResponse', (req, _reply, done) => {
    req.ingestMemory?.release();
    done();
  });
  registerRoutes(app, ingestRoutes(catalog), { ingest, readToken: opts.readToken });
}

interface IngestRouteContext {
  ingest: BatchIngest;
  readToken: () => Promise<string | null>;
}

const batchAnswer = (description: string): ApiResponse => ({
  description,
  content: json(BatchStatusSchema),
});

/** Spec 4.4's two routes, declared with their documentation (the body schema per dataset). */
export function ingestRoutes(catalog: Catalog): Route<IngestRouteContext>[] {
  return [
    route({
      method: 'post',
      url: '/api/v1/upstream/ingest/batches',
      operationId: 'ingest_batch',
      tags: ['ingest'],
      summary: 'Push a batch (idempotent upsert, incremental or full snapshot)',
      description:
        'Spec 4.4. Checked in this order: the key (401), the body shape and meta (400 / 4001 naming ' +
        'the field), the checksum (422 / 4220), the batch_id registry (duplicate, 409), then each ' +
        'record. The body is one of the per-dataset shapes below, told apart by `meta.dataset`; a ' +
        'record that does not match its dataset is rejected on its own (207 / 2070) and the rest of ' +
        'the batch proceeds. Request bodies may be sent with Content-Encoding gzip or deflate (415 / 4151 ' +
        'otherwise; MDS_BODY_LIMIT counts the decompressed bytes) and must be UTF-8 (400 / 4002). ' +
        'checksum.sha256: the SHA-256 of the records value exactly as sent, or of its JCS or compact form.',
      auth: 'ingest',
      // anyOf, not oneOf: the shapes differ only by meta.dataset's value, so a validator cannot
      // prove them exclusive (Redocly: 595 warnings); the service tells them apart by it.
      body: { anyOf: batchRequestSchemas(catalog) },
      responses: {
        200: batchAnswer('every record processed (status "accepted"), or a repeat (status "duplicate")'),
        207: batchAnswer('some records rejected: status "partial", code 2070, see errors'),
        422: batchAnswer('every record rejected: status "rejected", code 4221 (the batch is recorded)'),
      },
      errors: [4001, 4002, 4090, 4091, 4130, 4150, 4151, 4220],
      handle:
        ({ ingest, readToken }: IngestRouteContext) =>
        async (req, reply) => {
          try {
            const answer = answerOf(await ingest.ingestBytes(req.body as Buffer));
            // Read after the batch committed: a query presenting it sees the batch (read-needs.ts). A
            // primary gone since the commit leaves the answer without one rather than failing it.
            const token = await readToken().catch(() => null);
            if (token !== null) reply.header('MDS-Read-After', token);
            return reply.code(answer.http).send(answer.body);
          } finally {
            // Processed (or failed): the bytes and their parse are gone from this process.
            req.ingestMemory?.release();
          }
        },
    }),
    route({
      method: 'get',
      url: '/api/v1/upstream/ingest/batches/:batch_id',
      operationId: 'ingest_batch_status',
      tags: ['ingest'],
      summary: 'Batch status record',
      description: 'Spec 2.4: the status record of a processed batch, kept at least 90 days.',
      auth: 'ingest',
      params: { batch_id: BATCH_ID },
      responses: { 200: batchAnswer('the batch status record') },
      errors: [4001, 4040],
      handle:
        ({ ingest }: IngestRouteContext) =>
        async (req) =>
          success(await ingest.status(req.params.batch_id)),
    }),
  ];
}
