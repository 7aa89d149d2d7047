import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseHosts } from '../../src/database-hosts.js';

/** DATABASE_URL's hosts, libpq's multi-host form (src/database-hosts.ts). */

test('several hosts: each with its port, the URL per host without target_session_attrs', () => {
  const list = parseHosts(
    'postgres://mds:p%40ss@pg1:5433,pg2,[::1]:6000/market?target_session_attrs=read-write&sslmode=disable',
  );
  assert.deepEqual(list.hosts, [
    { host: 'pg1', port: 5433 },
    { host: 'pg2', port: 5432 },
    { host: '::1', port: 6000 },
  ]);
  assert.equal(list.urlFor(list.hosts[0]!), 'postgres://mds:p%40ss@pg1:5433/market?sslmode=disable');
  assert.equal(list.urlFor(list.hosts[2]!), 'postgres://mds:p%40ss@[::1]:6000/market?sslmode=disable');
});

test('one host: unchanged meaning; primary is accepted as read-write', () => {
  assert.deepEqual(parseHosts('postgresql://127.0.0.1/test').hosts, [{ host: '127.0.0.1', port: 5432 }]);
  assert.equal(parseHosts('postgres://a,b/db?target_session_attrs=primary').hosts.length, 2);
});

test('what the service cannot honour stops the start, naming it', () => {
  assert.throws(
    () => parseHosts('postgres://a,b/db?target_session_attrs=read-only'),
    /target_session_attrs=read-only: the service writes/,
  );
  assert.throws(() => parseHosts('postgres://a:99999,b/db'), /not host\[:port\]/);
  assert.throws(() => parseHosts('postgres://a,,b/db'), /not host\[:port\]/);
});

test('a DATABASE_URL the service cannot honour is a configuration error at start-up', () => {
  assert.throws(
    () => loadConfig({ DATABASE_URL: 'postgres://a,b/db?target_session_attrs=standby' }),
    (err: unknown) =>
      err instanceof ConfigError && /^invalid configuration DATABASE_URL: several hosts/.test(err.message),
  );
  assert.equal(
    loadConfig({ DATABASE_URL: 'postgres://a:5432,b:5433/db' }).DATABASE_URL,
    'postgres://a:5432,b:5433/db',
  );
});
