import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CATALOG } from '../../src/catalog/catalog.js';
import { MAX_INDEXED_TEXT_BYTES, indexedFields } from '../../src/ingest/record-validation.js';
import { datasetTable } from '../../src/storage/schema.js';
import { batch, etfBar } from '../helpers/batches.js';
import { backends, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { sampleRow } from '../helpers/sample-rows.js';

/**
 * Text in indexed fields is limited in UTF-8 bytes, the same on both backends: a 2.7 KB key
 * was a 500 on PostgreSQL (btree entry too large) and accepted by SQLite.
 */

/** Incompressible ASCII text of exactly `bytes` bytes (PostgreSQL may compress repetitive text). */
const text = (bytes: number): string => randomBytes(bytes).toString('base64url').slice(0, bytes);

/** PostgreSQL's btree entry limit (BTMaxItemSize for 8 KB pages). */
const BTREE_MAX = 2704;

test('every index of every dataset fits a btree entry with its text at the byte limit', () => {
  for (const d of CATALOG.datasets) {
    const t = datasetTable(d);
    const indexed = new Set([...indexedFields(d)].map((f) => f.name));
    const typeOf = new Map(t.columns.map((c) => [c.name, c.type]));
    for (const cols of [t.unique, ...t.indexes.map((i) => i.columns)]) {
      let size = 8; // index tuple header
      for (const c of cols) {
        const type = typeOf.get(c);
        if (type === 'string') {
          assert.ok(indexed.has(c), `${d.name}.${c} is indexed but not byte-limited`);
          size += 4 + MAX_INDEXED_TEXT_BYTES;
        } else size += type === 'date' ? 11 : 8;
      }
      assert.ok(size <= BTREE_MAX, `${d.name} (${cols.join(', ')}): ${size} bytes`);
    }
  }
});

for (const backend of await backends()) {
  describe(`indexed text limits (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend);
    });
    after(async () => h.close());

    test('a key over the byte limit is a rejected record, the limit itself is stored', async () => {
      const atLimit = text(MAX_INDEXED_TEXT_BYTES);
      const rows = [
        etfBar(atLimit, '2024-01-02'),
        etfBar(text(2800), '2024-01-02'),
        // 257 two-byte characters: under the limit in characters, over it in bytes.
        etfBar('é'.repeat(257), '2024-01-02'),
        etfBar('510300', '2024-01-02', { source: text(MAX_INDEXED_TEXT_BYTES + 1) }),
      ];
      const res = await push(h.app, batch('etf_daily', rows));
      assert.equal(res.statusCode, 207, res.body);
      const body = json(res);
      assert.equal(body.code, 2070);
      assert.equal(body.accepted, 1);
      assert.equal(body.rejected, 3);
      const errors = body.errors as Json[];
      assert.deepEqual(
        errors.map((e) => [e.index, e.field]),
        [
          [1, 'symbol'],
          [2, 'symbol'],
          [3, 'source'],
        ],
      );
      for (const e of errors) assert.match(String(e.reason), /at most 512 bytes in UTF-8/);
      const q = await get(h.app, `/api/v1/etf/kline?code=${atLimit}`);
      assert.equal(q.statusCode, 200);
      assert.equal((json(q).data as Json[]).length, 1);
    });

    test('only over-long records are refused: a batch of them is 422 / 4221, never a 500', async () => {
      const res = await push(h.app, batch('etf_daily', [etfBar(text(3000), '2024-01-03')]));
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(json(res).code, 4221);
    });

    test('the widest index at the limit in every text column is stored', async () => {
      const d = CATALOG.byName.get('us_financial_facts');
      assert.ok(d);
      const row = sampleRow(d, 0);
      for (const f of d.key)
        if (f.type === 'string' && !f.pattern) row[f.name] = text(MAX_INDEXED_TEXT_BYTES);
      const res = await push(h.app, batch('us_financial_facts', [row]));
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).accepted, 1);
    });
  });
}
