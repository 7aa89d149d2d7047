// MCP requests cannot take a process from other clients, from outside: the built server as its own
// process on every backend, raw JSON-RPC batches on fresh connections, a probe in its own process.
// - tool calls in flight per key (MDS_MCP_CALLS_PER_KEY) and per process (_PER_PROCESS) bounded:
//   batch answers of 13 MB that their clients do not read hold their places; one more is refused
//   with Retry-After (429 / 4292, 503 / 5033) while another key's page and /health are answered;
// - a batch holds at most MDS_MCP_BATCH_CALLS tool calls (413 / 4131), counted as its calls;
// - a batch with fewer requests left than calls runs those counted and refuses the rest; a batch
//   refused whole counts nothing;
// - a statement past its deadline and an unreachable database are tool errors 5040 / 5030, in
//   /metrics as `timeout` / `unavailable`;
// - every 405 of /mcp says `Allow: POST`.
// The one timing bound (a probe's answers within 2 s) is far beyond any answer here.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { CATALOG } from '../../src/catalog/catalog.js';
import { QUERY_KEY, backends } from '../helpers/harness.js';
import { batch, days, uniqueId } from '../helpers/batches.js';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { sampleRow } from '../helpers/sample-rows.js';
import { probe } from '../helpers/probe.js';
import { pgProxy, viaPort } from '../helpers/postgres.js';
import { request, serverOnFreshDatabase, startServer } from '../helpers/server-process.js';
import { sleep, type ServerProcess } from '../helpers/server-process.js';
import { adminCall, pushBatch, usageToday as usageOf } from '../helpers/server-calls.js';

type Json = Record<string, unknown>;

const OTHER_KEY = 'other-query-key-0123456789';
const THIRD_KEY = 'third-query-key-0123456789';
const KEYS = `${QUERY_KEY},${OTHER_KEY},${THIRD_KEY}`;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
/** Sorted on an unindexed field: never a bounded read, so it runs under the query deadline. */
const HEAVY = { dataset: 'etf_daily', filters: { source: 'bulk' }, sort: 'close', order: 'desc', limit: 200 };
/** 64 KiB of rows per answer (us_companies' long descriptions): a batch of 100 answers 13 MB. */
const BIG = { dataset: 'us_companies', limit: 200 };

const toolCall = (id: number, name: string, args: Json): Json => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const calls = (n: number, name: string, args: Json): Json[] =>
  Array.from({ length: n }, (_, i) => toolCall(i + 1, name, args));

/** POST /mcp on a fresh connection, the whole answer read. */
const mcp = (port: number, key: string, body: unknown) =>
  request(port, {
    method: 'POST',
    path: '/mcp',
    headers: { ...MCP_HEADERS, 'q-api-key': key },
    body: JSON.stringify(body),
  });

