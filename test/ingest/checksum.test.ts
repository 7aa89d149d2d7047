// decisions.md "Checksum": our JCS serialiser agrees with the `canonicalize` package (RFC 8785).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { canonicalJson, matchChecksum, sha256Hex } from '../../src/ingest/checksum.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { buildBatch, toRecord } from '../../src/client/batch-builder.js';

const canonicalize = createRequire(import.meta.url)('canonicalize') as (v: unknown) => string | undefined;

it('serialises any JSON value exactly as the canonicalize reference package', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      // JSON.parse(JSON.stringify(...)) gives what a request body parses to (no -0, no undefined).
      const parsed: unknown = JSON.parse(JSON.stringify(v));
      assert.equal(canonicalJson(parsed), canonicalize(parsed));
    }),
    { numRuns: 500 },
  );
});

it('an own "__proto__" key is serialised as data, never as the prototype', () => {
  // JSON.parse makes "__proto__" an own property (fast-check found this once: seed -1665844458).
  for (const text of ['[{"__proto__":{}}]', '{"b":{"__proto__":{"z":1,"a":[1,{"__proto__":null}]}},"a":0}']) {
    const parsed: unknown = JSON.parse(text);
    assert.equal(canonicalJson(parsed), canonicalize(parsed), text);
  }
  assert.equal(canonicalJson(JSON.parse('{"__proto__":{}}')), '{"__proto__":{}}');
});

it('matches either the JCS or the compact form and nothing else', () => {
  const records = [{ b: 1, a: [{ d: 'x', c: 1.5e-7 }] }];
  assert.equal(matchChecksum(records, sha256Hex('[{"a":[{"c":1.5e-7,"d":"x"}],"b":1}]')), 'jcs');
  assert.equal(matchChecksum(records, sha256Hex('[{"b":1,"a":[{"d":"x","c":1.5e-7}]}]')), 'compact');
  assert.equal(matchChecksum(records, sha256Hex('[{"b": 1}]')), null);
  assert.equal(matchChecksum([{ n: Infinity }], sha256Hex('[{"n":null}]')), 'compact');
  assert.equal(canonicalJson([{ n: Infinity }]), null);
});

it('the compact form is still tried when only integer-like keys put it out of canonical order', () => {
  // Object.keys lists integer-like keys first, in numeric order ("9" before "10"), while JCS
  // sorts by code unit ("10" before "9"): the compact text differs although the keys were
  // listed in ascending order, so the JCS text cannot stand for it.
  const records = JSON.parse('[{"10":1,"9":2,"a":{"a":1,"b":0}}]') as unknown;
  assert.equal(matchChecksum(records, sha256Hex('[{"9":2,"10":1,"a":{"a":1,"b":0}}]')), 'compact');
  assert.equal(matchChecksum(records, sha256Hex('[{"10":1,"9":2,"a":{"a":1,"b":0}}]')), 'jcs');
  // Keys in canonical order everywhere: one form, matched as JCS.
  const sorted = JSON.parse('[{"a":[{"c":1,"d":"x"}],"b":2}]') as unknown;
  assert.equal(matchChecksum(sorted, sha256Hex('[{"a":[{"c":1,"d":"x"}],"b":2}]')), 'jcs');
  assert.equal(matchChecksum(sorted, sha256Hex('[{"b":2}]')), null);
});

it('the push client sends records as their own JCS text: matched from the bytes received', () => {
  const d = CATALOG.byName.get('stock_minute') ?? assert.fail('no stock_minute');
  const row = {
    symbol: '600000',
    date: '2024-03-01',
    time: '2024-03-01T09:31:00+08:00',
    open: 10.5,
    high: 10.6,
    low: 10.4,
    close: 10.55,
    volume: 1200,
    amount: 12660.5,
    source: 'eastmoney',
  };
  const batch = buildBatch(d, [toRecord(d, row)], {
    source: 'eastmoney',
    businessDate: '2024-03-01',
    snapshotType: 'incremental',
    runId: 'r',
  });
  const text = JSON.stringify(batch.records);
  assert.equal(text, canonicalJson(JSON.parse(text)));
  assert.equal(matchChecksum(JSON.parse(text), batch.checksum.sha256, Buffer.from(text)), 'sent');
});
