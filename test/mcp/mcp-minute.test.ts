import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CATALOG, type Dataset } from '../../src/catalog/catalog.js';
import { MAX_BLOCKS, MINUTE_INTERVALS } from '../../src/query/minute-query.js';
import { QUERY_KEY, backends, push, startApp, type Harness } from '../helpers/harness.js';
import { batch } from '../helpers/batches.js';
import { dayBars } from '../helpers/minute-bars.js';
import { call, errorText, serveMcp, structured, textOf } from '../helpers/mcp-client.js';

/**
 * The MCP tools on the minute datasets (catalog `blocks`), with the SDK's client against a
 * listening service, on every backend: each answer compared with the HTTP API's answer to the
 * same request (docs/mcp.md, docs/minute-bars.md).
 */

type Json = Record<string, unknown>;

const D1 = '2024-03-01';
const D2 = '2024-03-04';
/** Every dataset stored as bar blocks: the tools are derived from the trait, so each is served. */
const MINUTES: Dataset[] = CATALOG.datasets.filter((d) => d.blocks);
/** One code each: two full days. stock_minute has a second code on D1 only. */
const CODE = '600000';

/** HTTP trail items without the block's compressed payload, which the tool leaves out. */
const withoutPayload = (items: unknown): Json[] =>
  (items as Json[]).map((i) => {
    const { bars: _bars, ...row } = i.row as Json;
    return { ...i, row };
  });

const codeField = (d: Dataset): string => d.blocks!.code.apiName;

