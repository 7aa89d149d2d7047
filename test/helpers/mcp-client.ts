import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QUERY_KEY, type Harness } from './harness.js';

/** The SDK's own MCP client against a listening service's /mcp, for the MCP suites. */

type Json = Record<string, unknown>;

export async function connect(base: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'mds-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers } }),
  );
  return client;
}

export const call = async (c: Client, name: string, args: Json): Promise<CallToolResult> =>
  (await c.callTool({ name, arguments: args })) as CallToolResult;

/** A successful answer's structured content (fails the test on a tool error). */
export const structured = (r: CallToolResult): Json => {
  assert.equal(r.isError, undefined, JSON.stringify(r.content));
  return r.structuredContent as Json;
};

/** A tool error's text (fails the test on a successful answer). */
export const errorText = (r: CallToolResult): string => {
  assert.equal(r.isError, true, JSON.stringify(r.structuredContent));
  return textOf(r);
};

/** The answer's text block: the summary line, then the rows as JSON. */
export const textOf = (r: CallToolResult): string => (r.content[0] as { text: string }).text;

/**
 * The harness's app listening on a free port, with an SDK client on its /mcp; `close` ends the
 * client, then the harness.
 */
export async function serveMcp(
  h: Harness,
  headers: Record<string, string> = { 'Q-API-KEY': QUERY_KEY },
): Promise<{ base: string; client: Client; close(): Promise<void> }> {
  const base = await h.app.listen({ port: 0, host: '127.0.0.1' });
  const client = await connect(base, headers);
  return {
    base,
    client,
    async close() {
      await client.close();
      await h.close();
    },
  };
}

/** For assert.rejects: the SDK's HTTP error with this status, its message matching `re`. */
export const httpError =
  (status: number, re: RegExp) =>
  (e: Error & { code?: number }): boolean => {
    assert.equal(e.code, status, e.message);
    assert.match(e.message, re);
    return true;
  };
