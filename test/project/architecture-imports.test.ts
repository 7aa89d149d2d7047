// Issue 15: the source tree has no import cycles (type-only imports included: a cycle through a
// type still ties two modules' designs together). Issue 26: the imports are the layers
// docs/architecture.md draws ("Layers"), folder by folder.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/repo-root.js';

const SRC = path.join(ROOT, 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Relative imports and re-exports of a file (static, dynamic and type-only), as absolute .ts paths. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    out.push(path.resolve(path.dirname(file), (m[1] as string).replace(/\.js$/, '.ts')));
  }
  return out;
}

const graph = new Map(sources(SRC).map((f) => [f, importsOf(f)]));
const rel = (f: string): string => path.relative(SRC, f).split(path.sep).join('/');

/**
 * The layers, top to bottom (docs/architecture.md, "Layers"). A file may import its own layer
 * and the layers below it, never one above; `root` files not named here are the base.
 */
const LAYERS = [
  // Outside the stages: they use them through the same entry points; nothing below uses them.
  {
    name: 'outside',
    folders: ['cli', 'client', 'demo', 'dashboard'],
    root: ['app', 'main', 'serve', 'index'],
  },
  { name: 'http', folders: ['http'], root: [] },
  // The MCP endpoint: an interface over the query services, mounted by http/mcp-plugin.ts.
  { name: 'mcp', folders: ['mcp'], root: [] },
  // The composition root: builds every service once; the interfaces take its `Services`.
  { name: 'wiring', folders: [], root: ['services'] },
  { name: 'domain', folders: ['ingest', 'query', 'access', 'export', 'cluster'], root: [] },
  { name: 'storage', folders: ['storage'], root: [] },
  { name: 'contract', folders: ['contract'], root: [] },
  { name: 'model', folders: ['model'], root: [] },
  { name: 'catalog', folders: ['catalog'], root: [] },
  // errors.ts, config.ts, logger.ts, request-context.ts, …: imported by every layer.
  { name: 'base', folders: [], root: [] },
] as const;

/** Storage's entry points: every other storage module is its own, never imported from outside it. */
const STORAGE_ENTRIES = ['storage/store.ts', 'storage/create-store.ts', 'storage/read-consistency.ts'];

/** The layer of a file (path relative to src/); null: a folder no layer names. */
function layerOf(file: string): number | null {
  const [first = '', ...rest] = file.split('/');
  const folder = rest.length > 0 ? first : null;
  const root = rest.length === 0 ? first.replace(/\.ts$/, '') : null;
  const at = LAYERS.findIndex((l) =>
    folder !== null
      ? (l.folders as readonly string[]).includes(folder)
      : (l.root as readonly string[]).includes(root ?? ''),
  );
  if (at >= 0) return at;
  return folder === null ? LAYERS.length - 1 : null;
}

/** Every import of `edges` (file → imported file, relative to src/) that runs against the layers. */
function layerViolations(edges: readonly (readonly [string, string])[]): string[] {
  const wrong: string[] = [];
  for (const [from, to] of edges) {
    const a = layerOf(from);
    const b = layerOf(to);
    if (a === null || b === null) {
      wrong.push(
        `${from} → ${to}: ${a === null ? from : to} is in no layer (docs/architecture.md, "Layers")`,
      );
      continue;
    }
    const [la, lb] = [LAYERS[a]?.name, LAYERS[b]?.name];
    if (b < a) wrong.push(`${from} → ${to}: ${la} imports ${lb}, a layer above it`);
    else if (to.startsWith('storage/') && !from.startsWith('storage/') && !STORAGE_ENTRIES.includes(to)) {
      wrong.push(`${from} → ${to}: a storage internal (outside storage, only ${STORAGE_ENTRIES.join(', ')})`);
    }
  }
  return wrong;
}

const edges = [...graph].flatMap(([f, deps]) =>
  deps.filter((d) => graph.has(d)).map((d) => [rel(f), rel(d)] as const),
);

