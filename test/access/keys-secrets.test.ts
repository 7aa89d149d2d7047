import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ADMIN_TOKEN, INGEST_KEY, QUERY_KEY, freshDatabaseUrl } from '../helpers/harness.js';
import { request, startServer } from '../helpers/server-process.js';
import { hashKey } from '../../src/access/api-key-format.js';

/**
 * No secret at rest and none in the logs: the real server (child process, most verbose log
 * level) is driven through creation, use, refusal and revocation of keys; then its whole
 * output and every file of its SQLite database are searched for each secret.
 */

test('the database files and the server logs never contain a secret', async () => {
  const db = await freshDatabaseUrl('sqlite');
  const server = await startServer({ databaseUrl: db.url, env: { LOG_LEVEL: 'trace' } });
  const secrets: string[] = [QUERY_KEY, INGEST_KEY, ADMIN_TOKEN];
  try {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const created: { id: string; secret: string }[] = [];
    for (const scope of ['query', 'query', 'ingest']) {
      const r = await request(server.port, {
        method: 'POST',
        path: '/admin/api/keys',
        headers: admin,
        body: JSON.stringify({ scope, name: 'secret-test', rate_per_minute: scope === 'query' ? 2 : null }),
      });
      assert.equal(r.status, 201, r.body);
      const k = (JSON.parse(r.body) as { data: { id: string; secret: string } }).data;
      created.push(k);
      secrets.push(k.secret);
    }
    const [q1, q2, ing] = created as [
      { id: string; secret: string },
      { id: string; secret: string },
      { id: string; secret: string },
    ];
    const query = (key: string, header = 'q-api-key') =>
      request(server.port, { method: 'GET', path: '/api/v1/etf/basic', headers: { [header]: key } });
    // Served, rate-limited, wrong scope, malformed, static keys.
    for (let i = 0; i < 3; i++) await query(q1.secret);
    assert.equal((await query(ing.secret)).status, 401);
    assert.equal((await query(`${q2.secret}x`)).status, 401);
    assert.equal((await query(QUERY_KEY)).status, 200);
    assert.equal(
      (
        await request(server.port, {
          method: 'GET',
          path: '/api/v1/upstream/ingest/batches/x',
          headers: { 'up-api-key': INGEST_KEY },
        })
      ).status,
      404,
    );
    // Revoked.
    await request(server.port, {
      method: 'POST',
      path: `/admin/api/keys/${q2.id}/revoke`,
      headers: { authorization: admin.authorization },
    });
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await query(q2.secret)).status, 401);
    // Admin calls with a wrong token, and the key list.
    await request(server.port, {
      method: 'GET',
      path: '/admin/api/keys',
      headers: { authorization: 'Bearer nope' },
    });
    const list = await request(server.port, {
      method: 'GET',
      path: '/admin/api/keys',
      headers: { authorization: admin.authorization },
    });
    for (const s of secrets) assert.ok(!list.body.includes(s));
  } finally {
    const exit = await server.kill('SIGTERM');
    assert.equal(exit.code, 0, server.output().slice(-2000));
  }
  try {
    const log = server.output();
    assert.ok(log.includes('"url":"/api/v1/etf/basic"'), 'the request log was captured');
    for (const s of secrets) assert.ok(!log.includes(s), `a secret (${s.slice(0, 8)}…) appeared in the logs`);

    const dir = path.dirname(db.url.slice('sqlite:'.length));
    const files = fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f)));
    const all = Buffer.concat(files);
    assert.ok(all.includes(hashKey(secrets[3] as string)), 'the key hashes are in the files searched');
    for (const s of secrets) {
      assert.ok(!all.includes(s), `a secret (${s.slice(0, 8)}…) is stored in the database files`);
      // Nor its body without the prefix (in case a store splits it).
      assert.ok(!all.includes(s.slice(8)));
    }
  } finally {
    await db.drop();
  }
});