for (const backend of await backends()) {
  describe(`MCP on the minute datasets (${backend})`, { timeout: 180_000 }, () => {
    let h: Harness;
    let base: string;
    let client: Client;
    let close: (() => Promise<void>) | undefined;
    let between = '';
    const http = async (path: string): Promise<{ status: number; body: Json }> => {
      const res = await fetch(new URL(path, base), { headers: { 'Q-API-KEY': QUERY_KEY } });
      return { status: res.status, body: (await res.json()) as Json };
    };
    /** The tool's answer and the endpoint's, for the same request: rows, total and cursor equal. */
    const same = async (d: Dataset, args: Json, qs: string): Promise<Json> => {
      const page = structured(await call(client, 'query', { dataset: d.name, ...args }));
      const api = await http(`${d.endpoint}?${qs}`);
      assert.equal(api.status, 200, JSON.stringify(api.body));
      const meta = api.body.meta as Json;
      assert.ok((page.rows as unknown[]).length > 0, `${d.name} ${qs}: no rows`);
      assert.deepEqual(page.rows, api.body.data, `${d.name} ${qs}`);
      assert.deepEqual(
        [page.total, page.has_more, page.next_cursor],
        [meta.total, meta.has_more, meta.next_cursor],
        `${d.name} ${qs}`,
      );
      return page;
    };

    before(async () => {
      h = await startApp(backend);
      assert.ok(MINUTES.length >= 3, 'stock_minute, etf_minute, index_minute');
      for (const d of MINUTES) {
        const bars = [...dayBars(CODE, D1), ...dayBars(CODE, D2)];
        if (d.name === 'stock_minute') bars.push(...dayBars('600001', D1, 20));
        const res = await push(h.app, batch(d.name, bars));
        assert.equal(res.statusCode, 200, res.body);
      }
      // A correction of one bar of 600000 on D1: its block gets a second version; as_of
      // `between` answers the first.
      await new Promise((r) => setTimeout(r, 5));
      between = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      const fixed = { ...dayBars(CODE, D1).find((b) => b.time === `${D1}T10:00:00+08:00`)!, close: 99 };
      fixed.high = Math.max(fixed.high, 99);
      assert.equal((await push(h.app, batch('stock_minute', [fixed]))).statusCode, 200);
      ({ base, client, close } = await serveMcp(h));
    });
    after(async () => {
      await (close ?? (() => h?.close()))();
    });

    test('list_datasets: bars stored (not blocks), dates, filters, minute intervals, a quality report', async () => {
      const list = structured(await call(client, 'list_datasets', {})).datasets as Json[];
      for (const d of MINUTES) {
        const api = await http(`${d.endpoint}?limit=1`);
        const brief = list.find((x) => x.name === d.name)!;
        assert.deepEqual(
          {
            rows: brief.rows,
            first: brief.first_date,
            last: brief.last_date,
            date_field: brief.date_field,
            filters: brief.filters,
            quality: brief.quality_report,
          },
          {
            rows: (api.body.meta as Json).total,
            first: D1,
            last: D2,
            date_field: 'date',
            filters: [codeField(d), 'date', 'source'],
            quality: true,
          },
          d.name,
        );
        const one = await call(client, 'list_datasets', { dataset: d.name });
        const full = (structured(one).datasets as Json[])[0]!;
        assert.deepEqual(full.intervals, [...MINUTE_INTERVALS]);
        for (const p of ['interval', 'time_from', 'time_to', 'as_of', 'cursor'])
          assert.ok((full.parameters as string[]).includes(p), `${d.name} ${p}`);
        assert.deepEqual(
          (full.fields as Json[]).map((f) => f.name),
          Object.keys((api.body.data as Json[])[0]!),
        );
        assert.match(
          textOf(one),
          new RegExp(`^${d.name} \\(${d.endpoint}\\): .*\\. ${brief.rows} rows stored\\.`),
        );
      }
      const stock = list.find((x) => x.name === 'stock_minute')!;
      assert.equal(stock.rows, 3 * 240, 'three code-days of 240 bars');
    });

    test('query: interval, sessions, time bounds, fields, sort and date as the endpoint answers them', async () => {
      for (const d of MINUTES) {
        const c = codeField(d);
        const cases: [Json, string][] = [
          [{}, 'limit=50'],
          [{ filters: { [c]: CODE }, limit: 10 }, `${c}=${CODE}&limit=10`],
          [{ filters: { [c]: CODE }, interval: '5m', limit: 60 }, `${c}=${CODE}&interval=5m&limit=60`],
          [{ filters: { [c]: CODE }, interval: '60m' }, `${c}=${CODE}&interval=60m`],
          [{ filters: { [c]: CODE }, interval: '1d' }, `${c}=${CODE}&interval=1d`],
          [
            {
              filters: { [c]: CODE, date: D2 },
              time_from: `${D2}T11:00:00+08:00`,
              time_to: `${D2}T13:05:00+08:00`,
              interval: '15m',
            },
            `${c}=${CODE}&date=${D2}&time_from=${encodeURIComponent(`${D2}T11:00:00+08:00`)}&time_to=${encodeURIComponent(`${D2}T13:05:00+08:00`)}&interval=15m`,
          ],
          [
            { fields: ['time', 'close', 'volume'], sort: 'volume', order: 'asc', date_from: D2, limit: 25 },
            'fields=time,close,volume&sort=volume&order=asc&date_from=2024-03-04&limit=25',
          ],
        ];
        for (const [args, qs] of cases) await same(d, args, qs);
      }
      // By session: 60m bars of a day are 10:30, 11:30, 14:00, 15:00 (none across the lunch break).
      const hours = await same(
        CATALOG.byName.get('stock_minute')!,
        { filters: { code: CODE, date: D1 }, interval: '60m', order: 'asc' },
        `code=${CODE}&date=${D1}&interval=60m&order=asc`,
      );
      assert.deepEqual(
        (hours.rows as Json[]).map((r) => String(r.time).slice(11, 16)),
        ['10:30', '11:30', '14:00', '15:00'],
      );
    });

    test('query: as_of answers the bars before the correction, as the endpoint does', async () => {
      const stock = CATALOG.byName.get('stock_minute')!;
      const at = `${D1}T10:00:00+08:00`;
      const args = { filters: { code: CODE }, time_from: at, time_to: at };
      const qs = `code=${CODE}&time_from=${encodeURIComponent(at)}&time_to=${encodeURIComponent(at)}`;
      const now = await same(stock, args, qs);
      const then = await same(
        stock,
        { ...args, as_of: between },
        `${qs}&as_of=${encodeURIComponent(between)}`,
      );
      assert.equal((now.rows as Json[])[0]!.close, 99);
      assert.notEqual((then.rows as Json[])[0]!.close, 99);
    });

    test('query: paging by cursor reaches every bar, page for page as the endpoint', async () => {
      for (const d of MINUTES) {
        const c = codeField(d);
        const args = { filters: { [c]: CODE }, interval: '15m', limit: 7 };
        const qs = `${c}=${CODE}&interval=15m&limit=7`;
        const first = await call(client, 'query', { dataset: d.name, ...args });
        let page = await same(d, args, qs);
        assert.match(
          textOf(first),
          /^\w+_minute: 7 rows of 32, date 2024-03-04 … 2024-03-04\. More: call again/,
        );
        const seen = [...(page.rows as unknown[])];
        let pages = 1;
        while (page.next_cursor !== null) {
          const cursor = page.next_cursor as string;
          page = await same(d, { ...args, cursor }, `${qs}&cursor=${cursor}`);
          seen.push(...(page.rows as unknown[]));
          pages++;
        }
        assert.equal(pages, 5, '32 bars of 15 minutes (16 a day), 7 a page');
        assert.deepEqual(seen, (await http(`${d.endpoint}?${c}=${CODE}&interval=15m&limit=1000`)).body.data);
        // The last page says so.
        const last = await call(client, 'query', { dataset: d.name, ...args, offset: 28 });
        assert.match(textOf(last), /This is the last page\.$/m);
      }
    });

    test('bad arguments on minute datasets: tool errors with the endpoint’s own 4001 message', async () => {
      const stock = CATALOG.byName.get('stock_minute')!;
      const etf = CATALOG.byName.get('etf_daily')!;
      const index = CATALOG.byName.get('index_minute')!;
      const cases: [Dataset, Json, string][] = [
        [stock, { interval: '1w' }, 'interval=1w'],
        [etf, { interval: '5m' }, 'interval=5m'],
        [stock, { time_from: '2024-03-01' }, 'time_from=2024-03-01'],
        [stock, { sort: 'price' }, 'sort=price'],
        // Minute stock and etf bars take adjust (test/query/minute-adjust.test.ts); indexes do not.
        [index, { adjust: 'qfq' }, 'adjust=qfq'],
        [stock, { cursor: 'abc' }, 'cursor=abc'],
      ];
      for (const [d, args, qs] of cases) {
        const api = await http(`${d.endpoint}?${qs}`);
        assert.equal(api.status, 400, qs);
        assert.equal(api.body.code, 4001, qs);
        const text = errorText(await call(client, 'query', { dataset: d.name, ...args }));
        assert.equal(text, `${api.body.message as string} (4001)`, qs);
      }
      // A cursor of another query (another interval) is refused, not read as an offset.
      const p = structured(
        await call(client, 'query', { dataset: 'stock_minute', filters: { code: CODE }, limit: 5 }),
      );
      assert.match(
        errorText(
          await call(client, 'query', {
            dataset: 'stock_minute',
            filters: { code: CODE },
            interval: '5m',
            cursor: p.next_cursor,
          }),
        ),
        /cursor is for a different query/,
      );
      assert.match(
        errorText(
          await call(client, 'query', { dataset: 'stock_minute', filters: { time: `${D1}T10:00:00+08:00` } }),
        ),
        /"time" is not a filter of stock_minute; its filters: code, date, source/,
      );
      assert.match(
        errorText(await call(client, 'query', { dataset: 'stock_minute', interval: '2h' })),
        /^invalid arguments \(4001\): interval must be one of: 1d, 1w, 1M, 1Q, 1Y, 1m, 5m, 15m, 30m, 60m$/,
      );
    });

    test('revision_trail: a block’s versions, as GET /api/v1/revisions/{dataset}', async () => {
      const args = { dataset: 'stock_minute', filters: { code: CODE, date: D1 } };
      const r = await call(client, 'revision_trail', args);
      const page = structured(r);
      const api = await http(`/api/v1/revisions/stock_minute?code=${CODE}&date=${D1}`);
      assert.equal(api.status, 200);
      assert.deepEqual(page.items, withoutPayload(api.body.data));
      assert.ok(((api.body.data as Json[])[0]!.row as Json).bars, 'the HTTP trail carries the payload');
      const items = page.items as Json[];
      assert.deepEqual(
        items.map((i) => [i.op, (i.row as Json).bar_count]),
        [
          ['insert', 240],
          ['update', 240],
        ],
      );
      assert.equal((items[0]!.row as Json).bars, undefined, 'the payload is not answered');
      assert.match(
        textOf(r),
        /^stock_minute: 2 revisions of 2, oldest first\. Each item is one code-day block/,
      );
      // Every minute dataset's trail, paged, as the HTTP trail.
      for (const d of MINUTES) {
        const p = structured(await call(client, 'revision_trail', { dataset: d.name, limit: 1 }));
        const a = await http(`/api/v1/revisions/${d.name}?limit=1`);
        assert.deepEqual(p.items, withoutPayload(a.body.data), d.name);
        assert.equal(p.next_cursor, (a.body.meta as Json).next_cursor, d.name);
      }
      assert.match(
        errorText(await call(client, 'revision_trail', { dataset: 'stock_minute', filters: { time: 'x' } })),
        /"time" is not a filter of stock_minute; its filters: code, date, source/,
      );
    });

    test('quality_report: the minute report of GET /api/v1/quality/<minute dataset>, paged as it', async () => {
      for (const d of MINUTES) {
        for (const [args, qs] of [
          [{}, ''],
          [{ code: CODE, date_from: D2 }, `code=${CODE}&date_from=${D2}`],
          [{ limit: 1, offset: 1, order: 'desc' }, 'limit=1&offset=1&order=desc'],
          [{ source: 'nope' }, 'source=nope'],
        ] as const) {
          const page = structured(await call(client, 'quality_report', { dataset: d.name, ...args }));
          const api = await http(`/api/v1/quality/${d.name}?${qs}`);
          assert.equal(api.status, 200, JSON.stringify(api.body));
          const meta = api.body.meta as Json;
          assert.deepEqual(page.rows, api.body.data, `${d.name} ${qs}`);
          assert.deepEqual(
            [page.total, page.offset, page.daily, page.tolerance],
            [meta.total, meta.offset, meta.daily, meta.tolerance],
            `${d.name} ${qs}`,
          );
          const next = meta.has_more ? Number(meta.offset) + (api.body.data as unknown[]).length : null;
          assert.equal(page.next_offset, next, `${d.name} ${qs}`);
        }
      }
      // The minute days of 600000 have no daily bars: each is listed, and the summary says it is flagged.
      const one = await call(client, 'quality_report', { dataset: 'stock_minute', code: CODE });
      const [row] = structured(one).rows as Json[];
      assert.equal(row?.no_daily, 2);
      assert.match(
        textOf(one),
        /^stock_minute each day's minutes resampled to 1d against stock_daily: 1 code; codes 1–1 returned, 1 of them flagged/,
      );
      // The daily report's own parameters are the minute report's 4001, named.
      assert.match(
        errorText(await call(client, 'quality_report', { dataset: 'stock_minute', jump_pct: 5 })),
        /jump_pct.*\(4001\)/,
      );
      // A dataset with no report at all is named with the reason; a name that is no dataset is not.
      const none = CATALOG.datasets.find((d) => !d.blocks && !d.daily);
      assert.ok(none, 'a dataset without a quality report');
      assert.match(
        errorText(await call(client, 'quality_report', { dataset: none.name })),
        new RegExp(
          `^invalid arguments \\(4001\\): dataset must be one of: .*; "${none.name}" has no quality report`,
        ),
      );
      assert.doesNotMatch(
        errorText(await call(client, 'quality_report', { dataset: 'nope' })),
        /has no quality report/,
      );
    });

    // Last: it adds a day of 6,001 one-bar blocks that the tests above do not expect.
    test('an answer over more than 6,000 code-days of blocks is the endpoint’s 4001, not a 500', async () => {
      const D3 = '2024-03-05';
      const bars = Array.from({ length: MAX_BLOCKS + 1 }, (_, i) => ({
        ...dayBars(CODE, D3)[0]!,
        symbol: String(600000 + i),
      }));
      assert.equal((await push(h.app, batch('stock_minute', bars))).statusCode, 200);
      const api = await http(`/api/v1/stock/minute?date=${D3}`);
      assert.deepEqual([api.status, api.body.code], [400, 4001]);
      assert.equal(
        errorText(await call(client, 'query', { dataset: 'stock_minute', filters: { date: D3 } })),
        `${api.body.message as string} (4001)`,
      );
      // Narrowed as the message asks: answered.
      const one = structured(
        await call(client, 'query', { dataset: 'stock_minute', filters: { date: D3, code: '600123' } }),
      );
      assert.equal(one.total, 1);
    });
  });
}
