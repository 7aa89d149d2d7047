// docs/mcp.md, run as written: the example conversation's tool calls (each answer's text compared
// with the one the page shows), the error table (each argument sent, its tool error compared),
// the key made with the page's `mds keys create` line, and the TypeScript and Python agent
// examples with only the address and key replaced. The desktop hosts' configurations cannot run
// here; the page says so.
import assert from 'node:assert/strict';
import { spawnSync, execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { QUERY_KEY, backends, push, startApp, type Harness } from '../helpers/harness.js';
import { adjFactor, batch, days } from '../helpers/batches.js';
import { mds } from '../helpers/cli.js';
import { call, connect, structured, textOf } from '../helpers/mcp-client.js';
import { PYTHON, pythonAvailable, runPython } from '../helpers/python.js';
import { ROOT } from '../helpers/repo-root.js';

const DOC = readFileSync(path.join(ROOT, 'docs', 'mcp.md'), 'utf8');

/** The text between a heading and the next heading of the same level. */
function section(heading: string): string {
  const at = DOC.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `docs/mcp.md has "${heading}"`);
  const level = /^#+/.exec(heading)![0];
  const next = DOC.indexOf(`\n${level} `, at + heading.length + 2);
  return DOC.slice(at, next < 0 ? undefined : next);
}

/** The first fenced block of `lang` in a section. */
function block(text: string, lang: string): string {
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(text);
  assert.ok(m, `a ${lang} block`);
  return m[1]!;
}

interface Step {
  tool: string;
  args: string;
  /** The answer's text as shown: its summary line, then (when shown) the rows' JSON. */
  answer: string[];
}

/** The conversation's `→ tool {args}` / `← text` lines. */
function conversation(): Step[] {
  const steps: Step[] = [];
  for (const line of block(section('## An example conversation'), 'text').split('\n')) {
    const m = /^→ (\w+) (\{.*\})$/.exec(line);
    if (m) steps.push({ tool: m[1]!, args: m[2]!, answer: [] });
    else if (line.startsWith('← ') || line.startsWith('  ')) steps.at(-1)!.answer.push(line.slice(2));
    else assert.fail(`a line of the conversation that is neither a call nor an answer: ${line}`);
  }
  return steps;
}

/** The error table: each argument object sent to `query`, and the tool error text shown. */
function errorTable(): [string, string][] {
  return [...DOC.matchAll(/^\| `(\{.*\})`\s*\| `(.*)`\s*\|$/gm)].map((m) => [m[1]!, m[2]!]);
}

