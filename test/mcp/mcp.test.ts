import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MemoryLimiter } from '../../src/access/memory-limiter.js';
import { KeyService } from '../../src/access/key-service.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { MAX_ROW_BYTES, MAX_ROWS } from '../../src/mcp/tool-schemas.js';
import { endpointParameters, QUERY_PARAMETERS, type QueryParameter } from '../../src/query/query-params.js';
import { QUERY_KEY, backends, push, startApp, type Harness } from '../helpers/harness.js';
import { adjFactor, batch, days, etfBar } from '../helpers/batches.js';
import { sampleRow } from '../helpers/sample-rows.js';
import { call, connect, errorText, httpError, serveMcp, structured, textOf } from '../helpers/mcp-client.js';

/**
 * POST /mcp from outside, with the SDK's own client over HTTP against a listening service, on
 * every backend. Every tool's answer is compared with the HTTP API's answer to the same request.
 */

/** 12:00:30 UTC: the limiter's clock, fixed so no minute boundary passes during a test. */
const T0 = Date.UTC(2030, 0, 15, 12, 0, 30);
const DATES = days('2024-03-01', 40);
const CODES = ['510300', '510500', '159915'];

/** The SSE calendar over DATES: weekends closed. */
const calendar = DATES.map((date) => {
  const dow = new Date(`${date}T00:00:00Z`).getUTCDay();
  return { exchange: 'SSE', date, is_open: dow === 0 || dow === 6 ? 0 : 1, source: 'test' };
});
const OPEN = calendar.filter((c) => c.is_open === 1).map((c) => c.date);

type Json = Record<string, unknown>;

