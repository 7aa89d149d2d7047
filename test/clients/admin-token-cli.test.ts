// Issue 14 item 14: a first run has a way into the dashboard without MDS_ADMIN_TOKEN. `mds
// admin-token` creates (or rotates) an admin token, prints it once, stores only its hash in the
// keys table; the admin API accepts it as well as MDS_ADMIN_TOKEN, it is no query or ingest key,
// it is not listed among the API keys, and the server never logs it. On every backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, backends, freshDatabaseUrl, QUERY_KEY } from '../helpers/harness.js';
import { request, startServer, type ServerProcess } from '../helpers/server-process.js';
import { hashKey } from '../../src/access/api-key-format.js';
import { mds } from '../helpers/cli.js';
import { createStore } from '../../src/storage/create-store.js';
import { CATALOG } from '../../src/catalog/catalog.js';

/** The token: alone on the last line of stdout. */
async function newToken(databaseUrl: string, ...args: string[]): Promise<{ token: string; stdout: string }> {
  const r = await mds(databaseUrl, 'admin-token', ...args);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  return { token: lines[lines.length - 1] as string, stdout: r.stdout };
}

const admin = (port: number, token: string, urlPath = '/admin/api/keys') =>
  request(port, { method: 'GET', path: urlPath, headers: { authorization: `Bearer ${token}` } });

for (const backend of await backends()) {
  describe(`mds admin-token (${backend})`, { timeout: 180_000 }, () => {
    let db: { url: string; drop(): Promise<void> };
    let server: ServerProcess;
    let first: string;
    let second: string;

    before(async () => {
      db = await freshDatabaseUrl(backend);
      first = (await newToken(db.url)).token;
      // No MDS_ADMIN_TOKEN: the first run's only way in is the token just made.
      server = await startServer({ databaseUrl: db.url, env: { MDS_ADMIN_TOKEN: '', LOG_LEVEL: 'trace' } });
    });
    after(async () => {
      await server?.kill('SIGKILL');
      await db.drop();
    });

    it('prints a token once, which the admin API accepts at once (no restart)', async () => {
      assert.match(first, /^mds_a_[0-9A-Za-z]{38}$/);
      const r = await admin(server.port, first);
      assert.equal(r.status, 200, r.body);
      // Admin tokens are not API keys: not listed, and refused as a query key.
      assert.deepEqual((JSON.parse(r.body) as { data: unknown[] }).data, []);
      const q = await request(server.port, {
        method: 'GET',
        path: '/api/v1/etf/kline',
        headers: { 'q-api-key': first },
      });
      assert.equal(q.status, 401);
      assert.equal((await admin(server.port, 'mds_a_not-a-token')).status, 401);
    });

    it('rotating makes a new token and revokes the old one; --keep keeps it', async () => {
      const rotated = await newToken(db.url);
      second = rotated.token;
      assert.match(rotated.stdout, /Revoked 1 earlier admin token/);
      assert.equal((await admin(server.port, first)).status, 401);
      assert.equal((await admin(server.port, second)).status, 200);
      const kept = await newToken(db.url, '--keep', '--name', 'ops laptop');
      assert.equal((await admin(server.port, second)).status, 200);
      assert.equal((await admin(server.port, kept.token)).status, 200);
    });

    it('the database holds only its hash; the server logs never show it', async () => {
      const store = await createStore(db.url, CATALOG);
      try {
        const rec = await store.keys.findKeyByHash(hashKey(second));
        assert.equal(rec?.scope, 'admin');
        assert.ok(rec && !JSON.stringify(rec).includes(second));
      } finally {
        await store.close();
      }
      await server.kill('SIGTERM');
      const logs = server.output();
      assert.ok(logs.includes('/admin/api/keys'), 'the server logged the admin requests');
      for (const t of [first, second]) assert.ok(!logs.includes(t), 'an admin token in the logs');
    });

    it('MDS_ADMIN_TOKEN still works beside managed admin tokens', async () => {
      server = await startServer({
        databaseUrl: db.url,
        env: { MDS_ADMIN_TOKEN: ADMIN_TOKEN, MDS_QUERY_KEYS: QUERY_KEY },
      });
      assert.equal((await admin(server.port, ADMIN_TOKEN)).status, 200);
      assert.equal((await admin(server.port, second)).status, 200);
    });
  });
}
