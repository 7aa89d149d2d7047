// `mds keys create` and `mds admin-token` say which database they wrote to, and whether the
// server on the configured port (PORT) uses it, by the database_id its /health answers
// (docs/tools.md, "Which database"). Run as a user runs them: the CLI and the server as
// processes, on both backends.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshDatabaseUrl } from '../helpers/harness.js';
import { freePort, request, startServer, type ServerProcess } from '../helpers/server-process.js';
import { mdsWithEnv } from '../helpers/cli.js';
import { ROOT } from '../helpers/repo-root.js';
import { databaseId, databaseIdentity } from '../../src/model/database-url.js';

const lastLine = (s: string): string => s.trimEnd().split('\n').pop() ?? '';

it('the database a URL names: no credentials, a relative SQLite path made absolute', () => {
  assert.equal(
    databaseIdentity('postgres://me:secret@DB.example:6543/market?sslmode=require'),
    'postgres://db.example:6543/market',
  );
  assert.equal(databaseIdentity('postgresql://me@localhost/'), 'postgres://localhost:5432/me');
  assert.equal(databaseIdentity('sqlite:./data/x.db', '/srv/mds'), 'sqlite:/srv/mds/data/x.db');
  assert.equal(databaseIdentity('sqlite:', '/srv/mds'), 'sqlite:/srv/mds/data/market-data.db');
  // The same file from another directory is another database: the trap the warning is for.
  assert.notEqual(databaseId('sqlite:./data/x.db', '/srv/a'), databaseId('sqlite:./data/x.db', '/srv/b'));
});

for (const backend of await backends()) {
  describe(`which database the CLI wrote to (${backend})`, { timeout: 180_000 }, () => {
    let served: { url: string; drop(): Promise<void> };
    let other: { url: string; drop(): Promise<void> };
    let server: ServerProcess;

    before(async () => {
      served = await freshDatabaseUrl(backend);
      other = await freshDatabaseUrl(backend);
      server = await startServer({ databaseUrl: served.url });
    });
    after(async () => {
      await server?.kill('SIGKILL');
      await served?.drop();
      await other?.drop();
    });

    it('/health names its database by a fingerprint (no path, host or credentials)', async () => {
      const r = await request(server.port, { method: 'GET', path: '/health' });
      const body = JSON.parse(r.body) as { database_id: string };
      assert.equal(body.database_id, databaseId(served.url, ROOT));
      assert.match(body.database_id, /^[0-9a-f]{16}$/);
      assert.notEqual(databaseId(other.url, ROOT), body.database_id);
    });

    it('keys create on the served database: says so, and the key works there at once', async () => {
      const r = await mdsWithEnv(
        { DATABASE_URL: served.url, PORT: String(server.port) },
        'keys',
        'create',
        '--scope',
        'ingest',
      );
      assert.equal(r.code, 0, r.stderr);
      assert.ok(
        r.stdout.includes(`Database: ${databaseIdentity(served.url, ROOT)} (DATABASE_URL)\n`),
        r.stdout,
      );
      assert.ok(!/:[^/@]*@/.test(databaseIdentity(served.url, ROOT)), 'no credentials');
      assert.match(r.stdout, new RegExp(`The server on port ${server.port} uses this database`));
      assert.equal(r.stderr, '');
      const key = lastLine(r.stdout);
      const status = await request(server.port, {
        method: 'GET',
        path: '/api/v1/upstream/ingest/batches/none',
        headers: { 'up-api-key': key },
      });
      assert.equal(status.status, 404, status.body); // past authentication
    });

    it('admin-token on another database: a warning, and the sign-in hint names the port', async () => {
      const r = await mdsWithEnv({ DATABASE_URL: other.url, PORT: String(server.port) }, 'admin-token');
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `^warning: the server on port ${server.port} uses another database than .*: it will not accept`,
        ),
      );
      assert.match(r.stdout, new RegExp(`http://localhost:${server.port}/dashboard`));
      assert.match(lastLine(r.stdout), /^mds_a_/);
      const refused = await request(server.port, {
        method: 'GET',
        path: '/admin/api/keys',
        headers: { authorization: `Bearer ${lastLine(r.stdout)}` },
      });
      assert.equal(refused.status, 401, 'the warning was right');
    });

    it('no server on the port: says so, no warning', async () => {
      const port = await freePort();
      const r = await mdsWithEnv(
        { DATABASE_URL: other.url, PORT: String(port) },
        'keys',
        'create',
        '--scope',
        'query',
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`No server answers on port ${port}`));
      assert.equal(r.stderr, '');
      assert.match(lastLine(r.stdout), /^mds_q_/);
    });
  });
}
