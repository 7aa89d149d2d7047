import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { MAX_ROW_BYTES, MAX_ROWS, TOOL_NAMES } from '../../src/mcp/tool-schemas.js';
import { QUERY_KEY, backends, freshDatabaseUrl } from '../helpers/harness.js';
import { adjFactor, batch, days, etfBar } from '../helpers/batches.js';
import { dayBars } from '../helpers/minute-bars.js';
import { sampleRow } from '../helpers/sample-rows.js';
import { call, connect, errorText, httpError, structured, textOf } from '../helpers/mcp-client.js';
import { inspectorCli } from '../helpers/mcp-inspector.js';
import { pythonHasMcp, runPython } from '../helpers/python.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { adminCall, pushBatch, usageToday as usageOf } from '../helpers/server-calls.js';
import { ROOT } from '../helpers/repo-root.js';

/**
 * The "done when", checked from outside: the built server (`node dist/bundle/main.js`) as its
 * own process, and clients we did not write — the SDK's client, the Python `mcp` package in a
 * real interpreter, the MCP Inspector's CLI — on every backend. Each answer is compared with the
 * HTTP API's for the same request; keys, limits, quota, usage, metrics and the off setting are
 * read from the server's own interfaces (/admin/api/keys, /metrics).
 */

type Json = Record<string, unknown>;

const DATES = days('2024-03-01', 31);
const calendar = DATES.map((date) => {
  const dow = new Date(`${date}T00:00:00Z`).getUTCDay();
  return { exchange: 'SSE', date, is_open: dow === 0 || dow === 6 ? 0 : 1, source: 'test' };
});
const OPEN = calendar.filter((c) => c.is_open === 1).map((c) => c.date);
const SCRIPT = path.join(ROOT, 'test', 'helpers', 'mcp_client.py');
const hasPythonMcp = pythonHasMcp();

/** Each tool once, with arguments that answer rows, and the HTTP request that answers the same. */
const EVERY_TOOL: [string, Json, string][] = [
  ['list_datasets', { dataset: 'etf_daily' }, ''],
  [
    'query',
    { dataset: 'etf_daily', filters: { code: '510300' }, adjust: 'qfq', limit: 5 },
    '/api/v1/etf/kline?code=510300&adjust=qfq&limit=5',
  ],
  ['quality_report', { dataset: 'etf_daily', limit: 5 }, '/api/v1/quality/etf_daily?limit=5'],
  [
    'revision_trail',
    { dataset: 'etf_daily', filters: { code: '510300' }, limit: 5 },
    '/api/v1/revisions/etf_daily?code=510300&limit=5',
  ],
  [
    'trading_days',
    { exchange: 'SSE', limit: 5 },
    '/api/v1/market/trade-calendar?exchange=SSE&is_open=1&fields=date,is_open,source&sort=date&order=asc&limit=5',
  ],
  ['changes', { limit: 5 }, '/api/v1/changes?limit=5'],
];

/** The rows a tool's structured content holds, under the name it gives them. */
const rowsOf = (s: Json): unknown => s.rows ?? s.items ?? s.days ?? s.datasets ?? s.events;

