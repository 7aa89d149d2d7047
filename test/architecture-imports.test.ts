// Issue 15: the source tree has no import cycles (type-only imports included: a cycle through a
// type still ties two modules' designs together), and HTTP stays above the domain and storage.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '..', 'src');

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
const rel = (f: string): string => path.relative(SRC, f);

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

it('the domain and storage stages never import the HTTP stage', () => {
  const wrong = [...graph]
    .filter(([f]) => /^(ingest|query|storage|access|catalog)\//.test(rel(f)))
    .flatMap(([f, deps]) =>
      deps.filter((d) => rel(d).startsWith('http/')).map((d) => `${rel(f)} → ${rel(d)}`),
    );
  assert.deepEqual(wrong, []);
});
