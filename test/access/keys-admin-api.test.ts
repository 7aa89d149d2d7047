import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import {
  ADMIN_TOKEN,
  backends,
  batchStatus,
  get,
  json,
  startApp,
  type Backend,
  type Harness,
  type Json,
} from '../helpers/harness.js';
import { managedKeyScope } from '../../src/access/api-key-format.js';

/** The admin key API, exactly as the dashboard uses it: /admin/api/keys and /admin/api/usage. */

const URL = '/api/v1/etf/basic';
const KEY_FIELDS = [
  'id',
  'name',
  'scope',
  'prefix',
  'rate_per_minute',
  'daily_quota',
  'created_at',
  'last_used_at',
  'revoked_at',
];

function admin(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  payload?: unknown,
  token: string | null = ADMIN_TOKEN,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}

const data = (r: LightMyRequestResponse): Json => json(r).data as Json;

function suite(backend: Backend): void {
  let h: Harness;
  before(async () => {
    h = await startApp(backend);
  });
  after(async () => {
    await h.close();
  });

  test('POST /admin/api/keys: 201, the key fields and the secret, shown once', async () => {
    const r = await admin(h.app, 'POST', '/admin/api/keys', {
      scope: 'query',
      name: 'research',
      rate_per_minute: 30,
      daily_quota: 1000,
    });
    assert.equal(r.statusCode, 201, r.body);
    assert.equal(json(r).code, 0);
    assert.equal(json(r).message, 'ok');
    const k = data(r);
    assert.deepEqual(Object.keys(k).sort(), [...KEY_FIELDS, 'secret'].sort());
    assert.equal(k.name, 'research');
    assert.equal(k.scope, 'query');
    assert.equal(k.rate_per_minute, 30);
    assert.equal(k.daily_quota, 1000);
    assert.equal(k.revoked_at, null);
    assert.equal(k.last_used_at, null);
    const secret = k.secret as string;
    assert.equal(managedKeyScope(secret), 'query');
    assert.ok(secret.length >= 20);
    assert.ok(secret.startsWith(k.prefix as string));
    assert.ok((k.prefix as string).length < secret.length / 2);
    // The key works at once, and the secret appears in no other answer.
    assert.equal((await get(h.app, URL, secret)).statusCode, 200);
    const list = await admin(h.app, 'GET', '/admin/api/keys');
    assert.ok(!list.body.includes(secret));
    assert.ok(!list.body.includes('"hash"'));
  });

  test('GET /admin/api/keys: every key with its usage (today, this minute, last hour)', async () => {
    const { data: created } = json(
      await admin(h.app, 'POST', '/admin/api/keys', { scope: 'query', name: 'usage' }),
    ) as {
      data: Json;
    };
    for (let i = 0; i < 3; i++)
      assert.equal((await get(h.app, URL, created.secret as string)).statusCode, 200);
    const r = await admin(h.app, 'GET', '/admin/api/keys');
    assert.equal(r.statusCode, 200);
    const list = json(r).data as Json[];
    const k = list.find((x) => x.id === created.id) as Json;
    assert.deepEqual(Object.keys(k).sort(), [...KEY_FIELDS, 'usage'].sort());
    assert.deepEqual(k.usage, { today: 3, this_minute: 3, last_hour: 3 });
    assert.equal(typeof k.last_used_at, 'string');
    assert.equal(k.rate_per_minute, 600, 'the default rate');
    const one = await admin(h.app, 'GET', `/admin/api/keys/${created.id as string}`);
    assert.deepEqual(data(one).usage, { today: 3, this_minute: 3, last_hour: 3 });
  });

  test('GET /admin/api/usage?hours=24: counts per key and UTC hour', async () => {
    const { data: created } = json(await admin(h.app, 'POST', '/admin/api/keys', { scope: 'query' })) as {
      data: Json;
    };
    await get(h.app, URL, created.secret as string);
    await get(h.app, URL, created.secret as string);
    const r = await admin(h.app, 'GET', '/admin/api/usage?hours=24');
    assert.equal(r.statusCode, 200);
    const rows = (json(r).data as Json[]).filter((x) => x.key_id === created.id);
    assert.deepEqual(rows, [{ key_id: created.id, hour: new Date().toISOString().slice(0, 13), count: 2 }]);
    assert.equal((await admin(h.app, 'GET', '/admin/api/usage')).statusCode, 200);
    for (const bad of ['hours=0', 'hours=abc', 'hours=1.5', 'hours=100000', 'days=1']) {
      const e = await admin(h.app, 'GET', `/admin/api/usage?${bad}`);
      assert.equal(e.statusCode, 400, bad);
      assert.equal(json(e).code, 4001);
    }
  });

  test('PATCH /admin/api/keys/:id changes name and limits; null clears a limit', async () => {
    const { data: created } = json(
      await admin(h.app, 'POST', '/admin/api/keys', { scope: 'query', rate_per_minute: 5, daily_quota: 10 }),
    ) as { data: Json };
    const id = created.id as string;
    const r = await admin(h.app, 'PATCH', `/admin/api/keys/${id}`, { name: 'renamed', rate_per_minute: 7 });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(Object.keys(data(r)).sort(), [...KEY_FIELDS].sort());
    assert.equal(data(r).name, 'renamed');
    assert.equal(data(r).rate_per_minute, 7);
    assert.equal(data(r).daily_quota, 10);
    const cleared = await admin(h.app, 'PATCH', `/admin/api/keys/${id}`, { daily_quota: null });
    assert.equal(data(cleared).daily_quota, null);
    assert.equal(data(cleared).rate_per_minute, 7);
  });

  test('POST /admin/api/keys/:id/revoke: revoked_at set; the key gets 401 / 4012; revoking again changes nothing', async () => {
    const { data: created } = json(await admin(h.app, 'POST', '/admin/api/keys', { scope: 'query' })) as {
      data: Json;
    };
    const id = created.id as string;
    const secret = created.secret as string;
    assert.equal((await get(h.app, URL, secret)).statusCode, 200);
    const r = await admin(h.app, 'POST', `/admin/api/keys/${id}/revoke`);
    assert.equal(r.statusCode, 200, r.body);
    const revokedAt = data(r).revoked_at as string;
    assert.match(revokedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await new Promise((res) => setTimeout(res, 1100)); // the keyring trusts a lookup for one second
    const q = await get(h.app, URL, secret);
    assert.equal(q.statusCode, 401);
    assert.equal(json(q).code, 4012);
    const again = await admin(h.app, 'POST', `/admin/api/keys/${id}/revoke`);
    assert.equal(data(again).revoked_at, revokedAt);
  });

  test('errors: 4001 for bad input, 4041 for an unknown key id', async () => {
    const bad: unknown[] = [
      {},
      { scope: 'admin' },
      { scope: 'query', rate_per_minute: 0 },
      { scope: 'query', rate_per_minute: 1.5 },
      { scope: 'query', daily_quota: '10' },
      { scope: 'query', name: '' },
      { scope: 'query', name: 'a\nb' },
      { scope: 'query', secret: 'mine' },
      { scope: 'ingest', rate_per_minute: 5 },
      [],
    ];
    for (const body of bad) {
      const r = await admin(h.app, 'POST', '/admin/api/keys', body);
      assert.equal(r.statusCode, 400, JSON.stringify(body));
      assert.equal(json(r).code, 4001, JSON.stringify(body));
    }
    const { data: created } = json(await admin(h.app, 'POST', '/admin/api/keys', { scope: 'query' })) as {
      data: Json;
    };
    for (const body of [{ rate_per_minute: -1 }, { scope: 'ingest' }, { name: 7 }]) {
      const r = await admin(h.app, 'PATCH', `/admin/api/keys/${created.id as string}`, body);
      assert.equal(json(r).code, 4001, JSON.stringify(body));
    }
    for (const [method, url, body] of [
      ['PATCH', '/admin/api/keys/nope', { name: 'x' }],
      ['POST', '/admin/api/keys/nope/revoke', undefined],
      ['GET', '/admin/api/keys/nope', undefined],
    ] as const) {
      const r = await admin(h.app, method, url, body);
      assert.equal(r.statusCode, 404, url);
      assert.equal(json(r).code, 4041);
    }
  });

  test('the admin API needs the admin token', async () => {
    const none = await admin(h.app, 'GET', '/admin/api/keys', undefined, null);
    assert.equal(none.statusCode, 401);
    assert.equal(json(none).code, 4010);
    const wrong = await admin(h.app, 'POST', '/admin/api/keys', { scope: 'query' }, 'not-the-token');
    assert.equal(wrong.statusCode, 401);
    assert.equal(json(wrong).code, 4012);
    const unset = await startApp(backend, { MDS_ADMIN_TOKEN: '' });
    try {
      const r = await admin(unset.app, 'GET', '/admin/api/keys');
      assert.equal(r.statusCode, 401);
    } finally {
      await unset.close();
    }
  });

  test('keys of one scope are refused on the other interface; malformed keys are refused', async () => {
    const { data: ingest } = json(await admin(h.app, 'POST', '/admin/api/keys', { scope: 'ingest' })) as {
      data: Json;
    };
    const secret = ingest.secret as string;
    assert.equal(managedKeyScope(secret), 'ingest');
    // Accepted on the ingest interface (an unknown batch: 404 / 4040, past authentication).
    const status = await batchStatus(h.app, 'no-such-batch', secret);
    assert.equal(status.statusCode, 404);
    assert.equal(json(status).code, 4040);
    const r = await get(h.app, URL, secret);
    assert.equal(r.statusCode, 401);
    assert.equal(json(r).code, 4012);
    const { data: query } = json(await admin(h.app, 'POST', '/admin/api/keys', { scope: 'query' })) as {
      data: Json;
    };
    const q = query.secret as string;
    // One character changed: the checksum refuses it before any lookup.
    const typo = q.slice(0, 10) + (q[10] === 'A' ? 'B' : 'A') + q.slice(11);
    assert.equal(managedKeyScope(typo), null);
    assert.equal(json(await get(h.app, URL, typo)).code, 4012);
  });

  test('an ingest key records its last use, as a query key does', async () => {
    const { data: ingest } = json(await admin(h.app, 'POST', '/admin/api/keys', { scope: 'ingest' })) as {
      data: Json;
    };
    const before = data(await admin(h.app, 'GET', `/admin/api/keys/${ingest.id as string}`));
    assert.equal(before.last_used_at, null);
    const started = new Date().toISOString();
    assert.equal((await batchStatus(h.app, 'no-such-batch', ingest.secret as string)).statusCode, 404);
    const after = data(await admin(h.app, 'GET', `/admin/api/keys/${ingest.id as string}`));
    assert.equal(typeof after.last_used_at, 'string');
    assert.ok((after.last_used_at as string) >= started.slice(0, 19), String(after.last_used_at));
    // Counted in the usage table (this_minute is the rate limiter's window: ingest keys have none).
    const usage = after.usage as Json;
    assert.deepEqual([usage.today, usage.last_hour], [1, 1]);
  });
}

for (const backend of await backends()) describe(backend, () => suite(backend));
