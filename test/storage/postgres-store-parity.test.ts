import assert from 'node:assert/strict';
import { fromColumns } from '../../src/model/value-columns.js';
import { after, before, describe, test } from 'node:test';
import { CATALOG, type Dataset } from '../../src/catalog/catalog.js';
import { QueryService } from '../../src/query/query-service.js';
import { createStore } from '../../src/storage/create-store.js';
import type {
  BatchStore,
  ChangeStore,
  DatasetStore,
  KeyStore,
  RevisionStore,
  Store,
  WriteBatch,
} from '../../src/storage/store.js';
import type { ApiKeyRecord } from '../../src/model/keys.js';
import type { BatchRecord } from '../../src/model/batch.js';
import type { QueryPlan } from '../../src/model/query-plan.js';
import type { Row } from '../../src/model/values.js';
import { acceptedRecord } from '../helpers/batches.js';
import { freshDatabaseUrl } from '../helpers/harness.js';
import { POOLER_TUNING, postgresAvailable } from '../helpers/postgres.js';

/**
 * The Store interface, driven directly with the same calls on SQLite and on PostgreSQL: every
 * answer must be identical (values, types, order, counts), including the parts the HTTP suites
 * touch least: coverage, batch lists, keys, usage, versions, streaming.
 */

const pgUp = await postgresAvailable();
function dataset(name: string): Dataset {
  const d = CATALOG.byName.get(name);
  if (!d) throw new Error(`no dataset ${name}`);
  return d;
}
const etf = dataset('etf_daily');
const fx = dataset('fx');
const NOW = '2024-06-03T09:00:00.000Z';

function row(symbol: string, date: string, extra: Partial<Row> = {}): Row {
  return {
    symbol,
    date,
    open: null,
    high: 1.5,
    low: -0.0000001,
    close: 0.1 + 0.2,
    pre_close: null,
    change: 1e21,
    pct_chg: -5e-324,
    volume: 9007199254740991,
    amount: 123.456,
    turnover_rate: null,
    source: 'src',
    updated_at: '2024-06-03T08:00:00.000Z',
    ...extra,
  };
}

function record(id: string, o: { written: number; unchanged: number; pruned: number }): BatchRecord {
  return acceptedRecord(
    { ...o, processedAt: NOW },
    {
      batch_id: id,
      source: 'src',
      business_date: '2024-06-03',
      source_run_id: 'run',
      checksum: 'c'.repeat(64),
      errors: [{ index: null, idempotency_key: null, field: null, reason: 'note ünïcode' }],
    },
  );
}

const write = (batchId: string, rows: Row[], prune: WriteBatch['prune'] = null): WriteBatch => ({
  batchId,
  dataset: etf,
  rows,
  prune,
  now: NOW,
});

const plan = (over: Partial<QueryPlan> = {}): QueryPlan => ({
  dataset: etf,
  select: etf.rowFields,
  where: [],
  orderBy: [
    { field: etf.fieldByName.get('open') ?? etf.rowFields[0]!, dir: 'asc' },
    ...etf.key.map((f) => ({ field: f, dir: 'asc' as const })),
  ],
  limit: 1000,
  offset: 0,
  ...over,
});

const key = (id: string, hash: string): ApiKeyRecord => ({
  id,
  name: `key ${id}`,
  scope: 'query',
  prefix: hash.slice(0, 8),
  hash,
  rate_per_minute: 60,
  daily_quota: null,
  created_at: NOW,
  last_used_at: null,
  revoked_at: null,
});

