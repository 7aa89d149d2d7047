// A re-push of unchanged data is all duplicates, whoever fills updated_at (docs/ingest.md,
// "What counts as a change"): no revision, the dataset's version and ETag unchanged, the stored
// updated_at kept; daily bars and minute bars, on both backends, through HTTP.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { batch, days, etfBar, uniqueId, type Data } from '../helpers/batches.js';
import { dayBars } from '../helpers/minute-bars.js';

for (const backend of await backends()) {
  describe(`re-pushing unchanged data (${backend})`, { timeout: 120_000 }, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend);
    });
    after(async () => {
      await h.close();
    });

    const pushed = async (body: unknown): Promise<Json> => {
      const res = await push(h.app, body);
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const trail = async (dataset: string, src: string): Promise<Json[]> => {
      const res = await get(h.app, `/api/v1/revisions/${dataset}?source=${src}&limit=1000`);
      assert.equal(res.statusCode, 200, res.body);
      return json(res).data as Json[];
    };
    const read = async (url: string): Promise<{ etag: string; data: Json[] }> => {
      const res = await get(h.app, url);
      assert.equal(res.statusCode, 200, res.body);
      return { etag: String(res.headers.etag), data: json(res).data as Json[] };
    };

    /** Pushes `body` again: every record a duplicate, the answer at `url` (and its ETag) as before. */
    const allDuplicates = async (body: unknown, url: string, count: number): Promise<void> => {
      const before1 = await read(url);
      const again = await pushed(body);
      assert.equal(again.accepted, 0);
      assert.equal(again.duplicate, count);
      const after1 = await read(url);
      assert.equal(after1.etag, before1.etag, 'the dataset version (ETag) did not move');
      assert.deepEqual(after1.data, before1.data);
    };

    it('daily bars: every updated_at changed by the client, or filled by the server, is no change', async () => {
      const src = uniqueId('repush');
      const url = `/api/v1/etf/kline?code=RP1&source=${src}&limit=100`;
      const bars = (updated: string): Data[] =>
        days('2024-03-01', 20).map((d, i) =>
          etfBar('RP1', d, { source: src, close: 1.901 + i / 1000, updated_at: updated }),
        );
      const first = await pushed(batch('etf_daily', bars('2024-03-29T15:30:00Z'), { source: src }));
      assert.equal(first.accepted, 20);
      const before1 = await read(url);
      const trailBefore = await trail('etf_daily', src);

      // The same file pushed again with every updated_at moved (what `mds push` sends: the push time).
      const again = await pushed(batch('etf_daily', bars('2026-12-07T22:00:00Z'), { source: src }));
      assert.equal(again.status, 'accepted');
      assert.equal(again.accepted, 0);
      assert.equal(again.duplicate, 20);

      const after1 = await read(url);
      assert.equal(after1.etag, before1.etag, 'the dataset version (ETag) did not move');
      assert.deepEqual(after1.data, before1.data);
      assert.ok(after1.data.every((r) => r.updated_at === '2024-03-29T15:30:00.000Z'));
      assert.deepEqual(await trail('etf_daily', src), trailBefore);
      assert.equal(trailBefore.length, 20);

      // A changed value is still a change, and then the new updated_at is stored with it.
      const moved = bars('2026-12-07T23:00:00Z').slice(0, 1);
      (moved[0] as Data).close = 9;
      const change = await pushed(batch('etf_daily', moved, { source: src }));
      assert.equal(change.accepted, 1);
      const latest = await read(url);
      assert.notEqual(latest.etag, before1.etag);
      const changed = latest.data.find((r) => r.close === 9);
      assert.equal(changed?.updated_at, '2026-12-07T23:00:00.000Z');
      assert.equal((await trail('etf_daily', src)).filter((r) => r.op === 'update').length, 1);
    });

    it('a dataset whose updated_at is optional: pushed without it twice, the server fills it, no change', async () => {
      const src = uniqueId('repushn');
      const navs = days('2024-03-01', 5).map((d, i) => ({
        code: 'RPN',
        trade_date: d,
        nav: 1 + i / 10,
        source: src,
      }));
      const url = `/api/v1/etf/nav?code=RPN&source=${src}&limit=100`;
      assert.equal((await pushed(batch('etf_nav', navs, { source: src }))).accepted, 5);
      await new Promise((r) => setTimeout(r, 5)); // the server's clock moves on
      await allDuplicates(batch('etf_nav', navs, { source: src }), url, 5);
      assert.equal((await trail('etf_nav', src)).length, 5);
    });

    it('minute bars: a day pushed again with new updated_at is 240 duplicates, no revision', async () => {
      const src = uniqueId('repushm');
      const stamped = (updated: string): Data[] =>
        dayBars('600100', '2024-03-01', 10, src).map((b) => ({ ...b, updated_at: updated }));
      const first = await pushed(batch('stock_minute', stamped('2024-03-01T08:00:00Z'), { source: src }));
      assert.equal(first.accepted, 240);
      const url = `/api/v1/stock/minute?code=600100&date=2024-03-01&source=${src}&limit=1000`;
      await allDuplicates(batch('stock_minute', stamped('2026-12-07T22:00:00Z'), { source: src }), url, 240);
      assert.equal((await trail('stock_minute', src)).length, 1);
    });
  });
}
