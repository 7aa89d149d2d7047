import type { FastifyInstance } from 'fastify';
import type { QualityService } from '../query/quality-service.js';
import { QualityAnswerSchema } from '../contract/quality.js';
import { success } from './envelope.js';

/**
 * GET {prefix}/quality/:dataset: the data-quality report in the envelope. Registered by the
 * query plugin (query key) and by the admin plugin for the dashboard (admin token).
 */
export function registerQualityRoute(app: FastifyInstance, path: string, quality: QualityService): void {
  app.get(path, { schema: { response: { 200: QualityAnswerSchema } } }, async (req) => {
    const { dataset } = req.params as { dataset: string };
    const page = await quality.report(dataset, req.query as Record<string, unknown>);
    return success({
      data: page.rows,
      meta: {
        total: page.total,
        limit: page.limit,
        offset: page.offset,
        has_more: page.offset + page.rows.length < page.total,
        next_cursor: null,
        exchange: page.exchange,
        calendar: page.calendar,
        jump_pct: page.jumpPct,
      },
    });
  });
}