/** Runs one scenario on a store and returns everything it observed. */
async function scenario(store: Store): Promise<unknown[]> {
  const seen: unknown[] = [];
  const rows = [
    row('B', '2024-06-03'),
    row('a', '2024-06-03', { open: 2 }),
    row('Ä', '2024-06-03', { open: -1 }),
    row('b', '2024-06-03', { open: 2, amount: null }),
    row('A', '2024-06-04'),
  ];
  seen.push(await store.batches.applyBatch(write('b1', rows), (o) => record('b1', o)));
  // Same rows again: nothing written; one changed row and one new.
  seen.push(await store.batches.applyBatch(write('b1', rows), (o) => record('b1', o)));
  const changed = [...rows.slice(0, 4), row('A', '2024-06-04', { close: 7 }), row('c', '2024-06-05')];
  seen.push(await store.batches.applyBatch(write('b2', changed), (o) => record('b2', o)));
  // updated_at alone is no change: unchanged (the stored updated_at stays); another value: changed.
  const later = [row('c', '2024-06-05', { updated_at: '2024-06-05T00:00:00.000Z' })];
  seen.push(await store.batches.applyBatch(write('b3', later), (o) => record('b3', o)));
  const moved = [row('c', '2024-06-05', { updated_at: '2024-06-05T00:00:00.000Z', close: 8 })];
  seen.push(await store.batches.applyBatch(write('b4', moved), (o) => record('b4', o)));
  // Full snapshot of 2024-06-03 / src keeping two rows.
  seen.push(
    await store.batches.applyBatch(
      write('b5', [row('a', '2024-06-03', { open: 3 }), row('B', '2024-06-03')], {
        partitionValue: '2024-06-03',
        source: 'src',
      }),
      (o) => record('b5', o),
    ),
  );
  seen.push(await store.datasets.query(plan(), true));
  seen.push(
    await store.datasets.query(plan({ orderBy: plan().orderBy.map((o) => ({ ...o, dir: 'desc' })) }), true),
  );
  seen.push(await store.datasets.query(plan({ limit: 2, offset: 1 }), true));
  seen.push(await store.datasets.query(plan({ offset: 50 }), true));
  // Columns of the selected values (the exports' reads), a page of them, past the end.
  seen.push(await store.datasets.queryColumns(plan()));
  seen.push(await store.datasets.queryColumns(plan({ limit: 2, offset: 1 })));
  seen.push(await store.datasets.queryColumns(plan({ offset: 50 })));
  // Whole rows as their stored JSON, with and without the total, past the end.
  seen.push(await store.datasets.queryJson(plan(), true));
  seen.push(await store.datasets.queryJson(plan({ limit: 2, offset: 1 }), false));
  seen.push(await store.datasets.queryJson(plan({ offset: 50 }), true));
  seen.push(
    await store.datasets.query(plan({ where: [{ field: etf.key[0]!, op: 'like', value: 'ä' }] }), true),
  );
  seen.push(
    await store.datasets.query(plan({ where: [{ field: etf.key[0]!, op: 'like', value: '%' }] }), true),
  );
  seen.push(await store.datasets.datasetVersion('etf_daily'));
  seen.push(await store.datasets.datasetVersion('fx'));
  seen.push((await store.datasets.firstChange('etf_daily')) !== null, await store.datasets.firstChange('fx'));
  seen.push(await store.datasets.sourceValues('etf_daily'), await store.datasets.sourceValues('fx'));
  seen.push(await store.batches.getBatch('b2'));
  seen.push(await store.batches.getBatch('nope'));
  seen.push(await store.batches.listBatches({ limit: 10 }));
  seen.push(await store.batches.listBatches({ dataset: 'etf_daily', status: 'accepted', limit: 2 }));
  seen.push(await store.datasets.coverage());
  // A rejected batch's id can be used again; an accepted one cannot.
  seen.push(
    await store.batches.saveRejectedBatch({
      ...record('r1', { written: 0, unchanged: 0, pruned: 0 }),
      status: 'rejected',
    }),
  );
  seen.push(await store.batches.applyBatch(write('r1', [row('d', '2024-06-06')]), (o) => record('r1', o)));
  seen.push(
    await store.batches.saveRejectedBatch({
      ...record('b1', { written: 0, unchanged: 0, pruned: 0 }),
      status: 'rejected',
    }),
  );

  // Streaming: 2,500 rows in pages, same order as a query.
  const many = Array.from({ length: 2500 }, (_, i) => row(`S${String(i).padStart(5, '0')}`, '2024-07-01'));
  await store.batches.applyBatch(write('big', many), (o) => record('big', o));
  const pages: number[] = [];
  const streamed: unknown[] = [];
  for await (const page of new QueryService(store).stream(
    plan({ where: [{ field: etf.fieldByName.get('date')!, op: 'eq', value: '2024-07-01' }] }),
  )) {
    pages.push(page.length);
    streamed.push(...page);
  }
  seen.push(
    pages.reduce((a, b) => a + b, 0),
    streamed.slice(0, 3),
    streamed.slice(-1),
  );
  // The same rows column by column: a projection without the sort fields leaves them out.
  const dated = plan({ where: [{ field: etf.fieldByName.get('date')!, op: 'eq', value: '2024-07-01' }] });
  const arrays: unknown[] = [];
  for await (const chunk of new QueryService(store).streamArrays({ ...dated, select: [dated.select[3]!] })) {
    assert.equal(chunk.columns.length, 1);
    arrays.push(...fromColumns(chunk));
  }
  seen.push(arrays.length, arrays.slice(0, 3), arrays.slice(-1));
  // A consumer that stops early releases its connection.
  for await (const page of new QueryService(store).stream(plan())) {
    seen.push(page.length > 0);
    break;
  }

  // The dataset's state; a quality report's calendar, its rows computed, its summaries' pages.
  seen.push(await store.datasets.datasetState('etf_daily'), await store.datasets.datasetState('fx'));
  const qq = {
    dataset: etf,
    calendar: dataset('trade_calendar'),
    exchange: 'SSE',
    code: null,
    dateFrom: null,
    dateTo: null,
  };
  seen.push(await store.datasets.qualityCalendar(qq, '2024-06-30'));
  seen.push(await store.datasets.qualityCodes({ ...qq, dateFrom: '2024-06-04' }));
  const page = { sort: 'code', order: 'desc', limit: 3, offset: 1 } as const;
  seen.push(await store.datasets.qualitySummaryPage(qq, '2024-06-05', page));
  seen.push(await store.datasets.qualitySummaryPage({ ...qq, code: 'A' }, null, { ...page, offset: 0 }));
  seen.push(await store.datasets.qualityChecks(qq, ['A', 'B'], 1));
  // The minute report's codes (their values on both backends: test/query/minute-quality.test.ts).
  const mq = { dataset: dataset('stock_minute'), code: null, source: null, dateFrom: null, dateTo: null };
  seen.push(await store.datasets.minuteQualityPage({ ...mq, order: 'asc' }, 10, 0, 6000));
  seen.push(await store.datasets.minuteQualityPage({ ...mq, order: 'desc' }, 10, 0, 1));

  // Revisions: what a batch changed, reverts (done, unknown batch), retention.
  const b2 = await store.batches.getBatch('b2');
  assert.ok(b2);
  seen.push(await store.revisions.batchChanges(b2, 5));
  seen.push(await store.revisions.revertBatch('b4', () => NOW));
  seen.push(await store.revisions.revertBatch('nope', () => NOW));
  seen.push(await store.revisions.purgeRevisions('2000-01-01T00:00:00.000Z'));
  // The feed: every change above as one event, in commit order; then retention of them.
  seen.push(await store.changes.list({ datasets: null, after: 0, limit: 1000 }));
  seen.push(await store.changes.list({ datasets: ['fx'], after: 1, limit: 2 }));
  seen.push(await store.changes.purge('2000-01-01T00:00:00.000Z'));
  seen.push(await store.datasets.query(plan(), true));

  // Keys and usage.
  await store.keys.insertKey(key('k1', 'h'.repeat(64)));
  await store.keys.insertKey(key('k2', 'g'.repeat(64)));
  seen.push(await store.keys.listKeys());
  seen.push(await store.keys.findKeyByHash('g'.repeat(64)));
  seen.push(await store.keys.updateKey('k1', { name: 'renamed', daily_quota: 1000, rate_per_minute: null }));
  seen.push(await store.keys.revokeKey('k2', NOW));
  seen.push(await store.keys.revokeKey('k2', '2030-01-01T00:00:00.000Z'));
  seen.push(await store.keys.getKey('missing'));
  await store.keys.recordUsage([
    { keyId: 'k1', hour: '2024-06-03T09', count: 3, lastUsed: '2024-06-03T09:10:00.000Z' },
    { keyId: 'k1', hour: '2024-06-03T09', count: 2, lastUsed: '2024-06-03T09:05:00.000Z' },
    { keyId: 'k2', hour: '2024-06-03T10', count: 1, lastUsed: '2024-06-03T10:00:00.000Z' },
  ]);
  seen.push(await store.keys.usage('2024-06-03T00'));
  seen.push(await store.keys.getKey('k1'));
  seen.push(await store.batches.purgeBatches('2024-06-03T09:00:00.001Z'));
  seen.push(await store.batches.listBatches({ limit: 10 }));
  return seen;
}

