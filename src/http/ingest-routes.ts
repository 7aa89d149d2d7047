import type { FastifyInstance } from 'fastify';
import type { BatchIngest } from '../ingest/ingest-service.js';
import { answerOf } from '../ingest/batch-registry.js';
import { readIngestBody } from './ingest-body.js';

/** Spec 4.4: push a batch, look a batch up. Both need UP-API-KEY. */
export function registerIngestRoutes(app: FastifyInstance, ingest: BatchIngest, bodyLimit: number): void {
  // In the ingest plugin's scope: the batch body is read as bytes (ingest-body.ts).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (req, payload, done) => {
    readIngestBody(req, payload, bodyLimit).then(
      (bytes) => done(null, bytes),
      (err: Error) => done(err, undefined),
    );
  });
  app.post('/api/v1/upstream/ingest/batches', async (req, reply) => {
    const answer = answerOf(await ingest.ingestBytes(req.body as Buffer));
    return reply.code(answer.http).send(answer.body);
  });

  app.get<{ Params: { batch_id: string } }>('/api/v1/upstream/ingest/batches/:batch_id', async (req) => {
    const rec = await ingest.status(req.params.batch_id);
    return { code: 0, message: 'ok', ...rec };
  });
}
