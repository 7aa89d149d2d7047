// Answers that say what their rows alone would not (docs/endpoints.md "Many values and code
// spellings", docs/point-in-time.md, docs/errors.md): 400s where an empty answer would mislead
// (date_from after date_to, a source in another case, a near-miss code spelling), an unpadded
// CIK, the exact trade_date filter of index constituents, meta.before_history for an as_of
// before a dataset's first change and meta.several_sources, over HTTP and MCP, on both backends.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';
import { call, serveMcp, structured, textOf } from '../helpers/mcp-client.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

const KLINE = '/api/v1/etf/kline';

for (const backend of await backends()) {
  describe(`answers that say more (${backend})`, { timeout: 120_000 }, () => {
    let h: Harness;
    let mcp: { client: Client; close(): Promise<void> };
    /** Before anything is pushed: etf_nav has no change at all. */
    let navBefore: Json;
    let firstKnown: string;
    const src = uniqueId('xtquant').toLowerCase();
    const pushed = async (body: unknown): Promise<Json> => {
      const res = await push(h.app, body);
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const ok = async (url: string): Promise<Json> => {
      const res = await get(h.app, url);
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const refused = async (url: string, code: number): Promise<Json> => {
      const res = await get(h.app, url);
      assert.equal(res.statusCode, 400, res.body);
      const body = json(res);
      assert.equal(body.code, code, res.body);
      return body;
    };

    before(async () => {
      h = await startApp(backend);
      navBefore = await ok('/api/v1/etf/nav?as_of=2024-01-01T00:00:00Z');
      const b = await pushed(
        batch(
          'etf_daily',
          [etfBar('510300', '2024-03-01', { source: src }), etfBar('510300', '2024-03-04', { source: src })],
          { source: src },
        ),
      );
      firstKnown = String(b.processed_at);
      // A second source for one of the days: two rows for the key (510300, 2024-03-01).
      await pushed(
        batch('etf_daily', [etfBar('510300', '2024-03-01', { source: 'other', close: 4 })], {
          source: 'other',
        }),
      );
      await pushed(
        batch(
          'us_companies',
          [
            {
              cik: '0001640147',
              name: 'Snowflake Inc.',
              ticker: 'SNOW',
              source: 'sec',
              updated_at: '2024-03-01T00:00:00Z',
            },
          ],
          { source: 'sec' },
        ),
      );
      const member = (day: string, stock: string): Json => ({
        index_code: '000300',
        stock_code: stock,
        trade_date: day,
        weight: 1.5,
        source: 'csindex',
        updated_at: '2024-03-01T00:00:00Z',
      });
      await pushed(
        batch(
          'index_constituents',
          [member('2024-02-29', '600000'), member('2024-03-29', '600000'), member('2024-03-29', '600036')],
          {
            source: 'csindex',
          },
        ),
      );
      mcp = await serveMcp(h);
    });
    after(async () => {
      await mcp.close();
    });

    it('date_from after date_to is 400 / 4006 on the endpoints and the quality report, not an empty page', async () => {
      const body = await refused(`${KLINE}?code=510300&date_from=2024-03-10&date_to=2024-03-01`, 4006);
      assert.equal(body.parameter, 'date_from');
      assert.match(String(body.message), /date_from 2024-03-10 is after date_to 2024-03-01/);
      await refused('/api/v1/quality/etf_daily?date_from=20240310&date_to=20240301', 4006);
      // One day is a range, as before.
      assert.equal(
        ((await ok(`${KLINE}?code=510300&date_from=2024-03-01&date_to=2024-03-01`)).data as Json[]).length,
        2,
      );
    });

    it('a source that exists only in another case is 400 / 4007 naming the stored spelling', async () => {
      const upper = src.toUpperCase();
      const body = await refused(`${KLINE}?code=510300&source=${upper}`, 4007);
      assert.equal(body.parameter, 'source');
      assert.deepEqual(body.allowed, [src]);
      assert.match(String(body.message), new RegExp(`"${src}"`));
      const ranked = await refused(`${KLINE}?code=510300&source_priority=${upper},other`, 4007);
      assert.equal(ranked.parameter, 'source_priority');
      // Exports are refused before their first byte, too.
      await refused(`${KLINE}?code=510300&source=${upper}&format=csv`, 4007);
      // The stored spelling answers; a source stored in no case is an ordinary empty answer.
      assert.equal(((await ok(`${KLINE}?code=510300&source=${src}`)).data as Json[]).length, 2);
      assert.equal((await ok(`${KLINE}?code=510300&source=nosuch`)).data instanceof Array, true);
      assert.equal(((await ok(`${KLINE}?code=510300&source=nosuch`)).meta as Json).total, 0);
      const tool = await call(mcp.client, 'query', {
        dataset: 'etf_daily',
        filters: { code: '510300', source: upper },
      });
      assert.equal(tool.isError, true);
      assert.match(textOf(tool), /stored one is spelt/);
    });

    it('a code spelling that is almost a known form is 400 / 4008; the known forms answer', async () => {
      for (const bad of ['510300.SHH', 'xh510300', '510300.X']) {
        const body = await refused(`${KLINE}?code=${bad}`, 4008);
        assert.equal(body.parameter, 'code');
        assert.match(String(body.message), new RegExp(bad.replace('.', '\\.')));
      }
      await refused('/api/v1/quality/etf_daily?code=510300.SHH', 4008);
      for (const good of ['510300', '510300.SH', 'sh510300', '510300.XSHG', '510300.SS'])
        assert.equal(((await ok(`${KLINE}?code=${good}&source=${src}`)).data as Json[]).length, 2, good);
    });

    it('an unpadded CIK finds the company; a ticker is taken as written', async () => {
      const rows = (await ok('/api/v1/us/companies?cik=1640147')).data as Json[];
      assert.deepEqual(
        rows.map((r) => r.cik),
        ['0001640147'],
      );
      assert.equal(((await ok('/api/v1/us/companies?cik=0001640147,320193')).data as Json[]).length, 1);
      assert.equal(((await ok('/api/v1/us/companies?ticker=SNOW')).data as Json[]).length, 1);
    });

    it('index constituents take an exact trade_date (one day, or a list)', async () => {
      const day = (await ok('/api/v1/index/constituents?index_code=000300&trade_date=2024-03-29'))
        .data as Json[];
      assert.deepEqual(day.map((r) => r.stock_code).sort(), ['600000', '600036']);
      const compact = (await ok('/api/v1/index/constituents?trade_date=20240229')).data as Json[];
      assert.deepEqual(
        compact.map((r) => r.trade_date),
        ['2024-02-29'],
      );
      const both = await ok('/api/v1/index/constituents?trade_date=2024-02-29,2024-03-29');
      assert.equal((both.meta as Json).total, 3);
      assert.equal(((await ok('/api/v1/index/constituents?trade_date=2024-03-01')).meta as Json).total, 0);
    });

    it('as_of before the first change: meta.before_history with that instant; after it, none', async () => {
      // A dataset with no change yet (a fresh install).
      assert.deepEqual(navBefore.data, []);
      const none = (navBefore.meta as Json).before_history as Json;
      assert.equal(none.first_change, null);
      assert.match(String(none.message), /holds no state of etf_nav/);
      // Before etf_daily's first batch: empty, and it says why and since when.
      const early = await ok(`${KLINE}?code=510300&as_of=2024-03-04T07:30:00Z`);
      assert.deepEqual(early.data, []);
      const note = (early.meta as Json).before_history as Json;
      assert.equal(note.first_change, firstKnown);
      assert.match(String(note.message), new RegExp(`before its first change, known at ${firstKnown}`));
      // At and after that instant: the rows, no note.
      const then = await ok(`${KLINE}?code=510300&source=${src}&as_of=${firstKnown}`);
      assert.equal((then.data as Json[]).length, 2);
      assert.equal((then.meta as Json).before_history, undefined);
      assert.equal(((await ok(`${KLINE}?code=510300`)).meta as Json).before_history, undefined);
      // MCP: the summary says it too.
      const tool = await call(mcp.client, 'query', {
        dataset: 'etf_daily',
        filters: { code: '510300' },
        as_of: '2024-03-04T07:30:00Z',
      });
      assert.match(
        textOf(tool),
        new RegExp(`holds no state of etf_daily before its first change, known at ${firstKnown}`),
      );
      assert.equal((structured(tool).before_history as Json).first_change, firstKnown);
    });

    it('several sources for one key: meta.several_sources names them; one source or source_priority: none', async () => {
      const both = await ok(`${KLINE}?code=510300`);
      assert.equal((both.data as Json[]).length, 3);
      const note = (both.meta as Json).several_sources as Json;
      assert.deepEqual(note.sources, ['other', src].sort());
      assert.match(String(note.message), /source_priority=/);
      // A projection without the source cannot tell: no note, rather than a wrong one.
      assert.equal(
        ((await ok(`${KLINE}?code=510300&fields=date,close`)).meta as Json).several_sources,
        undefined,
      );
      for (const q of [`source=${src}`, `source_priority=other,${src}`, 'date=2024-03-04']) {
        assert.equal(((await ok(`${KLINE}?code=510300&${q}`)).meta as Json).several_sources, undefined, q);
      }
      const tool = await call(mcp.client, 'query', { dataset: 'etf_daily', filters: { code: '510300' } });
      assert.match(textOf(tool), new RegExp(`rows of several sources \\((other, ${src}|${src}, other)\\)`));
    });
  });
}
