// docs/python-client.md: every `python` block, in order, run in a real interpreter against a
// listening service seeded with the demo data (`npx mds seed --demo`), as a reader would run
// them — only the placeholder address and keys are replaced by this service's.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { INGEST_KEY, QUERY_KEY, type Harness } from '../helpers/harness.js';
import { listeningDemo } from '../helpers/demo-seed.js';
import { pythonHas, runPythonFull } from '../helpers/python.js';
import { ROOT } from '../helpers/repo-root.js';

const DOC = readFileSync(path.join(ROOT, 'docs', 'python-client.md'), 'utf8');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const SRC = path.join(ROOT, 'clients', 'python', 'src');

/** The page's python blocks, joined in order. */
function pythonBlocks(doc: string): string[] {
  return [...doc.matchAll(/```python\n([\s\S]*?)\n```/g)].map((m) => m[1] as string);
}

const ready = pythonHas('pandas', 'the docs/python-client.md examples') && pythonHas('pyarrow', 'them');

describe('docs/python-client.md examples, run on the demo data', { skip: !ready }, () => {
  let h: Harness;
  let base: string;
  before(async () => {
    ({ h, base } = await listeningDemo());
  });
  after(async () => h?.close());

  it('every python block runs, in order, with no error', async () => {
    const blocks = pythonBlocks(DOC);
    assert.ok(blocks.length >= 4, 'the page has its examples');
    const code = blocks
      .join('\n\n')
      .replaceAll('http://localhost:8080', base)
      .replaceAll('mds_q_…', QUERY_KEY)
      .replaceAll('mds_i_…', INGEST_KEY);
    let out: { stdout: string; stderr: string };
    try {
      out = await runPythonFull(['-c', code], {
        env: { ...process.env, PYTHONPATH: SRC, PYTHONWARNINGS: 'ignore' },
      });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      assert.fail(`the examples failed:\n${e.stdout ?? ''}\n${e.stderr ?? String(err)}`);
    }
    // What the page says they print.
    assert.match(out.stdout, /date\s+datetime64\[ns\]/);
    assert.match(out.stdout, /\['510300', '510500', '159915'\]/);
    assert.match(out.stdout, /\['accepted'\]\nduplicate\n5\n/);
  });

  it("the README's python block runs after them, its push accepted", async () => {
    const block = pythonBlocks(README)[0] ?? '';
    assert.ok(block.includes('client.push('), "the README's Python example");
    const code = [
      block
        .replaceAll('http://localhost:8080', base)
        .replaceAll('<query key>', QUERY_KEY)
        .replaceAll('<ingest key>', INGEST_KEY),
      // What the reader sees: the pulled frame, and the batch applied (its corrections written).
      'print(len(df), client.push("etf_daily", df)[0]["status"])',
    ].join('\n');
    const out = await runPythonFull(['-c', code], {
      env: { ...process.env, PYTHONPATH: SRC, PYTHONWARNINGS: 'ignore' },
    });
    // Demo bars of 510300 since 2024 (a year of them); pushed twice, the second is a duplicate.
    assert.match(out.stdout, /^2\d\d duplicate$/m);
  });
});
