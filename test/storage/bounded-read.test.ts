// Bounded reads (storage/bounded-read.ts) run on the request thread: every shape classed bounded
// must be served by an index in its order (no table scan, no sorting step), on every dataset.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOG, type Dataset, type Field } from '../../src/catalog/catalog.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { SQLITE, compile, renderSelect } from '../../src/storage/sql.js';
import { planCountSql, planSelectParts } from '../../src/storage/bars-sql.js';
import { BOUNDED_LIMIT, BOUNDED_OFFSET, boundedRead } from '../../src/storage/bounded-read.js';
import { MAX_LIMIT } from '../../src/query/query-params.js';
import { parseQuery } from '../../src/query/parse.js';
import { planQuery } from '../../src/query/plan.js';
import type { Condition, QueryPlan } from '../../src/model/query-plan.js';
import type { Value } from '../../src/model/values.js';

const valueOf = (f: Field): Value =>
  f.type === 'date' ? '2024-01-02' : f.type === 'number' || f.type === 'integer' ? 1 : 'x';

/** Subsets of `xs` with at most `n` members. */
function subsets<T>(xs: readonly T[], n: number): T[][] {
  const out: T[][] = [[]];
  for (const x of xs) {
    for (const s of [...out]) if (s.length < n) out.push([...s, x]);
  }
  return out;
}

/** Plan shapes as planQuery builds them: exact filters, date range, any sort and order, offset, keyset. */
function* shapes(d: Dataset): Generator<QueryPlan> {
  const ranges: Condition[][] = d.range
    ? [
        [],
        [{ field: d.range, op: 'gte', value: '2024-01-01' }],
        [{ field: d.range, op: 'lte', value: '2024-12-31' }],
        [
          { field: d.range, op: 'gte', value: '2024-01-01' },
          { field: d.range, op: 'lte', value: '2024-12-31' },
        ],
      ]
    : [[]];
  for (const exact of subsets(d.exact, 3)) {
    for (const range of ranges) {
      const where: Condition[] = [
        ...exact.map((f): Condition => ({ field: f, op: 'eq', value: valueOf(f) })),
        ...range,
      ];
      for (const sort of d.rowFields) {
        for (const dir of ['asc', 'desc'] as const) {
          const orderBy = [
            { field: sort, dir },
            ...d.key.filter((k) => k !== sort).map((k) => ({ field: k, dir: 'asc' as const })),
          ];
          const base: QueryPlan = {
            dataset: d,
            select: d.rowFields,
            where,
            orderBy,
            limit: MAX_LIMIT,
            offset: 0,
          };
          yield base;
          yield { ...base, offset: BOUNDED_OFFSET };
          yield { ...base, limit: BOUNDED_LIMIT, after: orderBy.map((o) => valueOf(o.field)) };
        }
      }
    }
  }
}

