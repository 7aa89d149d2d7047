import type { FastifyInstance } from 'fastify';
import type { BatchIngest } from '../ingest/ingest-service.js';
import type { IngestMemoryBudget, IngestReservation } from '../access/budgets.js';
import { answerOf } from '../model/batch-registry.js';
import { readIngestBody } from './ingest-body.js';
import { success } from './envelope.js';

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
  app.post('/api/v1/upstream/ingest/batches', async (req, reply) => {
    try {
      const answer = answerOf(await ingest.ingestBytes(req.body as Buffer));
      // Read after the batch committed: a query presenting it sees the batch (read-needs.ts). A
      // primary gone since the commit leaves the answer without one rather than failing it.
      const token = await opts.readToken().catch(() => null);
      if (token !== null) reply.header('MDS-Read-After', token);
      return reply.code(answer.http).send(answer.body);
    } finally {
      // Processed (or failed): the bytes and their parse are gone from this process.
      req.ingestMemory?.release();
    }
  });

  app.get<{ Params: { batch_id: string } }>('/api/v1/upstream/ingest/batches/:batch_id', async (req) => {
    const rec = await ingest.status(req.params.batch_id);
    return success(rec);
  });
}
