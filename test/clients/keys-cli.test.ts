import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshDatabaseUrl, get, json, startApp } from '../helpers/harness.js';
import { managedKeyScope } from '../../src/access/api-key-format.js';
import { mds } from '../helpers/cli.js';

const URL = '/api/v1/etf/basic';

const lines = (s: string): string[] => s.split('\n').filter((l) => l !== '');

test('CLI round trip: create, list, update, revoke; the server honours each step', async () => {
  const db = await freshDatabaseUrl('sqlite');
  try {
    // create: the key alone on the last line
    const c = await mds(
      db.url,
      'keys',
      'create',
      '--scope',
      'query',
      '--name',
      'me',
      '--rate-per-minute',
      '5',
    );
    assert.equal(c.code, 0, c.stderr);
    const out = lines(c.stdout);
    const secret = out[out.length - 1] as string;
    assert.match(secret, /^mds_q_[0-9A-Za-z]{38}$/);
    assert.equal(managedKeyScope(secret), 'query');
    const id = /id ([0-9a-f-]{36})/.exec(c.stdout)?.[1] as string;
    assert.ok(id, c.stdout);

    // list: one line per key, id, name, scope, state first; never the secret
    const l = await mds(db.url, 'keys', 'list');
    assert.equal(l.code, 0, l.stderr);
    assert.equal(lines(l.stdout).length, 1);
    assert.deepEqual(l.stdout.split('\t').slice(0, 4), [id, 'me', 'query', 'active']);
    assert.match(l.stdout, /5\/minute/);
    assert.ok(!l.stdout.includes(secret));
    const asJson = JSON.parse((await mds(db.url, 'keys', 'list', '--json')).stdout) as { id: string }[];
    assert.deepEqual(
      asJson.map((k) => k.id),
      [id],
    );

    // The server on the same database accepts it with its limits.
    const h = await startApp('sqlite', {}, { databaseUrl: db.url });
    try {
      const r = await get(h.app, URL, secret);
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['ratelimit-policy'], '"minute";q=5;w=60');

      // update: new limits, by a unique beginning of the id
      const u = await mds(
        db.url,
        'keys',
        'update',
        id.slice(0, 8),
        '--rate-per-minute',
        '50',
        '--daily-quota',
        '9',
      );
      assert.equal(u.code, 0, u.stderr);
      assert.deepEqual(u.stdout.split('\t').slice(0, 4), [id, 'me', 'query', 'active']);
      assert.match(u.stdout, /50\/minute\t9\/day/);
      await new Promise((res) => setTimeout(res, 1100)); // the keyring trusts a lookup for one second
      assert.equal(
        (await get(h.app, URL, secret)).headers['ratelimit-policy'],
        '"minute";q=50;w=60, "day";q=9;w=86400',
      );
      const cleared = await mds(db.url, 'keys', 'update', id, '--daily-quota', 'none');
      assert.match(cleared.stdout, /50\/minute\tno daily quota/);

      // revoke: listed as revoked, refused by the server
      const v = await mds(db.url, 'keys', 'revoke', id);
      assert.equal(v.code, 0, v.stderr);
      assert.deepEqual(
        lines((await mds(db.url, 'keys', 'list')).stdout)[0]
          ?.split('\t')
          .slice(0, 4),
        [id, 'me', 'query', 'revoked'],
      );
      await new Promise((res) => setTimeout(res, 1100));
      const refused = await get(h.app, URL, secret);
      assert.equal(refused.statusCode, 401);
      assert.equal(json(refused).code, 4012);
    } finally {
      await h.close();
    }
  } finally {
    await db.drop();
  }
});

test('CLI mistakes: a clear message and exit code 1', async () => {
  const db = await freshDatabaseUrl('sqlite');
  try {
    const cases: [string[], RegExp][] = [
      [['keys', 'create', '--scope', 'admin'], /scope must be "query" or "ingest"/],
      [['keys', 'create'], /required option '--scope <scope>'/],
      [['keys', 'create', '--scope', 'query', '--rate-per-minute', 'fast'], /positive integer or "none"/],
      [['keys', 'revoke', 'no-such-id'], /unknown key id "no-such-id"/],
      [['keys', 'update', 'no-such-id', '--daily-quota', '3'], /unknown key id/],
    ];
    for (const [args, message] of cases) {
      const r = await mds(db.url, ...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.match(r.stderr, message);
    }
    const empty = await mds(db.url, 'keys', 'list');
    assert.equal(empty.code, 0);
    assert.equal(empty.stdout, '');
    assert.match(empty.stderr, /no keys yet/);
    const ingest = await mds(db.url, 'keys', 'create', '--scope', 'ingest');
    assert.match(lines(ingest.stdout).at(-1) as string, /^mds_i_/);
    assert.match(ingest.stdout, /UP-API-KEY/);
  } finally {
    await db.drop();
  }
});
