import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { invalid } from '../errors.js';
import type { KeyService } from '../access/key-service.js';
import { success } from './envelope.js';

/** At most 90 days of hourly usage in one answer. */
export const MAX_USAGE_HOURS = 24 * 90;

/**
 * Managed keys for operators and the dashboard, behind the admin token. Answers are
 * `{code: 0, message: "ok", data}`; errors 4001 (bad input) and 4041 (unknown key id).
 * The secret is in the answer to POST /admin/api/keys and nowhere else, ever.
 */
export function registerAdminKeyRoutes(app: FastifyInstance, services: Services): void {
  const keys: KeyService = services.keys;
  const ok = <T>(data: T) => success({ data });

  app.get('/admin/api/keys', async () => {
    // This instance's pending counts first, so last_used_at and usage are current.
    await services.usage.flush();
    const list = await keys.list();
    const usage = await keys.usage(
      list.map((k) => k.id),
      services.limiter,
      services.usage,
    );
    return ok(
      list.map((k) => ({ ...k, usage: usage.get(k.id) ?? { today: 0, this_minute: 0, last_hour: 0 } })),
    );
  });

  app.get<{ Params: { id: string } }>('/admin/api/keys/:id', async (req) => {
    await services.usage.flush();
    const key = await keys.get(req.params.id);
    const usage = await keys.usage([key.id], services.limiter, services.usage);
    return ok({ ...key, usage: usage.get(key.id) });
  });

  app.post('/admin/api/keys', async (req, reply) => {
    const { key, secret } = await keys.create((req.body ?? {}) as Record<string, unknown>);
    req.log.info({ keyId: key.id, scope: key.scope }, 'key created');
    return reply.code(201).send(ok({ ...key, secret }));
  });

  app.patch<{ Params: { id: string } }>('/admin/api/keys/:id', async (req) => {
    const key = await keys.update(req.params.id, req.body ?? {});
    req.log.info({ keyId: key.id }, 'key updated');
    return ok(key);
  });

  app.post<{ Params: { id: string } }>('/admin/api/keys/:id/revoke', async (req) => {
    const key = await keys.revoke(req.params.id);
    req.log.info({ keyId: key.id }, 'key revoked');
    return ok(key);
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/admin/api/usage', async (req) => {
    const { hours: raw, ...rest } = req.query;
    const extra = Object.keys(rest);
    if (extra.length > 0) throw invalid(`unknown query parameter(s) ${extra.join(', ')}; allowed: hours`);
    const hours = raw === undefined ? 24 : Number(raw);
    if (!/^\d+$/.test(raw ?? '24') || hours < 1 || hours > MAX_USAGE_HOURS)
      throw invalid(`hours must be an integer from 1 to ${MAX_USAGE_HOURS}`);
    return ok(await keys.usageByHour(hours, services.usage));
  });
}