function explain(store: SqliteStore, s: ReturnType<typeof planCountSql>): string {
  const { sql, params } = compile(s, SQLITE);
  return (store.raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
    .map((r) => r.detail)
    .join('; ');
}

it('every plan shape classed bounded is served by an index in its order, its bounded count by a key range', async () => {
  const store = new SqliteStore(CATALOG, { file: ':memory:' });
  await store.migrate();
  let pages = 0;
  let counts = 0;
  for (const d of CATALOG.datasets) {
    for (const plan of shapes(d)) {
      const b = boundedRead(plan);
      if (!b.page) continue;
      pages++;
      const what = `${d.name} where ${plan.where.map((c) => `${c.field.name} ${c.op}`).join(', ')} order ${plan.orderBy
        .map((o) => `${o.field.name} ${o.dir}`)
        .join(', ')} offset ${plan.offset}${plan.after ? ' keyset' : ''}`;
      const page = explain(store, renderSelect(planSelectParts(plan, SQLITE, true, false)));
      assert.doesNotMatch(page, /TEMP B-TREE/, `${what}: ${page}`);
      // A scan is only an index walked in order, with no filter left to skip rows.
      if (plan.where.length > 0 || plan.after) assert.doesNotMatch(page, /\bSCAN\b/, `${what}: ${page}`);
      else assert.match(page, /^SCAN \S+ USING (COVERING )?INDEX/, `${what}: ${page}`);
      if (b.count) {
        counts++;
        const count = explain(store, planCountSql(plan, SQLITE));
        assert.match(count, /^SEARCH \S+ USING (COVERING )?INDEX \S+ \(/, `${what} count: ${count}`);
      }
    }
  }
  // The shapes the service is read with most are among them.
  assert.ok(pages > 1000 && counts > 100, `${pages} pages, ${counts} counts classed bounded`);
  await store.close();
});

it('the random one-code page is bounded with its count; heavy plans are not', () => {
  const d = CATALOG.byName.get('etf_daily');
  assert.ok(d);
  const plan = (q: Record<string, string>): QueryPlan => planQuery(d, parseQuery(d, q));
  const page = {
    code: '510300',
    date_from: '2020-01-01',
    date_to: '2020-12-31',
    limit: '100',
    offset: '100',
  };
  assert.deepEqual(boundedRead(plan(page)), { page: true, count: true });
  // Every code's newest rows: the sort's own index serves the page; the count is the whole table.
  assert.deepEqual(boundedRead(plan({})), { page: true, count: false });
  const heavy: [string, QueryPlan][] = [
    ['sort on an unindexed field', plan({ ...page, sort: 'close' })],
    ['sort on an unindexed field, every code', plan({ sort: 'close', limit: '1000' })],
    ['deep offset', plan({ ...page, offset: String(BOUNDED_OFFSET + 1) })],
    [
      'adjusted cross-section',
      plan({ date_from: '2020-01-01', date_to: '2020-01-10', adjust: 'hfq', sort: 'close' }),
    ],
    ['adjusted one code', plan({ ...page, adjust: 'qfq' })],
    ['resampled', plan({ ...page, interval: '1M' })],
    ['as_of', plan({ ...page, as_of: '2024-01-01T00:00:00Z' })],
    ['a list of codes', plan({ ...page, code: '510300,510500' })],
    ['source precedence', plan({ ...page, source_priority: 'a,b' })],
    ['an export chunk', { ...plan(page), bulk: true }],
    ['the trail', { ...plan(page), trail: true }],
    ['longer than a page', { ...plan(page), limit: BOUNDED_LIMIT + 1 }],
  ];
  for (const [what, p] of heavy) assert.equal(boundedRead(p).page, false, what);
  assert.equal(BOUNDED_LIMIT, MAX_LIMIT + 1, 'the largest page and its keyset probe row');
});

it("a block table's read is bounded only for one code's day (one row per source), by its key index", async () => {
  const d = CATALOG.byName.get('stock_minute')?.blocks?.stored;
  assert.ok(d);
  const field = (n: string): Field => d.fieldByName.get(n) as Field;
  const code: Condition = { field: field('symbol'), op: 'eq', value: '600000' };
  const date: Condition = { field: field('date'), op: 'eq', value: '2024-03-01' };
  const base: QueryPlan = {
    dataset: d,
    select: d.rowFields,
    where: [code, date],
    orderBy: d.key.map((k) => ({ field: k, dir: 'asc' as const })),
    limit: 6001,
    offset: 0,
  };
  assert.deepEqual(boundedRead(base), { page: true, count: true });
  // The page's date given twice (its filter and the day read): still one day.
  assert.deepEqual(boundedRead({ ...base, where: [code, date, date] }), { page: true, count: true });
  const store = new SqliteStore(CATALOG, { file: ':memory:' });
  await store.migrate();
  const page = explain(store, renderSelect(planSelectParts(base, SQLITE, true, false)));
  assert.doesNotMatch(page, /TEMP B-TREE|\bSCAN\b/, page);
  await store.close();
  const heavy: [string, QueryPlan][] = [
    ['one code, every day', { ...base, where: [code] }],
    ['one day, every code', { ...base, where: [date] }],
    ['a date range', { ...base, where: [code, { ...date, op: 'gte' }] }],
    ['as_of', { ...base, asOf: '2024-01-01T00:00:00.000Z' }],
    ['distinct', { ...base, distinct: true }],
    ['an export chunk', { ...base, bulk: true }],
    ['an offset', { ...base, offset: 1 }],
  ];
  for (const [what, p] of heavy) assert.equal(boundedRead(p).page, false, what);
});