/**
 * Every operation of the store's parts. An operation added to an interface does not compile here
 * until it is listed, and the test below fails until the scenario calls it.
 */
const OPERATIONS = {
  datasets: {
    query: true,
    queryColumns: true,
    queryJson: true,
    datasetVersion: true,
    datasetState: true,
    firstChange: true,
    sourceValues: true,
    coverage: true,
    qualityCalendar: true,
    qualityCodes: true,
    qualitySummaryPage: true,
    qualityChecks: true,
    minuteQualityPage: true,
  } satisfies Record<keyof DatasetStore, true>,
  batches: {
    getBatch: true,
    applyBatch: true,
    saveRejectedBatch: true,
    purgeBatches: true,
    listBatches: true,
  } satisfies Record<keyof BatchStore, true>,
  revisions: { revertBatch: true, batchChanges: true, purgeRevisions: true } satisfies Record<
    keyof RevisionStore,
    true
  >,
  changes: { list: true, purge: true } satisfies Record<keyof ChangeStore, true>,
  keys: {
    insertKey: true,
    listKeys: true,
    getKey: true,
    findKeyByHash: true,
    updateKey: true,
    revokeKey: true,
    recordUsage: true,
    usage: true,
  } satisfies Record<keyof KeyStore, true>,
};

/** `store` with every call of its parts' operations noted in `called` ("part.operation"). */
function recording(store: Store, called: Set<string>): Store {
  const wrap = <T extends object>(part: T, name: string): T =>
    new Proxy(part, {
      get(target, prop, receiver) {
        const v: unknown = Reflect.get(target, prop, receiver);
        if (typeof v !== 'function' || typeof prop !== 'string') return v;
        return (...args: unknown[]) => {
          called.add(`${name}.${prop}`);
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return {
    backend: store.backend,
    datasets: wrap(store.datasets, 'datasets'),
    batches: wrap(store.batches, 'batches'),
    keys: wrap(store.keys, 'keys'),
    revisions: wrap(store.revisions, 'revisions'),
    changes: wrap(store.changes, 'changes'),
    migrate: () => store.migrate(),
    ping: () => store.ping(),
    readToken: () => store.readToken(),
    close: () => store.close(),
  };
}

describe(
  'Store parity: SQLite and PostgreSQL answer alike',
  { skip: !pgUp && 'PostgreSQL unreachable' },
  () => {
    const stores: Store[] = [];
    const drops: (() => Promise<void>)[] = [];

    before(async () => {
      for (const backend of ['sqlite', 'postgres'] as const) {
        const db = await freshDatabaseUrl(backend);
        drops.push(db.drop);
        const store = await createStore(db.url, CATALOG, POOLER_TUNING);
        await store.migrate();
        await store.migrate(); // idempotent
        stores.push(store);
      }
    });

    after(async () => {
      for (const s of stores) await s.close();
      for (const d of drops) await d();
    });

    test('the same calls give the same answers', async () => {
      const [sqlite, postgres] = stores as [Store, Store];
      const called = new Set<string>();
      const a = await scenario(recording(sqlite, called));
      const b = await scenario(postgres);
      assert.equal(a.length, b.length);
      for (let i = 0; i < a.length; i++) assert.deepStrictEqual(b[i], a[i], `step ${i}`);
      const every = Object.entries(OPERATIONS).flatMap(([part, ops]) =>
        Object.keys(ops).map((op) => `${part}.${op}`),
      );
      assert.deepEqual(
        every.filter((op) => !called.has(op)),
        [],
        'the scenario calls every store operation',
      );
    });

    test('values come back with the same JavaScript types and bits', async () => {
      const [sqlite, postgres] = stores as [Store, Store];
      const q = plan({ where: [{ field: etf.key[0]!, op: 'eq', value: 'c' }] });
      const [x] = (await sqlite.datasets.query(q, false)).rows;
      const [y] = (await postgres.datasets.query(q, false)).rows;
      assert.ok(x && y);
      for (const k of Object.keys(x)) {
        assert.equal(typeof y[k], typeof x[k], k);
        assert.ok(Object.is(y[k], x[k]), `${k}: ${String(y[k])} vs ${String(x[k])}`);
      }
      assert.equal(y.volume, 9007199254740991);
      assert.equal(y.close, 0.30000000000000004);
      assert.equal(y.pct_chg, -5e-324);
    });

    test('a fresh dataset that never got a batch', async () => {
      const [sqlite, postgres] = stores as [Store, Store];
      const q: QueryPlan = {
        dataset: fx,
        select: fx.rowFields,
        where: [],
        orderBy: [{ field: fx.sort.field, dir: fx.sort.order }],
        limit: 5,
        offset: 0,
      };
      assert.deepStrictEqual(await postgres.datasets.query(q, true), await sqlite.datasets.query(q, true));
    });
  },
);
