import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends, get, json, push, startApp, QUERY_KEY, type Harness } from '../helpers/harness.js';
import { batch, days, etfBar } from '../helpers/batches.js';
import { ResponseCache } from '../../src/http/response-cache.js';

/**
 * The response cache of polled query URLs (docs/performance.md): a cached answer equals a fresh
 * one byte for byte, and a batch that changes the dataset is visible on the very next request.
 * Also the count shortcut: a short last page reports the exact total.
 */

type Page = { data: Record<string, unknown>[]; meta: { total: number; has_more: boolean } };

for (const backend of await backends()) {
  describe(`query response cache (${backend})`, () => {
    let h: Harness;
    const url = '/api/v1/etf/kline?code=510300&limit=3';
    before(async () => {
      h = await startApp(backend);
      const rows = days('2024-01-01', 10).map((d, i) => etfBar('510300', d, { close: 1 + i }));
      assert.equal((await push(h.app, batch('etf_daily', rows))).statusCode, 200);
    });
    after(async () => h?.close());

    test('repeated requests: same status, headers and body as the first', async () => {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await get(h.app, url));
      const first = answers[0]!;
      assert.equal(first.statusCode, 200);
      for (const a of answers.slice(1)) {
        assert.equal(a.statusCode, 200);
        assert.equal(a.body, first.body);
        assert.equal(a.headers.etag, first.headers.etag);
        assert.equal(a.headers['content-type'], first.headers['content-type']);
      }
      const cond = await h.app.inject({
        method: 'GET',
        url,
        headers: { 'q-api-key': QUERY_KEY, 'if-none-match': String(first.headers.etag) },
      });
      assert.equal(cond.statusCode, 304);
      assert.equal(cond.body, '');
    });

    test('a batch that changes the dataset is seen on the next request; a duplicate is not a change', async () => {
      for (let i = 0; i < 3; i++) await get(h.app, url); // cached by now
      const before = await get(h.app, url);
      const same = await push(h.app, batch('etf_daily', [etfBar('510300', '2024-01-10', { close: 10 })]));
      assert.equal(json(same).accepted, 0);
      assert.equal((await get(h.app, url)).headers.etag, before.headers.etag);

      const change = await push(h.app, batch('etf_daily', [etfBar('510300', '2024-01-10', { close: 99 })]));
      assert.equal(json(change).accepted, 1);
      const fresh = await get(h.app, url);
      assert.notEqual(fresh.headers.etag, before.headers.etag);
      const page = json(fresh) as unknown as Page;
      assert.equal(page.data[0]?.close, 99);
      assert.equal(page.meta.total, 10);
    });

    test('authentication still applies to a cached URL', async () => {
      for (let i = 0; i < 3; i++) assert.equal((await get(h.app, url)).statusCode, 200);
      const anon = await get(h.app, url, null);
      assert.equal(anon.statusCode, 401);
      const bad = await get(h.app, url, 'not-a-key-0123456789abcdef');
      assert.equal(bad.statusCode, 401);
    });

    test('an adjusted answer follows the factors too: a factor batch is seen on the next request', async () => {
      const adjusted = '/api/v1/etf/kline?code=510300&limit=3&adjust=hfq';
      const factor = (date: string, adj_factor: number) => ({
        symbol: '510300',
        date,
        adj_factor,
        source: 'test',
      });
      assert.equal((await push(h.app, batch('adj_factor', [factor('2024-01-01', 2)]))).statusCode, 200);
      for (let i = 0; i < 3; i++) await get(h.app, adjusted); // cached by now
      const before = await get(h.app, adjusted);
      const closes = (json(before) as unknown as Page).data.map((r) => r.close as number);
      const change = await push(h.app, batch('adj_factor', [factor('2024-01-01', 3)]));
      assert.equal(json(change).accepted, 1);
      const fresh = await get(h.app, adjusted);
      assert.notEqual(fresh.headers.etag, before.headers.etag);
      const stale = await h.app.inject({
        method: 'GET',
        url: adjusted,
        headers: { 'q-api-key': QUERY_KEY, 'if-none-match': String(before.headers.etag) },
      });
      assert.equal(stale.statusCode, 200, 'the old ETag no longer matches');
      assert.deepEqual(
        (json(fresh) as unknown as Page).data.map((r) => r.close),
        closes.map((c) => (c / 2) * 3),
      );
    });

    test('full, short last and empty pages report the exact total', async () => {
      const at = async (offset: number): Promise<Page> =>
        json(await get(h.app, `/api/v1/etf/kline?code=510300&limit=4&offset=${offset}`)) as unknown as Page;
      // [offset, rows, has_more]: a full page is counted (on SQLite's readers, in the page's own
      // message and snapshot); a short last page tells its total; one past the end is counted.
      for (const [offset, rows, more] of [
        [4, 4, true],
        [8, 2, false],
        [50, 0, false],
      ] as const) {
        const page = await at(offset);
        assert.equal(page.data.length, rows, `offset ${offset}`);
        assert.equal(page.meta.total, 10, `offset ${offset}`);
        assert.equal(page.meta.has_more, more, `offset ${offset}`);
      }
      const none = json(await get(h.app, '/api/v1/etf/kline?code=999999')) as unknown as Page;
      assert.equal(none.meta.total, 0);
    });
  });
}

describe('ResponseCache', () => {
  test('admits a URL on its second request within one version', () => {
    const c = new ResponseCache();
    assert.equal(c.admit('/a', '1'), false);
    assert.equal(c.admit('/a', '1'), true);
    assert.equal(c.admit('/a', '2'), false, 'a new version starts over');
    assert.equal(c.admit('/a', '2:1'), false, 'so does a new factor version');
  });

  test('keeps the newest entries within its byte budget', () => {
    const c = new ResponseCache();
    const body = Buffer.alloc(900 * 1024, 'x');
    for (let i = 0; i < 60; i++) c.set(`/u${i}`, { version: '1', factors: null, etag: 'e', body });
    assert.equal(c.get('/u0'), undefined, 'oldest evicted');
    assert.equal(c.get('/u59')?.body, body);
    c.set('/huge', { version: '1', factors: null, etag: 'e', body: Buffer.alloc(2 * 1024 * 1024) });
    assert.equal(c.get('/huge'), undefined, 'an entry over 1 MiB is not kept');
  });
});
