// The MCP `universe` tool and the query tool's `universe` argument, with the SDK's own client over
// HTTP on every backend, on the demo data: each answer equal to the HTTP API's for the same request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QUERY_KEY, backends, type Harness } from '../helpers/harness.js';
import { listeningDemoOn } from '../helpers/demo-seed.js';
import { call, connect, errorText, structured, textOf } from '../helpers/mcp-client.js';

const DEMO = { end: '2026-12-04', days: 250, seed: 42 };
type Json = Record<string, unknown>;

for (const backend of await backends()) {
  describe(`MCP universe (${backend})`, () => {
    let h: Harness;
    let base: string;
    let client: Client;
    const http = async (path: string): Promise<{ data: Json[]; meta: Json }> => {
      const res = await fetch(new URL(path, base), { headers: { 'Q-API-KEY': QUERY_KEY } });
      assert.equal(res.status, 200, path);
      return (await res.json()) as { data: Json[]; meta: Json };
    };

    before(async () => {
      ({ h, base } = await listeningDemoOn(backend, DEMO));
      client = await connect(base, { Authorization: `Bearer ${QUERY_KEY}` });
    });
    after(async () => {
      await client?.close();
      await h?.close();
    });

    test('universe: the HTTP answer, paged by offset, with what was not judged in the summary', async () => {
      const want = await http('/api/v1/universe?date=2026-03-02&index=000300');
      const first = structured(
        await call(client, 'universe', { date: '2026-03-02', index: '000300', limit: 4 }),
      );
      assert.deepEqual(first.rows, want.data.slice(0, 4));
      assert.deepEqual([first.total, first.next_offset], [10, 4]);
      const rest = structured(
        await call(client, 'universe', { date: '2026-03-02', index: '000300', limit: 200, offset: 4 }),
      );
      assert.deepEqual(rest.rows, want.data.slice(4));
      assert.equal(rest.next_offset, null);
      const meta = rest.meta as Json;
      assert.deepEqual(meta.warnings, want.meta.warnings);
      const text = textOf(await call(client, 'universe', { date: '2026-12-04', index: '399006' }));
      assert.match(
        text,
        /^0 members of 399006 \(membership: none\) on 2026-12-04.*Not judged: index 399006 has neither/,
      );
    });

    test('universe: include_st=false and filters as the route takes them; bad input is a tool error', async () => {
      const noSt = structured(await call(client, 'universe', { date: '2026-04-15', include_st: false }));
      const want = await http('/api/v1/universe?date=2026-04-15&include_st=false');
      assert.deepEqual(noSt.rows, want.data);
      const sh = structured(await call(client, 'universe', { date: '2026-12-04', exchange: 'SH' }));
      assert.ok((sh.rows as Json[]).every((r) => r.exchange === 'SH'));
      assert.match(
        errorText(await call(client, 'universe', { date: '2026-02-30' })),
        /date must be a calendar date/,
      );
      assert.match(
        errorText(await call(client, 'universe', { date: '2026-12-04', index: 'abc' })),
        /index must be/,
      );
    });

    test('query with universe: the member rows, as GET with universe= gives them', async () => {
      const args = {
        dataset: 'stock_daily',
        universe: '000300',
        filters: { code: '002594' },
        date_from: '2026-04-10',
        date_to: '2026-08-20',
        fields: ['code', 'date', 'close'],
        limit: 200,
      };
      const got = structured(await call(client, 'query', args));
      const want = await http(
        '/api/v1/stock/daily?universe=000300&code=002594&date_from=2026-04-10&date_to=2026-08-20&fields=code,date,close&limit=200',
      );
      assert.deepEqual(got.rows, want.data);
      assert.match(
        errorText(await call(client, 'query', { ...args, universe: '000905' })),
        /no membership intervals/,
      );
    });
  });
}