it('src/ has no import cycles', () => {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    stack.push(f);
    for (const dep of graph.get(f) ?? []) {
      if (!graph.has(dep)) continue;
      if (state.get(dep) === 'open')
        cycles.push([...stack.slice(stack.indexOf(dep)), dep].map(rel).join(' → '));
      else if (!state.has(dep)) visit(dep);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  assert.deepEqual(cycles, []);
});

describe('the imports follow the layers of docs/architecture.md', () => {
  it('no import in src/ runs upwards or into storage internals', () => {
    assert.ok(edges.length > 500, `the graph was read (${edges.length} imports)`);
    assert.deepEqual(layerViolations(edges), []);
  });

  it('every folder of src/ is in a layer, and the docs draw the same layers', () => {
    const folders = fs
      .readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    const named = LAYERS.flatMap((l) => l.folders as readonly string[]);
    assert.deepEqual(
      folders.filter((f) => !named.includes(f)),
      [],
    );
    const doc = fs.readFileSync(path.resolve(SRC, '..', 'docs', 'architecture.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Layers'), doc.indexOf('\n## ', doc.indexOf('## Layers') + 1));
    for (const f of named)
      assert.match(section, new RegExp(`\`src/${f}\``), `docs/architecture.md's Layers name src/${f}`);
    // The table's rows, top to bottom, name the folders and root files in the order LAYERS has them.
    const drawn = section
      .split('\n')
      .filter((line) => line.startsWith('| '))
      .flatMap((line) => [...line.matchAll(/`(?:src\/)?([a-z-]+)(?:\.ts)?`/g)].map((m) => m[1] as string));
    const layered = LAYERS.flatMap((l) => [...l.folders, ...l.root] as string[]);
    assert.deepEqual(
      drawn.filter((n) => layered.includes(n)),
      layered,
    );
    for (const e of STORAGE_ENTRIES) assert.ok(section.includes(`\`${e}\``), `the Layers section names ${e}`);
  });

  // The check itself, on imports that break each rule: it reports every one of them.
  it('reports a wrong-way import of each kind', () => {
    const wrongWay: [string, string][] = [
      ['storage/dataset-store.ts', 'query/plan.ts'],
      ['storage/batch-store.ts', 'ingest/ingest-service.ts'],
      ['query/parse.ts', 'http/envelope.ts'],
      ['model/query-plan.ts', 'storage/store.ts'],
      ['contract/rows.ts', 'ingest/record-validation.ts'],
      ['catalog/catalog.ts', 'model/values.ts'],
      ['ingest/ingest-pool.ts', 'storage/sqlite/sqlite-db.ts'],
      ['query/in-process-adjust.ts', 'storage/bars-sql.ts'],
      ['http/query-routes.ts', 'cli/main.ts'],
      ['mcp/tools.ts', 'http/query-plugin.ts'],
      ['errors.ts', 'catalog/catalog.ts'],
      ['services.ts', 'http/openapi.ts'],
      ['newfolder/x.ts', 'model/values.ts'],
    ];
    const reported = layerViolations(wrongWay);
    assert.equal(reported.length, wrongWay.length, reported.join('\n'));
    const rightWay: [string, string][] = [
      ['http/query-routes.ts', 'query/query-service.ts'],
      ['http/mcp-plugin.ts', 'mcp/mcp-server.ts'],
      ['query/query-service.ts', 'storage/store.ts'],
      ['storage/bars-sql.ts', 'model/adjustment.ts'],
      ['contract/quality.ts', 'model/quality-rules.ts'],
      ['model/query-plan.ts', 'catalog/catalog.ts'],
      ['cli/main.ts', 'storage/create-store.ts'],
      ['storage/sqlite/reader-process.ts', 'thread-priority.ts'],
    ];
    assert.deepEqual(layerViolations(rightWay), []);
  });
});
