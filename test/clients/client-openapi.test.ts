import path from 'node:path';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { formattedClientTypes } from '../../src/client/generate-types.js';
import { ENDPOINT_PATHS, QueryClient, QueryError } from '../../src/index.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { QUERY_KEY, backends, push, startApp, type Harness } from '../helpers/harness.js';
import { batch, days, etfBar } from '../helpers/batches.js';
import { ROOT } from '../helpers/repo-root.js';

/** The typed query client: generated from /openapi.json (drift-checked) and used over HTTP. */

test('types.generated.ts is what the live /openapi.json generates', async () => {
  const h = await startApp('sqlite');
  try {
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    const doc = res.json() as Record<string, unknown>;
    const expected = await formattedClientTypes(doc);
    const committed = fs.readFileSync(path.join(ROOT, 'src', 'client', 'types.generated.ts'), 'utf8');
    assert.equal(committed, expected, 'run `npx tsx src/client/generate-types.ts` and commit the result');
    // Every query path of the document is a client endpoint, and nothing else.
    const paths = Object.entries(doc.paths as Record<string, { get?: { operationId?: string } }>)
      .filter(([, item]) => item.get?.operationId?.startsWith('query_'))
      .map(([p]) => p)
      .sort();
    assert.deepEqual(Object.values(ENDPOINT_PATHS).sort(), paths);
    assert.equal(paths.length, CATALOG.datasets.length);
  } finally {
    await h.close();
  }
});

for (const backend of await backends()) {
  describe(`typed query client (${backend})`, () => {
    let h: Harness;
    let client: QueryClient;
    before(async () => {
      h = await startApp(backend);
      const base = await h.app.listen({ port: 0, host: '127.0.0.1' });
      client = new QueryClient({ baseUrl: base, key: QUERY_KEY });
      const rows = days('2024-01-01', 30).map((d, i) => etfBar('510300', d, { close: 4 + i / 100 }));
      assert.equal((await push(h.app, batch('etf_daily', rows))).statusCode, 200);
    });
    after(async () => h?.close());

    test('query with fields narrows rows; iterate pages with cursors; ETag; errors', async () => {
      const page = await client.query('etf_daily', { code: '510300', fields: ['date', 'close'], limit: 7 });
      assert.equal(page.meta.total, 30);
      assert.equal(page.data.length, 7);
      const first = page.data[0];
      assert.ok(first);
      const close: number = first.close;
      const date: string = first.date;
      assert.deepEqual(Object.keys(first).sort(), ['close', 'date']);
      assert.equal(date, '2024-01-30');
      assert.equal(close, 4.29);
      // @ts-expect-error open was not selected, so it is not in the row type
      assert.equal(first.open, undefined);

      // An exact filter takes a list (sent as repeated parameters), codes and dates as users write them.
      const listed = await client.query('etf_daily', {
        code: ['510300.SH', 'sh510300'],
        date_from: '20240105',
      });
      assert.equal(listed.meta.total, 26);

      const all: string[] = [];
      for await (const r of client.iterate('etf_daily', { code: '510300', limit: 4, fields: ['date'] })) {
        all.push(r.date);
      }
      assert.equal(all.length, 30);
      assert.equal(new Set(all).size, 30);

      assert.ok(page.etag);
      assert.equal(
        await client.queryIfChanged('etf_daily', page.etag, {
          code: '510300',
          fields: ['date', 'close'],
          limit: 7,
        }),
        null,
      );

      const csv = await client.exportText('etf_daily', 'csv', { code: '510300', fields: ['date', 'close'] });
      assert.equal(csv.trim().split('\n').length, 31);

      await assert.rejects(
        // @ts-expect-error "nope" is not a field of etf_daily
        client.query('etf_daily', { fields: ['nope'] }),
        (err: unknown) => err instanceof QueryError && err.status === 400 && err.code === 4001,
      );
      const noKey = new QueryClient({
        baseUrl: client.url('etf_daily').split('/api/')[0] ?? '',
        key: 'wrong-key-0123456789abc',
      });
      await assert.rejects(
        noKey.query('fx'),
        (err: unknown) => err instanceof QueryError && err.status === 401,
      );
    });
  });
}
