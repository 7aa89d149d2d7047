// Issue 6, security: secrets (static keys, the admin token, managed keys, rejected keys) never
// appear in the logs (at trace level), in answers (beyond the one-time creation answer) or in
// the database. Real server process, on every backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  ADMIN_TOKEN,
  backends,
  freshDatabaseUrl,
  INGEST_KEY,
  QUERY_KEY,
  type Backend,
} from '../helpers/harness.js';
import { batch, etfBar } from '../helpers/batches.js';
import { request, startServer, type ServerProcess } from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';
import { hashKey } from '../../src/access/api-key-format.js';

const REJECTED_KEY = 'leak-canary-rejected-key-7f3a9c';
const REJECTED_TOKEN = 'leak-canary-admin-token-51bd02';

/** Every byte the database holds, as text to search (SQLite files; PostgreSQL rows as JSON). */
async function databaseText(backend: Backend, url: string): Promise<string> {
  if (backend === 'sqlite') {
    const file = url.slice('sqlite:'.length);
    const dir = path.dirname(file);
    return fs
      .readdirSync(dir)
      .filter((f) => f.startsWith(path.basename(file)))
      .map((f) => fs.readFileSync(path.join(dir, f)).toString('latin1'))
      .join('\n');
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ t: string }>(
      `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS t
       FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    const parts: string[] = [];
    for (const { t } of tables.rows) {
      const rows = await client.query(`SELECT row_to_json(x)::text AS j FROM ${t} x`);
      for (const r of rows.rows as { j: string }[]) parts.push(r.j);
    }
    return parts.join('\n');
  } finally {
    await client.end();
  }
}

for (const backend of await backends()) {
  describe(`security: secrets stay secret (${backend})`, { timeout: 180_000 }, () => {
    let db: { url: string; drop(): Promise<void> };
    let server: ServerProcess;
    let managed: string;
    let logs: string;
    const answers: string[] = [];
    const keep = (r: { body: string; headers: Record<string, unknown> }): void => {
      answers.push(r.body, JSON.stringify(r.headers));
    };

    before(async () => {
      db = await freshDatabaseUrl(backend, { migrated: true });
      server = await startServer({ databaseUrl: db.url, env: { LOG_LEVEL: 'trace' } });
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
      const created = await request(server.port, {
        method: 'POST',
        path: '/admin/api/keys',
        headers: admin,
        body: JSON.stringify({ scope: 'query', name: 'canary' }),
      });
      assert.equal(created.status, 201, created.body);
      const data = (JSON.parse(created.body) as { data: { id: string; secret: string } }).data;
      managed = data.secret;

      keep(
        await pushBatch(server.port, JSON.stringify(batch('etf_daily', [etfBar('510300', '2024-01-02')]))),
      );
      for (const key of [QUERY_KEY, managed, REJECTED_KEY]) {
        keep(
          await request(server.port, {
            method: 'GET',
            path: '/api/v1/etf/kline',
            headers: { 'q-api-key': key },
          }),
        );
      }
      keep(await pushBatch(server.port, '{}', REJECTED_KEY));
      keep(await request(server.port, { method: 'GET', path: '/admin/api/keys', headers: admin }));
      keep(await request(server.port, { method: 'GET', path: `/admin/api/keys/${data.id}`, headers: admin }));
      keep(
        await request(server.port, {
          method: 'GET',
          path: '/admin/api/keys',
          headers: { authorization: `Bearer ${REJECTED_TOKEN}` },
        }),
      );
      keep(
        await request(server.port, {
          method: 'POST',
          path: `/admin/api/keys/${data.id}/revoke`,
          headers: admin,
        }),
      );
      keep(
        await request(server.port, {
          method: 'GET',
          path: '/api/v1/etf/kline',
          headers: { 'q-api-key': managed },
        }),
      );
      // Keys pasted into URLs by mistake (issue 14): the request log must not keep them.
      // Under key-like parameter names, and a configured or managed key under any name.
      for (const urlPath of [
        `/api/v1/etf/kline?q-api-key=${QUERY_KEY}`,
        `/api/v1/etf/kline?limit=1&API_KEY=${encodeURIComponent(managed)}`,
        `/api/v1/etf/kline?symbol=${managed}`,
        `/api/v1/etf/kline?symbol=${QUERY_KEY}&token=${REJECTED_KEY}`,
        `/admin/api/keys?access_token=${ADMIN_TOKEN}`,
        `/api/v1/upstream/ingest/batches/x?up-api-key=${INGEST_KEY}`,
        `/api/v1/etf/kline?secret=${REJECTED_TOKEN}`,
      ]) {
        await request(server.port, { method: 'GET', path: urlPath, headers: { 'q-api-key': QUERY_KEY } });
      }
      await server.kill('SIGTERM');
      logs = server.output();
    });
    after(async () => {
      await server?.kill('SIGKILL');
      await db.drop();
    });

    const secrets = (): Record<string, string> => ({
      'static ingest key': INGEST_KEY,
      'static query key': QUERY_KEY,
      'admin token': ADMIN_TOKEN,
      'managed key': managed,
      'rejected key': REJECTED_KEY,
      'rejected admin token': REJECTED_TOKEN,
    });

    it('the logs (trace level) hold no secret', () => {
      assert.ok(logs.includes('/api/v1/etf/kline'), 'the server logged the requests');
      assert.ok(logs.includes('/admin/api/keys?access_token='), 'the server logged the pasted URLs');
      for (const [what, s] of Object.entries(secrets())) assert.ok(!logs.includes(s), `${what} in the logs`);
    });

    it('answers hold no secret (the creation answer aside)', () => {
      const all = answers.join('\n');
      for (const [what, s] of Object.entries(secrets())) assert.ok(!all.includes(s), `${what} in an answer`);
    });

    it('the database holds no secret, only hashes', async () => {
      const text = await databaseText(backend, db.url);
      assert.ok(text.includes(hashKey(managed)), 'the scan sees the stored hash');
      for (const [what, s] of Object.entries(secrets()))
        assert.ok(!text.includes(s), `${what} in the database`);
    });
  });
}
