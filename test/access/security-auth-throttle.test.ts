// Issue 14 item 1: failed-authentication throttling never refuses a valid credential. Over the
// allowance, an address's invalid credentials get 429 / 4290; valid keys (managed and static)
// pass, a missing key stays 401 / 4010, and each interface (query, ingest, admin) counts its own
// failures. Behind proxies, the client address is taken only from trusted hops, so a forged
// X-Forwarded-For neither escapes the guard nor blocks somebody else's address.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, backends, INGEST_KEY, QUERY_KEY, startApp, type Harness } from '../helpers/harness.js';
import { loadConfig, ConfigError } from '../../src/config.js';

const QUERY = '/api/v1/etf/kline';
const STATUS = '/api/v1/upstream/ingest/batches/no-such-batch';
const ALLOWANCE = 3;

type Headers = Record<string, string>;
const code = (r: LightMyRequestResponse): number => (r.json() as { code: number }).code;

function request(
  h: Harness,
  url: string,
  headers: Headers,
  remoteAddress: string,
): Promise<LightMyRequestResponse> {
  return h.app.inject({ method: 'GET', url, headers, remoteAddress });
}

/** Spends an address's allowance of failed authentications on one interface. */
async function exhaust(h: Harness, url: string, headers: Headers, ip: string): Promise<void> {
  for (let i = 0; i < ALLOWANCE; i++) assert.equal((await request(h, url, headers, ip)).statusCode, 401);
  const over = await request(h, url, headers, ip);
  assert.equal(over.statusCode, 429);
  assert.equal(code(over), 4290);
  assert.ok(Number(over.headers['retry-after']) >= 1);
}

for (const backend of await backends()) {
  describe(`failed-authentication throttling (${backend})`, { timeout: 60_000 }, () => {
    let h: Harness;
    let managed: string;
    before(async () => {
      h = await startApp(backend, { MDS_AUTH_FAILURES_PER_MINUTE: String(ALLOWANCE) });
      managed = (await h.app.services.keys.create({ scope: 'query' })).secret;
    });
    after(async () => h?.close());

    it('an address over its allowance still passes with valid keys; only invalid ones get 429', async () => {
      const ip = '198.51.100.1';
      await exhaust(h, QUERY, { 'q-api-key': 'wrong-query-key-0123456789' }, ip);
      assert.equal((await request(h, QUERY, { 'q-api-key': QUERY_KEY }, ip)).statusCode, 200);
      assert.equal((await request(h, QUERY, { 'q-api-key': managed }, ip)).statusCode, 200);
      // A missing key is not a guess: still 401 / 4010 as the spec says.
      const missing = await request(h, QUERY, {}, ip);
      assert.equal(missing.statusCode, 401);
      assert.equal(code(missing), 4010);
      assert.equal(code(await request(h, QUERY, { 'q-api-key': 'still-wrong-0123456789' }, ip)), 4290);
      // Another address is untouched.
      assert.equal((await request(h, QUERY, { 'q-api-key': 'wrong' }, '198.51.100.2')).statusCode, 401);
    });

    it('each interface counts its own failures: wrong admin tokens do not block query or ingest', async () => {
      const ip = '198.51.100.3';
      await exhaust(h, '/admin/api/keys', { authorization: 'Bearer wrong-token' }, ip);
      assert.equal(
        (await request(h, '/admin/api/keys', { authorization: `Bearer ${ADMIN_TOKEN}` }, ip)).statusCode,
        200,
      );
      assert.equal(code(await request(h, QUERY, { 'q-api-key': 'wrong' }, ip)), 4012);
      assert.equal(code(await request(h, STATUS, { 'up-api-key': 'wrong' }, ip)), 4012);
      const other = '198.51.100.4';
      await exhaust(h, STATUS, { 'up-api-key': 'wrong-ingest-key' }, other);
      assert.equal(code(await request(h, STATUS, { 'up-api-key': INGEST_KEY }, other)), 4040);
      assert.equal(code(await request(h, QUERY, { 'q-api-key': 'wrong' }, other)), 4012);
    });
  });
}

describe('trusted proxies (MDS_TRUST_PROXY)', { timeout: 60_000 }, () => {
  it('names the proxies (addresses / CIDRs); "true" and hop counts are refused', () => {
    assert.equal(loadConfig({}).MDS_TRUST_PROXY, false);
    assert.equal(loadConfig({ MDS_TRUST_PROXY: 'false' }).MDS_TRUST_PROXY, false);
    assert.deepEqual(loadConfig({ MDS_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,loopback' }).MDS_TRUST_PROXY, [
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'loopback',
    ]);
    for (const bad of ['true', '1', 'yes', '10.0.0.0/33', '10.0.0.1/8/2', 'proxy.example', '1.5']) {
      assert.throws(() => loadConfig({ MDS_TRUST_PROXY: bad }), ConfigError, bad);
    }
  });

  for (const trust of ['127.0.0.1', '127.0.0.0/8,::1']) {
    it(`with MDS_TRUST_PROXY=${trust}, a forged X-Forwarded-For neither escapes nor redirects the guard`, async () => {
      const h = await startApp('sqlite', {
        MDS_AUTH_FAILURES_PER_MINUTE: String(ALLOWANCE),
        MDS_TRUST_PROXY: trust,
      });
      try {
        // The proxy (127.0.0.1) appends the address it saw: the attacker's, 203.0.113.9. What the
        // attacker wrote before it is forged: a fresh address per request, or the upstream's.
        const proxy = '127.0.0.1';
        const upstream = '192.0.2.10';
        const attacker = (forged: string): Headers => ({
          'q-api-key': 'guess-0123456789',
          'x-forwarded-for': `${forged}, 203.0.113.9`,
        });
        for (let i = 0; i < ALLOWANCE; i++) {
          assert.equal((await request(h, QUERY, attacker(`10.9.9.${i}`), proxy)).statusCode, 401);
        }
        const blocked = await request(h, QUERY, attacker(upstream), proxy);
        assert.equal(code(blocked), 4290, 'rotating forged addresses did not escape the guard');
        // The upstream, through the same proxy, is not blocked by failures forged in its name.
        const fromUpstream = await request(
          h,
          QUERY,
          { 'q-api-key': 'typo-0123456789', 'x-forwarded-for': upstream },
          proxy,
        );
        assert.equal(code(fromUpstream), 4012);
        // An untrusted peer's X-Forwarded-For is ignored: its own address is what counts.
        const direct = await request(h, QUERY, attacker('10.8.8.8'), '203.0.113.200');
        assert.equal(code(direct), 4012);
      } finally {
        await h.close();
      }
    });
  }
});