for (const backend of await backends()) {
  describe(`MCP from outside, the built server (${backend})`, { timeout: 600_000 }, () => {
    let db: { url: string; drop(): Promise<void> };
    let server: ServerProcess;
    let base: string;
    let client: Client;
    const http = async (p: string, headers: Json = { 'Q-API-KEY': QUERY_KEY }) => {
      const res = await fetch(new URL(p, base), { headers: headers as Record<string, string> });
      return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
    };
    const admin = (method: string, p: string, body?: Json): Promise<Json> => adminCall(base, method, p, body);
    const usageToday = (id: unknown): Promise<number> => usageOf(base, id);
    const metrics = async (): Promise<string> => (await fetch(new URL('/metrics', base))).text();
    const counter = (text: string, series: string): number =>
      Number(
        new RegExp(`^${series.replace(/[{}()[\]|.*+?^$\\]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1] ?? 0,
      );

    before(async () => {
      db = await freshDatabaseUrl(backend, { migrated: true });
      server = await startServer({ databaseUrl: db.url });
      base = server.base;
      const bars = ['510300', '510500'].flatMap((code, i) =>
        OPEN.map((date, j) => etfBar(code, date, { close: 10 + i + j / 10 })),
      );
      const companies = Array.from({ length: 120 }, (_, i) => ({
        ...sampleRow(CATALOG.byName.get('us_companies')!, i),
        sic_description: `long text ${i} `.padEnd(1000, 'x'),
      }));
      for (const b of [
        batch('etf_daily', bars),
        batch('adj_factor', [adjFactor('510300', OPEN[0]!, 1), adjFactor('510300', OPEN[10]!, 1.1)]),
        batch('trade_calendar', calendar),
        batch('us_companies', companies),
        batch('stock_minute', dayBars('600000', OPEN[0]!)),
        batch('etf_daily', [etfBar('510300', OPEN[0]!, { close: 9.9, updated_at: '2024-04-01T00:00:00Z' })]),
      ]) {
        const r = await pushBatch(server.port, JSON.stringify(b));
        assert.equal(r.status, 200, r.body);
      }
      client = await connect(base, { Authorization: `Bearer ${QUERY_KEY}` });
    });
    after(async () => {
      await client?.close();
      await server?.kill('SIGTERM');
      await db?.drop();
    });

    test('the SDK client: every tool; each tool answers what the HTTP API answers', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        [...TOOL_NAMES],
      );
      for (const [name, args, url] of EVERY_TOOL) {
        const r = await call(client, name, args);
        const s = structured(r);
        assert.deepEqual(
          JSON.parse(textOf(r).split('\n')[1]!),
          rowsOf(s),
          `${name}: the text carries the rows`,
        );
        if (!url) continue;
        const api = await http(url);
        assert.equal(api.status, 200, `${url}: ${JSON.stringify(api.body)}`);
        assert.ok((rowsOf(s) as unknown[]).length > 0, name);
        assert.deepEqual(rowsOf(s), api.body.data, name);
        assert.equal(s.total, (api.body.meta as Json).total, name);
      }
      const one = (
        structured(await call(client, 'list_datasets', { dataset: 'etf_daily' })).datasets as Json[]
      )[0]!;
      assert.equal(one.rows, ((await http('/api/v1/etf/kline?limit=1')).body.meta as Json).total);
      assert.equal(one.rows, OPEN.length * 2);
    });

    test('the SDK client: paging with the cursor reaches every row, as the HTTP pages', async () => {
      const args = { dataset: 'etf_daily', filters: { code: '510500' }, limit: 6 };
      let page = structured(await call(client, 'query', args));
      const seen = [...(page.rows as unknown[])];
      while (page.next_cursor !== null) {
        const cursor = page.next_cursor as string;
        const api = await http(`/api/v1/etf/kline?code=510500&limit=6&cursor=${cursor}`);
        page = structured(await call(client, 'query', { ...args, cursor }));
        assert.deepEqual(page.rows, api.body.data);
        seen.push(...(page.rows as unknown[]));
      }
      assert.deepEqual(seen, (await http('/api/v1/etf/kline?code=510500&limit=1000')).body.data);
      assert.equal(seen.length, OPEN.length);
    });

    test(`the SDK client: an answer stops at ${MAX_ROW_BYTES / 1024} KiB, says so, and its cursor continues`, async () => {
      const r = await call(client, 'query', { dataset: 'us_companies', limit: MAX_ROWS });
      const s = structured(r);
      const n = s.returned as number;
      assert.ok(n > 1 && n < 120, `returned ${n}`);
      assert.ok(Buffer.byteLength(JSON.stringify(s.rows)) <= MAX_ROW_BYTES);
      assert.match(
        textOf(r),
        new RegExp(
          `cut to ${n} by the 64 KiB answer size\\): call again with the same arguments and cursor "`,
        ),
      );
      const all = (await http('/api/v1/us/companies?limit=1000')).body.data as unknown[];
      const next = structured(
        await call(client, 'query', { dataset: 'us_companies', limit: MAX_ROWS, cursor: s.next_cursor }),
      );
      assert.deepEqual(
        [...(s.rows as unknown[]), ...(next.rows as unknown[])],
        all.slice(0, n + (next.returned as number)),
      );
    });

    test('the SDK client: a bad argument is a tool error naming what is allowed, counted as invalid', async () => {
      const before = counter(await metrics(), 'mds_mcp_tool_calls_total{tool="query",outcome="invalid"}');
      assert.equal(
        errorText(await call(client, 'query', { dataset: 'etf_daily', limit: 500 })),
        'invalid arguments (4001): limit must be <= 200',
      );
      assert.match(
        errorText(await call(client, 'query', { dataset: 'etf_daily', filters: { ticker: '510300' } })),
        /"ticker" is not a filter of etf_daily; its filters: code, date, source/,
      );
      const after = counter(await metrics(), 'mds_mcp_tool_calls_total{tool="query",outcome="invalid"}');
      assert.equal(after - before, 2);
    });

    test('a missing and a wrong key: 401 before any tool runs (4010, 4012)', async () => {
      await assert.rejects(connect(base, {}), httpError(401, /4010/));
      await assert.rejects(
        connect(base, { Authorization: 'Bearer wrong-key-0123456789abcdef' }),
        httpError(401, /4012/),
      );
    });

    test('a key over its rate: tool calls count, tools/list does not; 403 / 4030 with Retry-After; usage and metrics see them', async () => {
      const key = await admin('POST', '/admin/api/keys', {
        scope: 'query',
        name: 'mcp-rate',
        rate_per_minute: 3,
      });
      // The limit is per clock minute: start early in one, so the four calls share it.
      const second = new Date().getUTCSeconds();
      if (second > 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
      const refusedBefore = counter(await metrics(), 'mds_rate_limit_refusals_total{code="4030"}');
      const limited = await connect(base, { 'Q-API-KEY': key.secret as string });
      await limited.listTools();
      await limited.listTools();
      for (let i = 0; i < 3; i++)
        structured(await call(limited, 'trading_days', { exchange: 'SSE', limit: 1 }));
      await assert.rejects(
        call(limited, 'trading_days', { exchange: 'SSE' }),
        httpError(403, /"code":4030,"message":"rate limit exceeded: this key may make 3 requests per minute/),
      );
      await limited.close();
      // The refusal's own headers, as a query's.
      const raw = await fetch(new URL('/mcp', base), {
        method: 'POST',
        headers: {
          'Q-API-KEY': key.secret as string,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'trading_days', arguments: { exchange: 'SSE' } },
        }),
      });
      assert.equal(raw.status, 403);
      assert.ok(Number(raw.headers.get('retry-after')) > 0);
      assert.equal(await usageToday(key.id), 3, 'the three answered tool calls, not the protocol messages');
      const text = await metrics();
      assert.equal(counter(text, 'mds_rate_limit_refusals_total{code="4030"}') - refusedBefore, 2);
      assert.ok(counter(text, 'mds_mcp_tool_calls_total{tool="trading_days",outcome="ok"}') >= 3);
      assert.ok(counter(text, 'mds_http_requests_total{route="/mcp",method="POST",status="403"}') >= 2);
    });

    test('a key over its daily quota: 403 / 4031', async () => {
      const key = await admin('POST', '/admin/api/keys', {
        scope: 'query',
        name: 'mcp-quota',
        daily_quota: 2,
      });
      const limited = await connect(base, { 'Q-API-KEY': key.secret as string });
      for (let i = 0; i < 2; i++) structured(await call(limited, 'list_datasets', {}));
      await assert.rejects(call(limited, 'list_datasets', {}), httpError(403, /"code":4031/));
      await limited.close();
      assert.equal(await usageToday(key.id), 2);
    });

    test(
      'the Python mcp client: every tool, a page by cursor and a bad argument, as the HTTP API',
      { skip: !hasPythonMcp },
      async () => {
        const calls = [
          ...EVERY_TOOL.map(([name, args]) => [name, args]),
          ['query', { dataset: 'etf_daily', limit: 0 }],
        ];
        const out = JSON.parse(await runPython([SCRIPT, base, QUERY_KEY, JSON.stringify(calls)])) as {
          tools: string[];
          calls: Json[];
        };
        assert.deepEqual(out.tools, [...TOOL_NAMES]);
        for (const [i, [name, , url]] of EVERY_TOOL.entries()) {
          const s = out.calls[i]!.structured as Json;
          assert.ok(s, `${name}: ${JSON.stringify(out.calls[i])}`);
          if (url) assert.deepEqual(rowsOf(s), (await http(url)).body.data, name);
        }
        assert.equal(out.calls.at(-1)!.error, 'invalid arguments (4001): limit must be >= 1');
        const first = out.calls[1]!.structured as Json;
        const next = JSON.parse(
          await runPython([
            SCRIPT,
            base,
            QUERY_KEY,
            JSON.stringify([['query', { ...EVERY_TOOL[1]![1], cursor: first.next_cursor }]]),
          ]),
        ) as { calls: Json[] };
        const api = await http(
          `/api/v1/etf/kline?code=510300&adjust=qfq&limit=5&cursor=${first.next_cursor as string}`,
        );
        assert.deepEqual((next.calls[0]!.structured as Json).rows, api.body.data);
      },
    );

    test('the MCP Inspector CLI: lists the tools, calls query with a bearer as the HTTP API; a wrong key fails', async (t) => {
      const found = await inspectorCli();
      if ('skip' in found) {
        console.warn(`# ${found.skip}`);
        t.skip(found.skip);
        return;
      }
      const inspect = (key: string, ...args: string[]) =>
        promisify(execFile)(process.execPath, [
          found.cli,
          '--cli',
          `${base}/mcp`,
          '--transport',
          'http',
          '--header',
          `Authorization: Bearer ${key}`,
          ...args,
        ]);
      const list = JSON.parse((await inspect(QUERY_KEY, '--method', 'tools/list')).stdout) as {
        tools: Json[];
      };
      assert.deepEqual(
        list.tools.map((x) => x.name),
        [...TOOL_NAMES],
      );
      const r = JSON.parse(
        (
          await inspect(
            QUERY_KEY,
            '--method',
            'tools/call',
            '--tool-name',
            'query',
            '--tool-arg',
            'dataset=etf_daily',
            '--tool-arg',
            'limit=3',
          )
        ).stdout,
      ) as Json;
      const api = await http('/api/v1/etf/kline?limit=3');
      assert.deepEqual((r.structuredContent as Json).rows, api.body.data);
      await assert.rejects(inspect('wrong-key-0123456789abcdef', '--method', 'tools/list'), /401|4012/);
    });
  });
}

test('MDS_MCP=off on the built server: /mcp is 404, the query API still answers', async () => {
  const db = await freshDatabaseUrl('sqlite');
  const server = await startServer({ databaseUrl: db.url, env: { MDS_MCP: 'off' } });
  try {
    const res = await fetch(new URL('/mcp', server.base), {
      method: 'POST',
      headers: {
        'Q-API-KEY': QUERY_KEY,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(res.status, 404);
    await assert.rejects(connect(server.base, { 'Q-API-KEY': QUERY_KEY }), /404/);
    const api = await fetch(new URL('/api/v1/etf/kline', server.base), {
      headers: { 'Q-API-KEY': QUERY_KEY },
    });
    assert.equal(api.status, 200);
  } finally {
    await server.kill('SIGTERM');
    await db.drop();
  }
});
