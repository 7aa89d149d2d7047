import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CATALOG, type Dataset } from '../../src/catalog/catalog.js';
import {
  POSTGRES,
  SQLITE,
  compile,
  countSql,
  pruneSql,
  renderSelect,
  selectParts,
  sql,
} from '../../src/storage/sql.js';
import { runAsync, runSync, wait, type Step } from '../../src/storage/step.js';
import type { QueryPlan } from '../../src/model/query-plan.js';

/**
 * The seams of the shared statement builder: one statement, compiled by each dialect. The
 * compiled SQL is shown beside the assertions, so a change to a dialect hook reads as a diff
 * here; running these statements is the parity suite's work (postgres-store-parity.test.ts).
 */

const fx = CATALOG.byName.get('fx') as Dataset;
const plan: QueryPlan = {
  dataset: fx,
  select: fx.rowFields.slice(0, 2),
  where: [{ field: fx.key[0]!, op: 'eq', value: 'USDCNY' }],
  orderBy: [{ field: fx.sort.field, dir: fx.sort.order }],
  limit: 2,
  offset: 0,
};

test('values become each dialect placeholder; fragments are spliced', () => {
  const s = sql`SELECT * FROM mds_batches WHERE batch_id = ${'b1'} AND status = ${'rejected'}`;
  assert.deepEqual(compile(s, SQLITE), {
    sql: 'SELECT * FROM mds_batches WHERE batch_id = ? AND status = ?',
    params: ['b1', 'rejected'],
  });
  assert.deepEqual(compile(s, POSTGRES), {
    sql: 'SELECT * FROM mds_batches WHERE batch_id = $1 AND status = $2',
    params: ['b1', 'rejected'],
  });
});

test('a page: the same SELECT; PostgreSQL emits its total in the same statement, SQLite does not', () => {
  const page = (d: typeof SQLITE) => compile(renderSelect(selectParts(plan, d)), d);
  assert.deepEqual(page(SQLITE), {
    sql: 'SELECT "symbol" AS "code", "date" FROM "fx" WHERE "symbol" = ? ORDER BY "date" DESC LIMIT ? OFFSET ?',
    params: ['USDCNY', 2, 0],
  });
  assert.deepEqual(page(POSTGRES), {
    sql: 'SELECT "symbol" AS "code", "date" FROM "fx" WHERE "symbol" = $1 ORDER BY "date" DESC LIMIT $2 OFFSET $3',
    params: ['USDCNY', 2, 0],
  });
  assert.equal(SQLITE.pageWithTotal, null);
  const withTotal = POSTGRES.pageWithTotal?.(selectParts(plan, POSTGRES), countSql(plan, POSTGRES));
  assert.ok(withTotal);
  assert.deepEqual(compile(withTotal, POSTGRES), {
    sql:
      'SELECT "symbol" AS "code", "date", (SELECT count(*) AS n FROM "fx" WHERE "symbol" = $1) AS "__total" ' +
      'FROM "fx" WHERE "symbol" = $2 ORDER BY "date" DESC LIMIT $3 OFFSET $4',
    params: ['USDCNY', 'USDCNY', 2, 0],
  });
});

test('the full-snapshot prune is one statement over the batch keys each dialect provides', () => {
  const prune = pruneSql(fx, { partitionValue: '2024-01-02', source: 's' }, 'keys');
  const tail =
    'AND NOT EXISTS (SELECT 1 FROM keys AS s WHERE s."symbol" = t."symbol" AND s."date" = t."date" AND s."source" = t."source")';
  assert.deepEqual(compile(prune, SQLITE), {
    sql: `DELETE FROM "fx" AS t WHERE t."date" = ? AND t."source" = ? ${tail}`,
    params: ['2024-01-02', 's'],
  });
  assert.deepEqual(compile(prune, POSTGRES), {
    sql: `DELETE FROM "fx" AS t WHERE t."date" = $1 AND t."source" = $2 ${tail}`,
    params: ['2024-01-02', 's'],
  });
});

test('a step runs synchronously until it waits; the async runner throws rejections into it', async () => {
  function* twice(x: Step<number>): Step<number> {
    return 2 * (yield* x);
  }
  // eslint-disable-next-line require-yield
  function* three(): Step<number> {
    return 3;
  }
  assert.equal(runSync(twice(three())), 6);
  assert.throws(() => runSync(twice(wait(Promise.resolve(3)))), /waited on a promise/);
  assert.equal(await runAsync(twice(wait(Promise.resolve(3)))), 6);
  let cleaned = false;
  function* guarded(): Step<number> {
    try {
      return yield* wait(Promise.reject(new Error('boom')));
    } finally {
      cleaned = true;
    }
  }
  await assert.rejects(runAsync(guarded()), /boom/);
  assert.ok(cleaned);
});
