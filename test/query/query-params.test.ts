// The query parameters' declarations (src/query/query-params.ts): the names the parser takes
// are the names documented, and no catalog filter takes a declared parameter's name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOG, adjustOf } from '../../src/catalog/catalog.js';
import { allowedParams, parseQuery } from '../../src/query/parse.js';
import { revisionParams } from '../../src/query/revision-query.js';
import { QUERY_PARAMETERS, endpointParameters, parameterRows } from '../../src/query/query-params.js';
import { AppError } from '../../src/errors.js';

describe('query parameter declarations', () => {
  it('no filter of the catalog is named like a declared parameter', () => {
    const fixed = new Set(Object.keys(QUERY_PARAMETERS));
    const clashes = CATALOG.datasets.flatMap((d) =>
      [...d.exact, ...d.like].filter((f) => fixed.has(f.apiName)).map((f) => `${d.name}.${f.apiName}`),
    );
    assert.deepEqual(clashes, []);
  });

  it('every name an endpoint takes is documented once, with words', () => {
    for (const d of CATALOG.datasets) {
      for (const [e, names] of [
        ['rows', allowedParams(d)],
        ['trail', revisionParams(d)],
      ] as const) {
        const documented = endpointParameters(d, e);
        assert.deepEqual(
          documented.map((p) => p.name),
          names,
          `${d.name} ${e}`,
        );
        assert.equal(new Set(names).size, names.length, `${d.name} ${e}: a name twice`);
        for (const p of documented) assert.ok(p.description.length > 0, `${d.name} ${p.name}`);
      }
    }
  });

  it('the parser refuses a parameter of another endpoint, naming what is allowed', () => {
    const plain = CATALOG.datasets.find((d) => adjustOf(d) === null);
    assert.ok(plain);
    assert.throws(
      () => parseQuery(plain, { adjust: 'qfq' }),
      (e: unknown) =>
        e instanceof AppError && e.code === 4001 && /unknown parameter "adjust"/.test(e.message),
    );
    // batch_id belongs to the revision trail only.
    assert.throws(() => parseQuery(plain, { batch_id: 'x' }), AppError);
  });

  it('the docs table says where each declared parameter is taken', () => {
    const rows = parameterRows(CATALOG.datasets);
    assert.deepEqual(
      rows.map((r) => r.name),
      Object.keys(QUERY_PARAMETERS),
    );
    const byName = new Map(rows.map((r) => [r.name, r]));
    assert.equal(byName.get('limit')?.rows, 'all');
    assert.equal(byName.get('batch_id')?.rows, '—');
    assert.equal(byName.get('batch_id')?.trail, 'all');
    const adjusted = CATALOG.datasets.filter((d) => adjustOf(d) !== null).map((d) => d.name);
    assert.equal(byName.get('adjust')?.rows, adjusted.join(', '));
  });
});
