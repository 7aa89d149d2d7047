import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { pythonHasMcp, runPython } from '../helpers/python.js';
import { QUERY_KEY, backends, push, startApp } from '../helpers/harness.js';
import { batch, etfBar } from '../helpers/batches.js';
import { ROOT } from '../helpers/repo-root.js';

/**
 * Clients we did not write, against a live /mcp.
 *
 * The Python `mcp` package's client (another implementation of the protocol than the SDK we
 * serve with) against a live /mcp, in a real interpreter: it lists the tools, calls query and
 * pages on with the cursor, and sends a bad argument; the rows are compared with the HTTP API's.
 * Skipped with a message when the interpreter lacks `mcp`, unless MDS_REQUIRE_PYTHON_MCP=1 (CI).
 */

const SCRIPT = path.join(ROOT, 'test', 'helpers', 'mcp_client.py');
const has = pythonHasMcp();

for (const backend of await backends()) {
  test(
    `the Python mcp client: tools, a query paged by cursor, a bad argument (${backend})`,
    { skip: !has },
    async () => {
      const h = await startApp(backend);
      try {
        const bars = ['2024-03-01', '2024-03-04', '2024-03-05'].map((d, i) =>
          etfBar('510300', d, { close: 10 + i }),
        );
        assert.equal((await push(h.app, batch('etf_daily', bars))).statusCode, 200);
        const base = await h.app.listen({ port: 0, host: '127.0.0.1' });
        const first = { dataset: 'etf_daily', filters: { code: '510300' }, limit: 2 };
        const run = async (
          calls: unknown[],
        ): Promise<{ tools: string[]; calls: Record<string, unknown>[] }> =>
          JSON.parse(await runPython([SCRIPT, base, QUERY_KEY, JSON.stringify(calls)]));
        const out = await run([
          ['query', first],
          ['query', { dataset: 'etf_daily', limit: 0 }],
        ]);
        assert.deepEqual(out.tools, [
          'list_datasets',
          'query',
          'quality_report',
          'revision_trail',
          'trading_days',
          'universe',
          'changes',
        ]);
        const page = out.calls[0]!.structured as Record<string, unknown>;
        const api = (await (
          await fetch(new URL('/api/v1/etf/kline?code=510300&limit=2', base), {
            headers: { 'Q-API-KEY': QUERY_KEY },
          })
        ).json()) as { data: unknown[]; meta: Record<string, unknown> };
        assert.deepEqual(page.rows, api.data);
        assert.equal(page.next_cursor, api.meta.next_cursor);
        assert.match(out.calls[1]!.error as string, /^invalid arguments \(4001\): limit must be >= 1$/);

        const next = await run([['query', { ...first, cursor: page.next_cursor }]]);
        const rest = next.calls[0]!.structured as Record<string, unknown>;
        assert.deepEqual(
          [...(page.rows as unknown[]), ...(rest.rows as unknown[])],
          (
            (await (
              await fetch(new URL('/api/v1/etf/kline?code=510300', base), {
                headers: { 'Q-API-KEY': QUERY_KEY },
              })
            ).json()) as { data: unknown[] }
          ).data,
        );
        assert.equal(rest.has_more, false);
      } finally {
        await h.close();
      }
    },
  );
}