/** A batch whose client reads its answer's headers and then nothing: its answer stays on the server. */
function unread(port: number, key: string, body: unknown): Promise<{ status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: { ...MCP_HEADERS, 'q-api-key': key, 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        res.pause();
        resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** Tool results of a JSON-RPC batch answer, by id. */
function results(body: string): Map<number, { isError?: boolean; text: string }> {
  const answers = JSON.parse(body) as {
    id: number;
    result: { isError?: boolean; content: { text: string }[] };
  }[];
  return new Map(answers.map((a) => [a.id, { isError: a.result.isError, text: a.result.content[0]!.text }]));
}

const codeOf = (body: string): number => (JSON.parse(body) as { code: number }).code;

for (const backend of await backends()) {
  describe(`MCP requests bounded, from outside (${backend})`, { timeout: 600_000 }, () => {
    const fx = serverOnFreshDatabase(backend, { MDS_QUERY_KEYS: KEYS });
    let server: ServerProcess;
    const admin = (method: string, p: string, body?: Json): Promise<Json> =>
      adminCall(server.base, method, p, body);
    const usageToday = (id: unknown): Promise<number> => usageOf(server.base, id);
    const metric = async (series: string): Promise<number> => {
      const text = await (await fetch(new URL('/metrics', server.base))).text();
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return Number(line?.split(' ')[1] ?? 0);
    };

    before(async () => {
      server = await fx.start({ env: { MDS_MCP_CALLS_PER_PROCESS: '150' } });
      const companies = Array.from({ length: 120 }, (_, i) => ({
        ...sampleRow(CATALOG.byName.get('us_companies')!, i),
        sic_description: `long text ${i} `.padEnd(1000, 'x'),
      }));
      const calendar = days('2024-03-01', 31).map((date) => ({
        exchange: 'SSE',
        date,
        is_open: 1,
        source: 't',
      }));
      for (const body of [
        JSON.stringify(batch('us_companies', companies)),
        JSON.stringify(batch('trade_calendar', calendar)),
        bigEtfBatch(30_000, 'bulk', uniqueId('bulk')).body,
      ]) {
        const r = await pushBatch(server.port, body);
        assert.equal(r.status, 200, r.body.slice(0, 300));
      }
    });
    after(() => fx.stop());

    it('unread batch answers hold their places: one more is 429 / 4292 for the key, 503 / 5033 for the process; others answered', async () => {
      const held: { close(): void }[] = [];
      try {
        // The key's 100 places (MDS_MCP_CALLS_PER_KEY's default): one batch, its 13 MB answer unread.
        const first = await unread(server.port, QUERY_KEY, calls(100, 'query', BIG));
        assert.equal(first.status, 200);
        held.push(first);
        const more = await mcp(server.port, QUERY_KEY, calls(1, 'query', BIG));
        assert.equal(more.status, 429, more.body.slice(0, 300));
        assert.equal(codeOf(more.body), 4292);
        assert.match(more.body, /MDS_MCP_CALLS_PER_KEY/);
        assert.equal(more.headers['retry-after'], '2');
        // Another key takes the process's last 50 places; even its tools/list is then 503.
        const other = await unread(server.port, OTHER_KEY, calls(50, 'query', BIG));
        assert.equal(other.status, 200);
        held.push(other);
        const full = await mcp(server.port, OTHER_KEY, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
        assert.equal(full.status, 503, full.body.slice(0, 300));
        assert.equal(codeOf(full.body), 5033);
        assert.equal(full.headers['retry-after'], '2');
        // Meanwhile a third key's page and /health, from another process on fresh connections.
        const probed = await probe(
          server.port,
          [
            ...Array.from({ length: 10 }, () => ({ path: '/health' })),
            ...Array.from({ length: 5 }, () => ({
              path: '/api/v1/us/companies?limit=5',
              headers: { 'q-api-key': THIRD_KEY },
            })),
          ],
          10_000,
        );
        for (const p of probed) {
          assert.equal(p.status, 200, JSON.stringify(p));
          assert.ok(p.ms < 2000, JSON.stringify(p));
        }
      } finally {
        for (const h of held) h.close();
      }
      // The places come back when their clients go.
      for (let i = 0; ; i++) {
        const again = await mcp(server.port, QUERY_KEY, calls(1, 'query', { ...BIG, limit: 1 }));
        if (again.status === 200) break;
        assert.ok(i < 50, `still refused: ${again.body.slice(0, 300)}`);
        await sleep(100);
      }
    });

    it("a batch heavier than the key's limit runs alone; its answer not taken within MDS_EXPORT_STALL_TIMEOUT_MS is cut off", async () => {
      const s = await startServer({
        databaseUrl: fx.url,
        env: { MDS_QUERY_KEYS: KEYS, MDS_EXPORT_STALL_TIMEOUT_MS: '1500', MDS_MCP_CALLS_PER_KEY: '50' },
      });
      try {
        // Heavier than the key's limit, admitted while the key holds nothing.
        const u = await unread(s.port, QUERY_KEY, calls(100, 'query', BIG));
        assert.equal(u.status, 200);
        const refused = await mcp(s.port, QUERY_KEY, calls(1, 'query', { ...BIG, limit: 1 }));
        assert.equal(refused.status, 429, refused.body.slice(0, 300));
        // The unread client keeps its connection open; the server ends it.
        for (let i = 0; ; i++) {
          await sleep(250);
          const again = await mcp(s.port, QUERY_KEY, calls(1, 'query', { ...BIG, limit: 1 }));
          if (again.status === 200) break;
          assert.ok(i < 40, `still refused after ${(i + 1) * 250} ms: ${again.body.slice(0, 300)}`);
        }
        u.close();
      } finally {
        await s.kill('SIGKILL');
      }
    });

    it('a batch of more than MDS_MCP_BATCH_CALLS tool calls is 413 / 4131 and counts nothing', async () => {
      const key = await admin('POST', '/admin/api/keys', {
        scope: 'query',
        name: 'mcp-cap',
        daily_quota: 1000,
      });
      const secret = key.secret as string;
      const res = await mcp(server.port, secret, calls(101, 'trading_days', { exchange: 'SSE', limit: 1 }));
      assert.equal(res.status, 413, res.body.slice(0, 300));
      assert.equal(codeOf(res.body), 4131);
      assert.match(res.body, /101 tool calls; at most 100/);
      assert.equal(await usageToday(key.id), 0);
      const ok = await mcp(server.port, secret, calls(100, 'trading_days', { exchange: 'SSE', limit: 1 }));
      assert.equal(ok.status, 200);
      assert.equal([...results(ok.body).values()].filter((r) => r.isError).length, 0);
      assert.equal(await usageToday(key.id), 100, 'a batch counts as its calls');
    });

    it('a batch with fewer requests left than calls runs those counted; refused whole, it counts nothing', async () => {
      const key = await admin('POST', '/admin/api/keys', {
        scope: 'query',
        name: 'mcp-partial',
        rate_per_minute: 5,
        daily_quota: 1000,
      });
      const secret = key.secret as string;
      // The rate is per clock minute: start early in one, so the batches share it.
      const second = new Date().getUTCSeconds();
      if (second > 45) await sleep((61 - second) * 1000);
      const first = await mcp(server.port, secret, calls(3, 'trading_days', { exchange: 'SSE', limit: 1 }));
      assert.equal(first.status, 200);
      const second2 = await mcp(server.port, secret, calls(3, 'trading_days', { exchange: 'SSE', limit: 1 }));
      assert.equal(second2.status, 200, second2.body.slice(0, 300));
      const r = results(second2.body);
      assert.equal(r.get(1)?.isError, undefined, r.get(1)?.text);
      assert.equal(r.get(2)?.isError, undefined, r.get(2)?.text);
      assert.equal(r.get(3)?.isError, true, second2.body.slice(0, 2000) + JSON.stringify(second2.headers));
      assert.match(
        r.get(3)!.text,
        /rate limit exceeded: this key may make 5 requests per minute; retry in \d+ s \(4030\)/,
      );
      assert.match(String(second2.headers.ratelimit), /"minute";r=0/);
      const refused = await mcp(server.port, secret, calls(2, 'trading_days', { exchange: 'SSE', limit: 1 }));
      assert.equal(refused.status, 403);
      assert.equal(codeOf(refused.body), 4030);
      assert.ok(Number(refused.headers['retry-after']) > 0);
      assert.equal(await usageToday(key.id), 5, 'the five calls that ran, nothing of the refusals');
      assert.ok((await metric('mds_mcp_tool_calls_total{tool="trading_days",outcome="refused"}')) >= 1);
    });

    it('every 405 of /mcp says Allow: POST', async () => {
      for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
        const res = await request(server.port, { method, path: '/mcp', headers: { 'q-api-key': QUERY_KEY } });
        assert.equal(res.status, 405, `${method}: ${res.body.slice(0, 200)}`);
        assert.equal(res.headers.allow, 'POST', method);
      }
    });

    it('a statement past MDS_QUERY_TIMEOUT_MS is a tool error with 5040, counted as timeout', async () => {
      server = await fx.start({ env: { MDS_QUERY_TIMEOUT_MS: '1' } });
      const res = await mcp(server.port, QUERY_KEY, calls(3, 'query', HEAVY));
      assert.equal(res.status, 200, res.body.slice(0, 300));
      for (const [, r] of results(res.body)) {
        assert.equal(r.isError, true, r.text.slice(0, 200));
        assert.match(r.text, /\(5040\)/);
      }
      assert.equal(await metric('mds_mcp_tool_calls_total{tool="query",outcome="timeout"}'), 3);
      assert.equal(await metric('mds_mcp_tool_calls_total{tool="query",outcome="error"}'), 0);
    });

    if (backend === 'postgres')
      it('the database unreachable: a tool error with 5030 and the wait, counted as unavailable', async () => {
        await fx.stop();
        const proxy = await pgProxy();
        await proxy.start();
        let viaProxy: ServerProcess | null = null;
        try {
          viaProxy = await startServer({
            databaseUrl: viaPort(fx.url, proxy.port),
            env: { MDS_QUERY_KEYS: KEYS },
          });
          server = viaProxy;
          const warm = await mcp(server.port, QUERY_KEY, calls(1, 'query', { ...BIG, limit: 1 }));
          assert.equal(warm.status, 200);
          await proxy.stop();
          const res = await mcp(server.port, QUERY_KEY, calls(2, 'query', { ...BIG, limit: 1 }));
          assert.equal(res.status, 200, res.body.slice(0, 300));
          for (const [, r] of results(res.body)) {
            assert.equal(r.isError, true, r.text.slice(0, 200));
            assert.match(r.text, /\(5030\); retry in \d+ s/);
          }
          assert.equal(await metric('mds_mcp_tool_calls_total{tool="query",outcome="unavailable"}'), 2);
          assert.equal(await metric('mds_mcp_tool_calls_total{tool="query",outcome="error"}'), 0);
        } finally {
          await viaProxy?.kill('SIGKILL');
          await proxy.stop();
        }
      });
  });
}