/** The shown text as a pattern of the whole text: `…` stands for what the page leaves out. */
const shown = (text: string): RegExp =>
  new RegExp(
    `^${text
      .split('…')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

/** March 2024 on the SSE calendar: weekends closed (no holiday that month). */
const MARCH = days('2024-03-01', 31);
const isOpen = (date: string): boolean => ![0, 6].includes(new Date(`${date}T00:00:00Z`).getUTCDay());
const OPEN = MARCH.filter(isOpen);

/** 510300's March bars (source sse), a dividend factor on March 27, and the calendar. */
function fixture(): Record<string, unknown>[] {
  const bar = (date: string, i: number) => {
    const close = Math.round((3.5 + i / 100) * 1000) / 1000;
    return {
      symbol: '510300',
      date,
      open: close,
      high: Math.round((close + 0.05) * 1000) / 1000,
      low: Math.round((close - 0.05) * 1000) / 1000,
      close,
      volume: 1_000_000 + i,
      source: 'sse',
      updated_at: `${date}T08:00:00Z`,
    };
  };
  return [
    batch(
      'trade_calendar',
      MARCH.map((date) => ({ exchange: 'SSE', date, is_open: isOpen(date) ? 1 : 0, source: 'sse' })),
    ),
    batch('adj_factor', [
      adjFactor('510300', '2024-03-01', 1, 'sse'),
      adjFactor('510300', '2024-03-27', 1.05, 'sse'),
    ]),
    batch(
      'etf_daily',
      OPEN.map((d, i) => bar(d, i)),
      { source: 'sse' },
    ),
  ];
}

/** The later correction: March 29's close. */
const correction = (): Record<string, unknown> =>
  batch(
    'etf_daily',
    [
      {
        symbol: '510300',
        date: '2024-03-29',
        open: 3.7,
        high: 3.75,
        low: 3.65,
        close: 3.72,
        volume: 1_000_020,
        source: 'sse',
        updated_at: '2024-04-02T08:00:00Z',
      },
    ],
    { source: 'sse' },
  );

async function serve(backend: 'sqlite' | 'postgres'): Promise<{ h: Harness; base: string }> {
  const h = await startApp(backend);
  for (const b of [...fixture(), correction()]) {
    const res = await push(h.app, b);
    assert.equal(res.statusCode, 200, res.body);
  }
  return { h, base: await h.app.listen({ port: 0, host: '127.0.0.1' }) };
}

for (const backend of await backends()) {
  describe(`docs/mcp.md, run as written (${backend})`, () => {
    let h: Harness;
    let base: string;
    let client: Client;
    before(async () => {
      ({ h, base } = await serve(backend));
      client = await connect(base, { Authorization: `Bearer ${QUERY_KEY}` });
    });
    after(async () => {
      await client?.close();
      await h?.close();
    });

    test('the example conversation: each call answers the text the page shows', async () => {
      const steps = conversation();
      assert.deepEqual(
        steps.map((s) => s.tool),
        ['list_datasets', 'quality_report', 'revision_trail', 'query'],
      );
      let firstValidFrom = '';
      for (const step of steps) {
        const args = JSON.parse(
          step.args.replace('"<valid_from of the first revision>"', JSON.stringify(firstValidFrom)),
        ) as Record<string, unknown>;
        const r = await call(client, step.tool, args);
        const page = structured(r);
        const [summary, rows] = textOf(r).split('\n');
        assert.equal(summary, step.answer[0], step.tool);
        if (step.answer.length > 1)
          assert.deepEqual(JSON.parse(rows!), JSON.parse(step.answer.slice(1).join('')));
        if (step.tool === 'revision_trail') {
          const items = page.items as { valid_from: string; row: { close: number } }[];
          assert.deepEqual(
            items.map((i) => i.row.close),
            [3.7, 3.72],
            'the bar as first loaded, then corrected',
          );
          firstValidFrom = items[0]!.valid_from;
        }
        if (step.tool === 'query') {
          // The same rows as the HTTP API with that as_of.
          const qs = new URLSearchParams({
            code: '510300',
            date_from: '2024-03-25',
            date_to: '2024-03-29',
            adjust: 'qfq',
            fields: 'date,close',
            as_of: firstValidFrom,
          });
          const api = await fetch(new URL(`/api/v1/etf/kline?${qs}`, base), {
            headers: { 'Q-API-KEY': QUERY_KEY },
          });
          assert.deepEqual(page.rows, ((await api.json()) as { data: unknown }).data);
        }
      }
    });

    test('the error table: each argument sent gives the tool error shown', async () => {
      const rows = errorTable();
      assert.ok(rows.length >= 6, 'the table has its rows');
      for (const [sent, text] of rows) {
        const r = await call(client, 'query', JSON.parse(sent) as Record<string, unknown>);
        assert.equal(r.isError, true, sent);
        assert.match(textOf(r), shown(text), sent);
      }
    });
  });
}

describe('docs/mcp.md: the key and the agent examples, run as written', () => {
  let h: Harness;
  let base: string;
  let key = '';
  before(async () => {
    ({ h, base } = await serve('sqlite'));
    // "Make a key for the assistant": the page's command, on the service's database.
    const line = block(section('## Connect a desktop assistant'), 'sh');
    const argv = line.replace(/^npx mds /, '').split(/\s+/);
    assert.deepEqual(argv.slice(0, 2), ['keys', 'create']);
    const made = await mds(h.databaseUrl, ...argv);
    assert.equal(made.code, 0, made.stderr);
    key = made.stdout.trim().split('\n').at(-1)!;
  });
  after(async () => h?.close());

  test('the TypeScript example lists the trading days of 2024 with the key made above', async () => {
    const code = `${block(section('## Connect an agent framework'), 'ts').replaceAll('http://localhost:8080', base)}
console.log(JSON.stringify(structuredContent));
await client.close();`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', MDS_KEY: key },
    });
    const out = JSON.parse(stdout) as { total: number; days: { date: string }[] };
    assert.equal(out.total, OPEN.length);
    assert.deepEqual(
      out.days.map((d) => d.date),
      OPEN,
    );
  });

  const pythonMcp =
    pythonAvailable() && spawnSync(PYTHON, ['-c', 'import mcp'], { stdio: 'ignore' }).status === 0;
  if (!pythonMcp && process.env.MDS_REQUIRE_PYTHON_MCP === '1')
    throw new Error(`MDS_REQUIRE_PYTHON_MCP=1 but ${PYTHON} cannot import mcp`);
  test(
    'the Python example prints the first qfq row of 510300',
    { skip: pythonMcp ? false : `${PYTHON} cannot import mcp (pip install mcp)` },
    async () => {
      const code = block(section('## Connect an agent framework'), 'python')
        .replaceAll('http://localhost:8080', base)
        .replaceAll('<query key>', key);
      const printed = (await runPython(['-c', code])).trim();
      const api = await fetch(new URL('/api/v1/etf/kline?code=510300&adjust=qfq&limit=20', base), {
        headers: { 'Q-API-KEY': key },
      });
      const [first] = ((await api.json()) as { data: Record<string, unknown>[] }).data;
      // The row as Python prints a dict: compared field by field through its repr.
      const repr = (
        await runPython(['-c', `import json,sys; print(json.loads(sys.argv[1]))`, JSON.stringify(first)])
      ).trim();
      assert.equal(printed, repr);
    },
  );
});
