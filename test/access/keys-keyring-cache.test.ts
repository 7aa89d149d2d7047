import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOG } from '../../src/catalog/catalog.js';
import { loadConfig } from '../../src/config.js';
import { AppError } from '../../src/errors.js';
import { KeyRing } from '../../src/access/keyring.js';
import { KeyService } from '../../src/access/key-service.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { INGEST_KEY, QUERY_KEY } from '../helpers/harness.js';

/**
 * The keyring remembers keys it has resolved by the presented string (no hash per request):
 * being polled must not extend a key's trust, and a remembered key answers as a fresh one.
 */

const codeOf = async (f: () => Promise<unknown>): Promise<number | null> => {
  try {
    await f();
    return null;
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err.code;
  }
};

async function setup(): Promise<{ store: SqliteStore; ring: KeyRing; keys: KeyService }> {
  const store = new SqliteStore(CATALOG, { file: ':memory:' });
  await store.migrate();
  const ring = new KeyRing(store, loadConfig({ MDS_QUERY_KEYS: QUERY_KEY, MDS_INGEST_KEYS: INGEST_KEY }));
  return { store, ring, keys: new KeyService(store, { ratePerMinute: null, dailyQuota: null }) };
}

test('a managed key polled without pause is refused after its revocation: hits do not renew the TTL', async () => {
  const { store, ring, keys } = await setup();
  const { key, secret } = await keys.create({ scope: 'query', name: 'polled' });
  assert.equal((await ring.authenticate('query', secret)).id, key.id);
  await keys.revoke(key.id);
  // Hits do not renew the trust: the key is looked up again one second after it was.
  const revoked = Date.now();
  let refused: number | null = null;
  while (refused === null && Date.now() - revoked < 2000) {
    refused = await codeOf(
      async () => ring.authenticateKnown('query', secret) ?? ring.authenticate('query', secret),
    );
    if (refused === null) await new Promise((r) => setTimeout(r, 5));
  }
  assert.equal(refused, 4012);
  await store.close();
});

test('a remembered key answers exactly as on first sight: wrong scope, repeated or missing header', async () => {
  const { store, ring } = await setup();
  for (let i = 0; i < 2; i++) {
    assert.equal((await ring.authenticate('query', QUERY_KEY)).scope, 'query');
    assert.equal(ring.authenticateKnown('query', QUERY_KEY)?.scope, 'query');
    assert.equal(await codeOf(() => ring.authenticate('query', INGEST_KEY)), 4012);
    assert.equal(await codeOf(async () => ring.authenticateKnown('query', INGEST_KEY)), 4012);
    assert.equal(await codeOf(() => ring.authenticate('query', [QUERY_KEY, QUERY_KEY])), 4012);
    assert.equal(await codeOf(() => ring.authenticate('query', undefined)), 4010);
    assert.equal(await codeOf(() => ring.authenticate('query', `${QUERY_KEY}x`)), 4012);
    assert.equal(
      ring.authenticateKnown('query', `${QUERY_KEY}x`),
      undefined,
      'unknown keys are not remembered',
    );
  }
  await store.close();
});
