import type { FastifyInstance } from 'fastify';
import type { QualityService } from '../query/quality-service.js';
import { MinuteQualityAnswerSchema, QualityAnswerSchema } from '../contract/quality.js';
import type { MinuteQualityService } from '../query/minute-quality.js';
import { MINUTE_TOLERANCE } from '../query/minute-quality.js';
import { success } from './envelope.js';

/** A report page in the envelope: offset paging (no cursor), then the report's own meta. */
function reportAnswer<R, M extends object>(
  page: { rows: R[]; total: number; limit: number; offset: number },
  meta: M,
) {
  const { rows, total, limit, offset } = page;
  return success({
    data: rows,
    meta: { total, limit, offset, has_more: offset + rows.length < total, next_cursor: null, ...meta },
  });
}

/**
 * GET {prefix}/quality/:dataset: the data-quality report in the envelope. Registered by the
 * query plugin (query key) and by the admin plugin for the dashboard (admin token).
 */
export function registerQualityRoute(app: FastifyInstance, path: string, quality: QualityService): void {
  app.get(path, { schema: { response: { 200: QualityAnswerSchema } } }, async (req) => {
    const { dataset } = req.params as { dataset: string };
    const page = await quality.report(dataset, req.query as Record<string, unknown>);
    return reportAnswer(page, {
      exchange: page.exchange,
      calendar: page.calendar,
      jump_pct: page.jumpPct,
      ...(page.calendarEnds ? { calendar_ends_before: page.calendarEnds } : {}),
    });
  });
}

/**
 * GET {prefix}/quality/<dataset> for each minute dataset (stored as bar blocks): its own report
 * and answer shape, at the path a user tries after the daily ones (a static path, so Fastify
 * prefers it to the daily report's `:dataset`).
 */
export function registerMinuteQualityRoutes(
  app: FastifyInstance,
  prefix: string,
  minute: MinuteQualityService,
): void {
  for (const d of minute.datasets()) {
    app.get(
      `${prefix}/${d.name}`,
      { schema: { response: { 200: MinuteQualityAnswerSchema } } },
      async (req) => {
        const page = await minute.report(d, req.query as Record<string, unknown>);
        return reportAnswer(page, { daily: page.daily, tolerance: MINUTE_TOLERANCE });
      },
    );
  }
}