for (const backend of await backends()) {
  describe(`MCP endpoint (${backend})`, () => {
    let h: Harness;
    let base: string;
    let client: Client;
    let close: (() => Promise<void>) | undefined;
    let between = '';
    const http = async (path: string, key = QUERY_KEY): Promise<{ status: number; body: Json }> => {
      const res = await fetch(new URL(path, base), { headers: { 'Q-API-KEY': key } });
      return { status: res.status, body: (await res.json()) as Json };
    };

    before(async () => {
      h = await startApp(backend, {}, { limiter: new MemoryLimiter({ now: () => T0 }) });
      const bars = CODES.flatMap((code, i) =>
        OPEN.map((date, j) => etfBar(code, date, { close: 10 + i + j / 10, volume: 1000 + j })),
      );
      const companies = Array.from({ length: 150 }, (_, i) => ({
        ...sampleRow(CATALOG.byName.get('us_companies')!, i),
        sic_description: `long text ${i} `.padEnd(1000, 'x'),
      }));
      for (const b of [
        batch('etf_daily', bars),
        batch('adj_factor', [adjFactor('510300', '2024-03-01', 1), adjFactor('510300', '2024-03-20', 1.5)]),
        batch('trade_calendar', calendar),
        batch('us_companies', companies),
      ]) {
        const res = await push(h.app, b);
        assert.equal(res.statusCode, 200, res.body);
      }
      // A correction: the trail of 510300 on the first day has two versions; as_of `between`
      // sees the first.
      await new Promise((r) => setTimeout(r, 5));
      between = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      const fix = batch('etf_daily', [
        etfBar('510300', OPEN[0]!, { close: 99, updated_at: '2024-04-01T00:00:00Z' }),
      ]);
      assert.equal((await push(h.app, fix)).statusCode, 200);
      ({ base, client, close } = await serveMcp(h));
    });
    after(async () => {
      await (close ?? (() => h?.close()))();
    });

    test('tools/list: the seven tools, the dataset enum from the catalog, read-only', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        ['list_datasets', 'query', 'quality_report', 'revision_trail', 'trading_days', 'universe', 'changes'],
      );
      const query = tools.find((t) => t.name === 'query')!;
      const props = query.inputSchema.properties as Record<string, Json>;
      assert.deepEqual(
        props.dataset!.enum,
        CATALOG.datasets.map((d) => d.name),
      );
      for (const p of [
        'filters',
        'date_from',
        'date_to',
        'as_of',
        'adjust',
        'interval',
        'cursor',
        'fields',
        'sort',
      ])
        assert.ok(props[p], p);
      assert.equal(props.format, undefined);
      assert.equal(props.limit!.maximum, MAX_ROWS);
      // The arguments' words are the HTTP parameters' declarations (query-params.ts): the same words
      // where every dataset has them, else the declaration's summary, which each such one has.
      const declared = QUERY_PARAMETERS as Record<string, QueryParameter<unknown>>;
      for (const [name, p] of Object.entries(declared)) {
        const words = new Set(
          CATALOG.datasets.flatMap((d) =>
            endpointParameters(d, 'rows')
              .filter((e) => e.name === name)
              .map((e) => e.description),
          ),
        );
        if (words.size > 1)
          assert.ok(p.summary, `${name}: its words differ by dataset, and it has no summary`);
        if (!props[name] || ['limit', 'cursor'].includes(name)) continue;
        const expected = words.size === 1 ? [...words][0]! : p.summary!;
        assert.ok(
          String(props[name]!.description).startsWith(expected),
          `${name}: ${String(props[name]!.description)}`,
        );
      }
      assert.match(
        String(props.time_from!.description),
        /\. Datasets: stock_minute, etf_minute, index_minute$/,
      );
      assert.ok(tools.every((t) => t.annotations?.readOnlyHint === true && t.outputSchema));
    });

    test('list_datasets: every dataset with what is stored; one dataset with its fields', async () => {
      const all = structured(await call(client, 'list_datasets', {}));
      const list = all.datasets as Json[];
      assert.equal(list.length, CATALOG.datasets.length);
      const etf = list.find((d) => d.name === 'etf_daily')!;
      assert.deepEqual(
        { rows: etf.rows, first: etf.first_date, last: etf.last_date, filters: etf.filters },
        {
          rows: CODES.length * OPEN.length,
          first: OPEN[0],
          last: OPEN.at(-1),
          filters: ['code', 'date', 'source'],
        },
      );
      const one = structured(await call(client, 'list_datasets', { dataset: 'etf_daily' }));
      const [d] = one.datasets as Json[];
      assert.deepEqual(
        (d!.fields as Json[]).map((f) => f.name),
        CATALOG.byName.get('etf_daily')!.rowFields.map((f) => f.apiName),
      );
      assert.ok((d!.parameters as string[]).includes('adjust'));
      const close = (d!.fields as Json[]).find((f) => f.name === 'close')!;
      assert.equal(close.unit, CATALOG.byName.get('etf_daily')!.fieldByApiName.get('close')!.unit);
      assert.ok(close.unit);
    });

    test('query: the same rows, total and cursor as GET on the endpoint; paging by cursor reaches every row', async () => {
      const r = await call(client, 'query', { dataset: 'etf_daily', filters: { code: '510300' }, limit: 7 });
      const page = structured(r);
      const api = await http('/api/v1/etf/kline?code=510300&limit=7');
      const meta = api.body.meta as Json;
      assert.deepEqual(page.rows, api.body.data);
      assert.equal(page.total, meta.total);
      assert.equal(page.next_cursor, meta.next_cursor);
      assert.equal(page.has_more, true);
      const text = textOf(r);
      assert.match(
        text,
        /^etf_daily: 7 rows of 28, date 2024-04-01 … 2024-04-09\. More: call again with the same arguments and cursor "/,
      );
      assert.deepEqual(JSON.parse(text.split('\n')[1]!), page.rows);

      const seen: unknown[] = [...(page.rows as unknown[])];
      let cursor = page.next_cursor as string | null;
      while (cursor !== null) {
        const next = structured(
          await call(client, 'query', {
            dataset: 'etf_daily',
            filters: { code: '510300' },
            limit: 7,
            cursor,
          }),
        );
        const apiNext = await http(`/api/v1/etf/kline?code=510300&limit=7&cursor=${cursor}`);
        assert.deepEqual(next.rows, apiNext.body.data);
        seen.push(...(next.rows as unknown[]));
        cursor = next.next_cursor as string | null;
      }
      assert.deepEqual(seen, (await http('/api/v1/etf/kline?code=510300&limit=1000')).body.data);
    });

    test('query: adjust, interval, fields, sort and as_of answer as the HTTP API does', async () => {
      const cases: [Json, string][] = [
        [{ filters: { code: '510300' }, adjust: 'qfq', limit: 30 }, 'code=510300&adjust=qfq&limit=30'],
        [{ filters: { code: '510500' }, interval: '1w', limit: 10 }, 'code=510500&interval=1w&limit=10'],
        [
          { filters: { code: ['510300', '510500.SH'] }, date_from: '20240401', limit: 100 },
          'code=510300&code=510500.SH&date_from=20240401&limit=100',
        ],
        [
          {
            fields: ['code', 'date', 'close'],
            sort: 'close',
            order: 'asc',
            date_from: '2024-03-10',
            limit: 20,
          },
          'fields=code,date,close&sort=close&order=asc&date_from=2024-03-10&limit=20',
        ],
        [
          { filters: { code: '510300', date: OPEN[0]! }, as_of: between },
          `code=510300&date=${OPEN[0]!}&as_of=${between}`,
        ],
      ];
      const codes = new Set<unknown>();
      for (const [args, qs] of cases) {
        const page = structured(await call(client, 'query', { dataset: 'etf_daily', ...args }));
        const api = await http(`/api/v1/etf/kline?${qs}`);
        assert.equal(api.status, 200, JSON.stringify(api.body));
        assert.ok((page.rows as unknown[]).length > 0, qs);
        assert.deepEqual(page.rows, api.body.data, qs);
        assert.equal(page.total, (api.body.meta as Json).total, qs);
        if ((api.body.meta as Json).adjust) assert.deepEqual(page.adjust, (api.body.meta as Json).adjust);
        if (qs.includes('as_of'))
          assert.equal((page.rows as Json[])[0]!.close, 10, 'the version before the fix');
        if (qs.includes('510500.SH')) for (const r of page.rows as Json[]) codes.add(r.code);
      }
      assert.deepEqual([...codes].sort(), ['510300', '510500']);
    });

    test(`query: an answer stops at ${MAX_ROW_BYTES / 1024} KiB of rows, and its cursor continues exactly`, async () => {
      const first = await call(client, 'query', { dataset: 'us_companies', limit: MAX_ROWS });
      const page = structured(first);
      const n = page.returned as number;
      assert.ok(n > 1 && n < 150, `returned ${n}`);
      assert.ok(Buffer.byteLength(JSON.stringify(page.rows)) <= MAX_ROW_BYTES);
      assert.match(textOf(first), /cut to \d+ by the 64 KiB answer size/);
      const all = (await http('/api/v1/us/companies?limit=1000')).body.data as unknown[];
      assert.deepEqual(page.rows, all.slice(0, n));
      const second = structured(
        await call(client, 'query', { dataset: 'us_companies', limit: MAX_ROWS, cursor: page.next_cursor }),
      );
      assert.deepEqual(second.rows, all.slice(n, n + (second.returned as number)));
    });

    test('bad arguments are tool errors naming what is allowed', async () => {
      const cases: [Json, RegExp][] = [
        [{ dataset: 'etf_dialy' }, /dataset must be one of: etf_daily, index_daily/],
        [
          { dataset: 'etf_daily', code: '510300' },
          /unknown argument "code"; dataset filters go in "filters"/,
        ],
        [
          { dataset: 'etf_daily', filters: { ticker: 'X' } },
          /"ticker" is not a filter of etf_daily; its filters: code, date, source/,
        ],
        [{ dataset: 'etf_daily', limit: 500 }, /limit must be <= 200/],
        [
          { dataset: 'etf_daily', date_from: '2024-02-30' },
          /date_from must be a real date YYYY-MM-DD or YYYYMMDD \(got "2024-02-30"\) \(4001\)/,
        ],
        [{ dataset: 'etf_daily', sort: 'price' }, /sort must be one of: code, date, open/],
        [{ dataset: 'etf_daily', adjust: 'forward' }, /adjust must be one of: none, qfq, hfq/],
        [{ dataset: 'us_companies', adjust: 'qfq' }, /unknown parameter "adjust"; allowed: cik, ticker/],
        [{ dataset: 'etf_daily', cursor: 'abc' }, /cursor is malformed/],
      ];
      for (const [args, re] of cases) assert.match(errorText(await call(client, 'query', args)), re);
      assert.match(
        errorText(await call(client, 'quality_report', { dataset: 'etf_daily', sort: 'worst' })),
        /sort must be one of: code/,
      );
    });

    test('quality_report: the rows, total and calendar of GET /api/v1/quality/{dataset}', async () => {
      const page = structured(await call(client, 'quality_report', { dataset: 'etf_daily', limit: 2 }));
      const api = await http('/api/v1/quality/etf_daily?limit=2');
      assert.deepEqual(page.rows, api.body.data);
      assert.equal(page.total, (api.body.meta as Json).total);
      assert.equal(page.exchange, 'SSE');
      assert.equal(page.next_offset, 2);
      assert.deepEqual(page.calendar, (api.body.meta as Json).calendar);
      assert.deepEqual(page.calendar, { from: DATES[0], to: DATES.at(-1) });
      // A window reaching past the stored calendar: the days outside it are unjudged, as on HTTP.
      const wide = await call(client, 'quality_report', {
        dataset: 'etf_daily',
        code: '510300',
        date_from: '2024-01-01',
      });
      const apiWide = await http('/api/v1/quality/etf_daily?code=510300&date_from=2024-01-01');
      assert.deepEqual(structured(wide).rows, apiWide.body.data);
      assert.deepEqual(structured(wide).calendar, (apiWide.body.meta as Json).calendar);
      // The checks' threshold passes through too (closes here move 1 % a day: jumps only below it).
      const low = structured(
        await call(client, 'quality_report', { dataset: 'etf_daily', code: '510300', jump_pct: 0.5 }),
      );
      const apiLow = await http('/api/v1/quality/etf_daily?code=510300&jump_pct=0.5');
      assert.deepEqual(low.rows, apiLow.body.data);
      assert.ok(((low.rows as Json[])[0]!.jumps as unknown[]).length > 0);
      assert.match(
        textOf(wide),
        new RegExp(
          `^etf_daily judged by the SSE calendar \\(stored ${DATES[0]} … ${DATES.at(-1)}\\): 1 code;`,
        ),
      );
    });

    test('revision_trail: one row key’s versions, as GET /api/v1/revisions/{dataset}', async () => {
      const args = { dataset: 'etf_daily', filters: { code: '510300', date: OPEN[0]! } };
      const page = structured(await call(client, 'revision_trail', args));
      const api = await http(`/api/v1/revisions/etf_daily?code=510300&date=${OPEN[0]!}`);
      assert.deepEqual(page.items, api.body.data);
      assert.equal((page.items as Json[]).length, 2);
      assert.deepEqual(
        (page.items as Json[]).map((i) => (i.row as Json).close),
        [10, 99],
      );
    });

    test('trading_days: the open days of the calendar, paged', async () => {
      const page = structured(await call(client, 'trading_days', { exchange: 'SSE', limit: 10 }));
      assert.deepEqual(
        (page.days as Json[]).map((d) => d.date),
        OPEN.slice(0, 10),
      );
      assert.equal(page.total, OPEN.length);
      const rest = structured(
        await call(client, 'trading_days', { exchange: 'SSE', limit: 1000, cursor: page.next_cursor }),
      );
      assert.deepEqual(
        (rest.days as Json[]).map((d) => d.date),
        OPEN.slice(10),
      );
      const every = structured(
        await call(client, 'trading_days', { exchange: 'SSE', open_only: false, date_to: '2024-03-10' }),
      );
      assert.equal(every.total, 10);
      assert.deepEqual(every.calendar, { from: DATES[0], to: DATES.at(-1) });
      assert.doesNotMatch(
        textOf(await call(client, 'trading_days', { exchange: 'SSE', date_to: '2024-03-10' })),
        /unknown/,
      );
    });

    test('trading_days says when the range asked reaches beyond the stored calendar', async () => {
      const wide = await call(client, 'trading_days', {
        exchange: 'SSE',
        date_from: '20240201',
        date_to: '2024-06-30',
      });
      assert.match(
        textOf(wide),
        new RegExp(
          `^SSE: ${OPEN.length} trading days of ${OPEN.length}, date ${OPEN[0]} … ${OPEN.at(-1)}\\. ` +
            `The stored calendar starts on ${DATES[0]}, after date_from 2024-02-01: the days before it are unknown\\. ` +
            `The stored calendar ends on ${DATES.at(-1)}, before date_to 2024-06-30: the days after it are unknown\\. ` +
            'This is the last page\\.\n',
        ),
      );
      const none = await call(client, 'trading_days', { exchange: 'SZSE' });
      assert.match(
        textOf(none),
        /^SZSE: 0 trading days of 0\. No calendar of it is stored: no day is known\./,
      );
      assert.equal(structured(none).calendar, null);
    });

    test('changes: the change feed as GET /api/v1/changes pages it, followed by next_since', async () => {
      const api = (
        await h.app.inject({ url: '/api/v1/changes?limit=1000', headers: { 'q-api-key': QUERY_KEY } })
      ).json() as Json;
      const all = api.data as Json[];
      assert.ok(all.length >= 2);
      const first = structured(await call(client, 'changes', { limit: 1 }));
      assert.deepEqual(first.events, all.slice(0, 1));
      assert.equal(first.has_more, true);
      const rest = structured(await call(client, 'changes', { since: first.next_since, limit: 100 }));
      assert.deepEqual(rest.events, all.slice(1, 100));
      const only = structured(await call(client, 'changes', { datasets: ['trade_calendar'] }));
      assert.ok(
        (only.events as Json[]).every((e) => e.dataset === 'trade_calendar' && e.kind === 'calendar_change'),
      );
      const gone = await call(client, 'changes', { since: ((api.meta as Json).latest_id as number) + 1 });
      assert.equal(gone.isError, true);
    });

    test('the key: a bearer works; missing and wrong keys are 401 before any tool runs', async () => {
      const bearer = await connect(base, { Authorization: `Bearer ${QUERY_KEY}` });
      assert.equal(structured(await call(bearer, 'query', { dataset: 'etf_daily', limit: 1 })).returned, 1);
      await bearer.close();
      await assert.rejects(connect(base, {}), /401[\s\S]*4010|missing API key/);
      await assert.rejects(
        connect(base, { 'Q-API-KEY': 'wrong-key-0123456789' }),
        /401[\s\S]*4012|invalid API key/,
      );
    });

    test('a key over its limit: tool calls count like queries, the refusal is 403 / 4030; usage and metrics see them', async () => {
      const keys = new KeyService(h.store);
      const { secret, key } = await keys.create({ scope: 'query', rate_per_minute: 3 });
      const limited = await connect(base, { 'Q-API-KEY': secret });
      await limited.listTools(); // protocol messages are not counted
      for (let i = 0; i < 3; i++) await call(limited, 'list_datasets', {});
      await assert.rejects(
        call(limited, 'list_datasets', {}),
        httpError(403, /"code":4030,"message":"rate limit exceeded: this key may make 3 requests per minute/),
      );
      await limited.close();
      await h.app.services.usage.flush();
      const usage = await h.store.keys.usage('2000-01-01T00');
      assert.equal(
        usage.filter((u) => u.key_id === key.id).reduce((s, u) => s + u.count, 0),
        3,
      );
      const metrics = await (await fetch(new URL('/metrics', base))).text();
      assert.match(metrics, /mds_mcp_tool_calls_total\{tool="list_datasets",outcome="ok"\} \d+/);
      assert.match(metrics, /mds_mcp_tool_calls_total\{tool="query",outcome="invalid"\} \d+/);
      assert.match(metrics, /mds_rate_limit_refusals_total\{code="4030"\} 1/);
      assert.match(metrics, /mds_http_requests_total\{route="\/mcp",method="POST",status="403"\} 1/);
    });

    test('GET and DELETE /mcp are 405 (stateless: no stream, no session)', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(new URL('/mcp', base), { method, headers: { 'Q-API-KEY': QUERY_KEY } });
        assert.equal(res.status, 405);
        assert.equal(res.headers.get('allow'), 'POST');
      }
    });
  });
}

test('MDS_MCP=off: no endpoint', async () => {
  const h = await startApp('sqlite', { MDS_MCP: 'off' });
  try {
    const res = await h.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'q-api-key': QUERY_KEY, 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(res.statusCode, 404);
  } finally {
    await h.close();
  }
});
