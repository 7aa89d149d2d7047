import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../services.js';
import {
  KeyCreateSchema,
  KeyCreatedSchema,
  KeyUpdateSchema,
  KeyViewSchema,
  KeyWithUsageSchema,
  UsageRowSchema,
} from '../contract/admin.js';
import { success } from './envelope.js';
import { adminRoute, type PathParamDoc, type Route } from './route-declaration.js';

/** At most 90 days of hourly usage in one answer. */
export const MAX_USAGE_HOURS = 24 * 90;

const KEY_ID: PathParamDoc = {
  description: 'the key id (from the list)',
  example: '0b9b7c9e-5d2a-4f8e-9a53-2f0c6d1e8b47',
};

/** A changed key's answer, the change logged with its id. */
function logged<K extends { id: string }>(req: FastifyRequest, change: string, key: K) {
  req.log.info({ keyId: key.id }, `key ${change}`);
  return success({ data: key });
}

/**
 * Managed keys for operators and the dashboard, behind the admin token. Answers are
 * `{code: 0, message: "ok", data}`; errors 4001 (bad input) and 4041 (unknown key id).
 * The secret is in the answer to POST /admin/api/keys and nowhere else, ever.
 */
export const ADMIN_KEY_ROUTES: readonly Route<Services>[] = [
  adminRoute({
    method: 'get',
    url: '/admin/api/keys',
    operationId: 'admin_list_keys',
    summary: 'Keys with usage',
    description: 'Every key with its usage (today, this minute, last hour); never a secret or a hash.',
    answer: { description: 'the keys', data: Type.Array(KeyWithUsageSchema) },
    handle: (services) => async () => {
      // This instance's pending counts first, so last_used_at and usage are current.
      await services.usage.flush();
      const list = await services.keys.list();
      const usage = await services.keys.usage(
        list.map((k) => k.id),
        services.limiter,
        services.usage,
      );
      return success({
        data: list.map((k) => ({
          ...k,
          usage: usage.get(k.id) ?? { today: 0, this_minute: 0, last_hour: 0 },
        })),
      });
    },
  }),
  adminRoute({
    method: 'post',
    url: '/admin/api/keys',
    operationId: 'admin_create_key',
    summary: 'Create a key',
    description:
      'Creates a query or ingest key. The secret is in this answer only; only its hash is stored. ' +
      'Limits apply to query keys; absent limits take the configured defaults.',
    body: KeyCreateSchema,
    answer: { description: 'created', data: KeyCreatedSchema, status: 201 },
    errors: [4001, 4130, 4150],
    handle: (services) => async (req, reply) => {
      const { key, secret } = await services.keys.create((req.body ?? {}) as Record<string, unknown>);
      req.log.info({ keyId: key.id, scope: key.scope }, 'key created');
      return reply.code(201).send(success({ data: { ...key, secret } }));
    },
  }),
  adminRoute({
    method: 'get',
    url: '/admin/api/keys/:id',
    operationId: 'admin_get_key',
    summary: 'One key with usage',
    description: 'One key and its usage.',
    params: { id: KEY_ID },
    answer: { description: 'the key', data: KeyWithUsageSchema },
    errors: [4041],
    handle: (services) => async (req) => {
      await services.usage.flush();
      const key = await services.keys.get(req.params.id);
      const usage = await services.keys.usage([key.id], services.limiter, services.usage);
      return success({ data: { ...key, usage: usage.get(key.id) } });
    },
  }),
  adminRoute({
    method: 'patch',
    url: '/admin/api/keys/:id',
    operationId: 'admin_update_key',
    summary: 'Change name, rate or quota',
    description:
      'Absent fields stay as they are; null clears a limit. Effective within 2 s on every instance.',
    params: { id: KEY_ID },
    body: KeyUpdateSchema,
    answer: { description: 'the updated key', data: KeyViewSchema },
    errors: [4001, 4041, 4130, 4150],
    handle: (services) => async (req) =>
      logged(req, 'updated', await services.keys.update(req.params.id, req.body ?? {})),
  }),
  adminRoute({
    method: 'post',
    url: '/admin/api/keys/:id/revoke',
    operationId: 'admin_revoke_key',
    summary: 'Revoke a key',
    description:
      'Idempotent (a revoked key keeps its first revocation time); effective within 2 s on every instance.',
    params: { id: KEY_ID },
    answer: { description: 'the revoked key', data: KeyViewSchema },
    errors: [4041, 4130, 4150],
    handle: (services) => async (req) => logged(req, 'revoked', await services.keys.revoke(req.params.id)),
  }),
  adminRoute({
    method: 'get',
    url: '/admin/api/usage',
    operationId: 'admin_usage',
    summary: 'Requests per key and UTC hour',
    description:
      'Stored hourly request counts of the last `hours` UTC hours (the current one included), oldest first.',
    querystring: Type.Object(
      {
        hours: Type.Integer({
          minimum: 1,
          maximum: MAX_USAGE_HOURS,
          default: 24,
          description: 'how many UTC hours back',
        }),
      },
      { additionalProperties: false },
    ),
    answer: { description: 'hourly counts', data: Type.Array(UsageRowSchema) },
    errors: [4001],
    handle: (services) => async (req) =>
      success({ data: await services.keys.usageByHour(req.query.hours, services.usage) }),
  }),
];
