import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The MCP Inspector's CLI for the MCP suites. Not a dependency (about 160 MB with its web UI;
 * its current releases need Node 22, 0.21.2 runs on Node 20: docs/mcp.md). Taken from
 * MDS_MCP_INSPECTOR (a path to its cli/build/cli.js), else installed once into a temporary
 * folder with npm. When neither works, the reason is returned so that the test skips saying
 * why; MDS_REQUIRE_MCP_INSPECTOR=1 makes that a failure. (Its CLI package alone,
 * `@modelcontextprotocol/inspector-cli`, does not run: it reads the parent package's
 * package.json.)
 */
export const INSPECTOR_PACKAGE = '@modelcontextprotocol/inspector@0.21.2';

const run = promisify(execFile);

export async function inspectorCli(): Promise<{ cli: string } | { skip: string }> {
  const given = process.env.MDS_MCP_INSPECTOR;
  if (given) return { cli: given };
  const dir = path.join(os.tmpdir(), 'mds-mcp-inspector-0.21.2');
  const cli = path.join(dir, 'node_modules', '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js');
  if (!fs.existsSync(cli)) {
    try {
      fs.mkdirSync(dir, { recursive: true });
      await run('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', INSPECTOR_PACKAGE], {
        timeout: 400_000,
      });
    } catch (err) {
      const why = `npm could not install ${INSPECTOR_PACKAGE}: ${String((err as Error).message).split('\n')[0]}`;
      if (process.env.MDS_REQUIRE_MCP_INSPECTOR === '1')
        throw new Error(`MDS_REQUIRE_MCP_INSPECTOR=1 but ${why}`);
      return { skip: `the MCP Inspector CLI test is SKIPPED: ${why}` };
    }
  }
  return { cli };
}
