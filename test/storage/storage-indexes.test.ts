// Issue 3: every exact filter and date range is served by an index, not a table scan.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOG } from '../../src/catalog/catalog.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { SQLITE, countStatement } from '../../src/storage/sql.js';
import type { QueryPlan } from '../../src/model/query-plan.js';

it('SQLite plans every exact filter and every date range with an index', async () => {
  const store = new SqliteStore(CATALOG, { file: ':memory:' });
  await store.migrate();
  for (const d of CATALOG.datasets) {
    const plans: QueryPlan[] = d.exact.map((f) => ({
      dataset: d,
      select: d.rowFields,
      where: [{ field: f, op: 'eq', value: f.type === 'string' || f.type === 'date' ? 'x' : 1 }],
      orderBy: [],
      limit: 1,
      offset: 0,
    }));
    if (d.range) {
      plans.push({
        dataset: d,
        select: d.rowFields,
        where: [{ field: d.range, op: 'gte', value: '2024-01-01' }],
        orderBy: [],
        limit: 1,
        offset: 0,
      });
    }
    for (const plan of plans) {
      const { sql, params } = countStatement(plan, SQLITE);
      const detail = (store.raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
        .map((r) => r.detail)
        .join('; ');
      assert.match(detail, /USING (COVERING )?INDEX/, `${d.name} ${plan.where[0]?.field.name}: ${detail}`);
    }
  }
  await store.close();
});

it('SQLite serves the default sort from indexes in its direction: no sorting step', async () => {
  const { parseQuery } = await import('../../src/query/parse.js');
  const { planQuery } = await import('../../src/query/plan.js');
  const { selectStatement } = await import('../../src/storage/sql.js');
  const store = new SqliteStore(CATALOG, { file: ':memory:' });
  await store.migrate();
  const d = CATALOG.byName.get('etf_daily');
  assert.ok(d);
  const planOf = (q: Record<string, string>): string => {
    const { sql, params } = selectStatement(planQuery(d, parseQuery(d, q)), SQLITE);
    return (store.raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
      .map((r) => r.detail)
      .join('; ');
  };
  const page = planOf({ code: '510300', date_from: '2020-01-01', date_to: '2020-12-31' });
  assert.match(page, /USING INDEX uk_etf_daily/);
  assert.doesNotMatch(page, /TEMP B-TREE/);
  // The unfiltered listing and one day of every code: the sort's own index, no sorting step.
  const listings: Record<string, string>[] = [{}, { date: '2024-01-02' }, { date_from: '2024-01-01' }];
  for (const q of listings) {
    const detail = planOf(q);
    assert.match(detail, /ix_etf_daily__date__symbol__source/, `${JSON.stringify(q)}: ${detail}`);
    assert.doesNotMatch(detail, /TEMP B-TREE/, `${JSON.stringify(q)}: ${detail}`);
  }
  await store.close();
});
