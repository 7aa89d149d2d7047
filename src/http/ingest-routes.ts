import type { FastifyInstance } from 'fastify';
import type { IngestService } from '../ingest/ingest-service.js';
import type { BatchRecord } from '../storage/store.js';
import { PARTIAL_CODE } from '../errors.js';
import { readIngestBody } from './ingest-body.js';

const ANSWER: Record<BatchRecord['status'], { http: number; code: number; message: string }> = {
  accepted: { http: 200, code: 0, message: 'accepted' },
  partial: { http: 207, code: PARTIAL_CODE, message: 'partial success, some records rejected' },
  rejected: { http: 422, code: 4221, message: 'every record was rejected' },
};

/** Spec 4.4: push a batch, look a batch up. Both need UP-API-KEY. */
export function registerIngestRoutes(app: FastifyInstance, ingest: IngestService, bodyLimit: number): void {
  // In the ingest plugin's scope: the batch body is read as bytes (ingest-body.ts).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (req, payload, done) => {
    readIngestBody(req, payload, bodyLimit).then(
      (bytes) => done(null, bytes),
      (err: Error) => done(err, undefined),
    );
  });
  app.post('/api/v1/upstream/ingest/batches', async (req, reply) => {
    const outcome = await ingest.ingestBytes(req.body as Buffer);
    if (outcome.kind === 'duplicate') {
      return reply
        .code(200)
        .send({ code: 0, message: 'batch already processed', ...outcome.record, status: 'duplicate' });
    }
    const a = ANSWER[outcome.record.status];
    return reply.code(a.http).send({ code: a.code, message: a.message, ...outcome.record });
  });

  app.get<{ Params: { batch_id: string } }>('/api/v1/upstream/ingest/batches/:batch_id', async (req) => {
    const rec = await ingest.status(req.params.batch_id);
    return { code: 0, message: 'ok', ...rec };
  });
}
