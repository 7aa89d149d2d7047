// Generated and hand-written docs stay true to the code: the endpoint list and the error table.
import path from 'node:path';
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { CATALOG } from '../../src/catalog/catalog.js';
import { endpointDocs } from '../../src/catalog/endpoint-docs.js';
import { EXPORT_FORMAT_NAMES } from '../../src/export/export-formats.js';
import { parameterRows } from '../../src/query/query-params.js';
import { ERRORS, PARTIAL_CODE } from '../../src/errors.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { batchChecksum, sha256Hex } from '../../src/ingest/checksum.js';
import { ROOT } from '../helpers/repo-root.js';

const read = (p: string): string => readFileSync(path.join(ROOT, p), 'utf8');

it('docs/endpoints.md is the catalog (run `npm run docs:endpoints` after changing it)', () => {
  assert.equal(
    read('docs/endpoints.md'),
    endpointDocs(CATALOG, EXPORT_FORMAT_NAMES, parameterRows(CATALOG.datasets)),
  );
});

// The measurement logs keep the counts of their day.
const MEASURED = new Set(['docs/performance.md', 'docs/testing.md', 'docs/minute-bars.md']);

it("every count of datasets the docs state is the catalog's (a new dataset fails here, naming the line)", () => {
  const docs = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)];
  const wrong = docs
    .filter((p) => p.endsWith('.md') && !MEASURED.has(p))
    .flatMap((p) =>
      read(p)
        .split('\n')
        .flatMap((line, i) =>
          [...line.matchAll(/\b(\d+) datasets\b/g)]
            .filter((m) => Number(m[1]) !== CATALOG.datasets.length)
            .map((m) => `${p}:${i + 1}: ${m[0]}`),
        ),
    );
  assert.deepEqual(wrong, [], `the catalog has ${CATALOG.datasets.length} datasets`);
});

it('docs/errors.md lists exactly the codes of src/errors.ts', () => {
  const documented = new Set(
    [...read('docs/errors.md').matchAll(/^\| (\d{4}) \|/gm)].map((m) => Number(m[1])),
  );
  const codes = new Set([...Object.keys(ERRORS).map(Number), PARTIAL_CODE]);
  assert.deepEqual([...documented].sort(), [...codes].sort());
});

// The admin API's route tables, written by hand: the data routes and the key routes.
const ADMIN_TABLES = ['docs/dashboard.md', 'docs/keys-and-limits.md'];

it('the admin API tables of the docs hold every admin route, and only those', () => {
  const doc = openApiDocument(CATALOG, 'test') as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(doc.paths)
    .filter(([p]) => p.startsWith('/admin/api/'))
    .flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
  // One row stands for every minute dataset's report.
  const minute = CATALOG.datasets.filter((d) => d.blocks).map((d) => d.name);
  const rows = ADMIN_TABLES.flatMap((file) =>
    [...read(file).matchAll(/^\| `(GET|POST|PATCH|PUT|DELETE) (\/admin\/api\/[^`?\s]*)/gm)].flatMap((m) => {
      const row = `${m[1]} ${m[2]!.replace(/:(\w+)/g, '{$1}')}`;
      return row.includes('<minute') ? minute.map((n) => row.replace(/<minute$/, n)) : [row];
    }),
  );
  assert.deepEqual([...new Set(rows)].sort(), [...new Set(routes)].sort());
});

it('the README quick start is two alternative lines on a fresh clone, never npm ci under a server', () => {
  const readme = read('README.md');
  const quick = /```sh\nnpm ci && npm start[^\n]*\nnpm ci && npm test[^\n]*\n```/.exec(readme);
  assert.ok(quick, 'the two quick-start lines, start then test');
  assert.match(readme, /two alternatives, not two steps/);
  assert.match(readme, /`npm test` \(instead of `npm start`\)/);
  assert.match(readme, /never while the server runs/);
});

it('the worked checksum example in docs/ingest.md is right', () => {
  const doc = read('docs/ingest.md');
  const canonical = /```text\n(.+)\n```/.exec(doc)?.[1] ?? '';
  const hash = '591f3d5d8a0bed81f01ea32fd3c0e2c882bbe9ddd27e7d1abd75a948671abf7e';
  assert.ok(doc.includes(hash));
  assert.equal(sha256Hex(canonical), hash);
  assert.equal(batchChecksum(JSON.parse(canonical)), hash);
});
