import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { CATALOG } from '../../src/catalog/catalog.js';
import { createStore } from '../../src/storage/create-store.js';
import { ROW_JSON_COLUMN } from '../../src/model/row-json.js';
import type { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { backends, get, json, push, startApp, type Harness } from '../helpers/harness.js';
import { seedDemoStore } from '../helpers/demo-seed.js';
import { batch, days, etfBar } from '../helpers/batches.js';
import { sampleRow } from '../helpers/sample-rows.js';

/**
 * Whole rows are answered from each row's stored response JSON (src/model/row-json.ts). These
 * tests hold it to the bytes the response schema produces for the same rows (a `fields=`
 * projection naming every field takes that path), on every dataset and on awkward values, and
 * check the column is filled for rows stored before it existed.
 */

const DEMO = { end: '2025-06-30', days: 60, seed: 7 };

/** The same page through stored JSON and through the schema serialiser: identical bytes. */
async function sameBytes(app: FastifyInstance, endpoint: string, query: string): Promise<string> {
  const d = CATALOG.datasets.find((x) => x.endpoint === endpoint);
  assert.ok(d);
  const all = d.rowFields.map((f) => f.apiName).join(',');
  const stored = await get(app, `${endpoint}?${query}`);
  const serialised = await get(app, `${endpoint}?${query}&fields=${all}`);
  assert.equal(stored.statusCode, 200, stored.body);
  assert.equal(serialised.statusCode, 200, serialised.body);
  assert.equal(stored.body, serialised.body, `${endpoint}?${query}`);
  return stored.body;
}

/** Values whose JSON text is easy to get wrong. */
const AWKWARD_NAMES = [
  'quote " and \\ backslash',
  'tab\tnewline\n',
  'ünïcödé 中文 😀',
  '\u0001\u001f',
  '</script>',
];
const AWKWARD_NUMBERS = [0.1 + 0.2, 1.5e-300, 1e-7, -0, 5e-324, 2 ** 53 - 1, 123456.789, -42];

async function rowsOf(app: FastifyInstance, url: string): Promise<Record<string, unknown>[]> {
  return (json(await get(app, url)) as { data: Record<string, unknown>[] }).data;
}

for (const backend of await backends()) {
  describe(`stored row JSON (${backend})`, () => {
    let h: Harness;

    before(async () => {
      h = await startApp(backend);
      for (const r of await seedDemoStore(h.store, DEMO)) assert.notEqual(r.status, 'duplicate', r.dataset);
    });
    after(async () => h.close());

    test('every dataset: the page equals the schema-serialised page, byte for byte', async () => {
      for (const d of CATALOG.datasets) {
        const body = await sameBytes(h.app, d.endpoint, 'limit=7');
        assert.ok((JSON.parse(body) as { data: unknown[] }).data.length > 0, d.endpoint);
        await sameBytes(h.app, d.endpoint, 'limit=3&offset=2&order=asc');
      }
    });

    test('the next cursor read from stored JSON walks the same rows', async () => {
      const first = JSON.parse(await sameBytes(h.app, '/api/v1/etf/kline', 'code=510300&limit=5')) as {
        meta: { next_cursor: string };
      };
      assert.ok(first.meta.next_cursor);
      await sameBytes(h.app, '/api/v1/etf/kline', `code=510300&limit=5&cursor=${first.meta.next_cursor}`);
    });

    test('awkward strings and numbers, nulls, and an update that keeps created_at', async () => {
      const d = CATALOG.byName.get('etf_basic');
      assert.ok(d);
      const rows = AWKWARD_NAMES.map((name, i) => ({
        ...sampleRow(d, i),
        code: `J${i}`,
        name,
        management_fee: AWKWARD_NUMBERS[i] ?? null,
        custodian_fee: AWKWARD_NUMBERS[i + AWKWARD_NAMES.length] ?? null,
        category: null,
      }));
      const res = await push(h.app, batch('etf_basic', rows));
      assert.equal(res.statusCode, 200, res.body);
      const body = await sameBytes(h.app, '/api/v1/etf/basic', 'code=J0');
      await sameBytes(h.app, '/api/v1/etf/basic', 'limit=1000');
      const before = (JSON.parse(body) as { data: Record<string, unknown>[] }).data[0];
      assert.equal(before?.name, AWKWARD_NAMES[0]);
      assert.equal(before?.category, null);

      const changed = await push(h.app, batch('etf_basic', [{ ...rows[0], name: 'renamed' }]));
      assert.equal(changed.statusCode, 200, changed.body);
      const [after] = await rowsOf(h.app, '/api/v1/etf/basic?code=J0');
      assert.equal(after?.name, 'renamed');
      assert.equal(after?.created_at, before?.created_at, 'created_at is the first insert');
      await sameBytes(h.app, '/api/v1/etf/basic', 'code=J0');
    });
  });
}

/** Runs one statement on the harness's database behind the service's back; its first value. */
async function sql(h: Harness, text: string): Promise<unknown> {
  if (h.backend === 'sqlite') {
    const stmt = (h.store as SqliteStore).raw.prepare(text);
    return stmt.reader ? stmt.pluck().get() : stmt.run();
  }
  const c = new pg.Client({ connectionString: h.databaseUrl });
  await c.connect();
  try {
    const r = await c.query({ text, rowMode: 'array' });
    return (r.rows[0] as unknown[] | undefined)?.[0];
  } finally {
    await c.end();
  }
}

const missingJson = async (h: Harness, table: string): Promise<number> =>
  Number(await sql(h, `SELECT count(*) FROM ${table} WHERE ${ROW_JSON_COLUMN} IS NULL`));

for (const backend of await backends()) {
  test(`stored row JSON (${backend}): migrate fills it on old tables; a row without it is still answered`, async () => {
    const h = await startApp(backend);
    const basic = CATALOG.byName.get('etf_basic');
    assert.ok(basic);
    try {
      await push(
        h.app,
        batch(
          'etf_basic',
          [0, 1, 2].map((i) => ({ ...sampleRow(basic, i), code: `M${i}` })),
        ),
      );
      // More rows than one fill step (5,000), so the fill's chunking is exercised.
      const bars = ['A', 'B', 'C'].flatMap((c) => days('2000-01-01', 4000).map((d) => etfBar(`51${c}`, d)));
      for (let i = 0; i < bars.length; i += 6000) {
        const res = await push(h.app, batch('etf_daily', bars.slice(i, i + 6000)));
        assert.equal(res.statusCode, 200, res.body);
      }
      const want = await sameBytes(h.app, '/api/v1/etf/basic', 'limit=10');
      const wantDaily = await sameBytes(h.app, '/api/v1/etf/kline', 'code=51B&limit=50&offset=3000');
      // A row written without it: answered through the schema serialiser instead.
      await sql(h, `UPDATE etf_basic SET ${ROW_JSON_COLUMN} = NULL WHERE code = 'M1'`);
      assert.equal(
        (await get(h.app, '/api/v1/etf/basic?limit=11')).body,
        want.replace('"limit":10', '"limit":11'),
      );
      // Tables from before the column: the next migrate adds and fills it.
      for (const t of ['etf_basic', 'etf_daily'])
        await sql(h, `ALTER TABLE ${t} DROP COLUMN ${ROW_JSON_COLUMN}`);
      const reopened = await createStore(h.databaseUrl, CATALOG, {});
      try {
        await reopened.migrate();
      } finally {
        await reopened.close();
      }
      assert.equal(await missingJson(h, 'etf_basic'), 0);
      assert.equal(await missingJson(h, 'etf_daily'), 0);
      assert.equal(Number(await sql(h, 'SELECT count(*) FROM etf_daily')), 12_000);
      assert.equal(
        (await get(h.app, '/api/v1/etf/basic?limit=12')).body,
        want.replace('"limit":10', '"limit":12'),
      );
      // Same bytes, now from the filled JSON (a new URL: not from the response cache).
      assert.equal((await get(h.app, '/api/v1/etf/kline?code=51B&offset=3000&limit=50')).body, wantDaily);
    } finally {
      await h.close();
    }
  });
}
