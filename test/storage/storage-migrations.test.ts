import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { CATALOG, compileCatalog, compileDataset, DECLARATIONS } from '../../src/catalog/catalog.js';
import type { DatasetDeclaration } from '../../src/catalog/types.js';
import { createStore } from '../../src/storage/create-store.js';
import { SCHEMA_VERSION } from '../../src/storage/migrations.js';
import { REV_BATCH, REV_FROM, REV_OP } from '../../src/model/revisions.js';
import { revisionColumns } from '../../src/storage/revisions.js';
import { rowJson } from '../../src/model/row-json.js';
import type { Row } from '../../src/model/values.js';
import { batch, etfBar } from '../helpers/batches.js';
import {
  ADMIN_TOKEN,
  backends,
  freshDatabaseUrl,
  get,
  json,
  push,
  startApp,
  type Backend,
  type Harness,
} from '../helpers/harness.js';
import { spawnServer } from '../helpers/server-process.js';

/**
 * Upgrades: a database written by the previous release (its DDL recreated here, as that release
 * ran it) and a dataset whose declaration gains a field after rows were stored. Both backends.
 */

const TYPES = {
  sqlite: { text: 'TEXT', int: 'INTEGER', real: 'REAL', strict: ' STRICT' },
  postgres: { text: 'text COLLATE "C"', int: 'bigint', real: 'double precision', strict: '' },
};

/** The DDL of release 0.1 (src/storage/internal-tables.ts and schema.ts as they were then). */
function previousReleaseDdl(backend: Backend): string[] {
  const { text, int, real, strict } = TYPES[backend];
  return [
    `CREATE TABLE IF NOT EXISTS mds_batches (
      batch_id ${text} PRIMARY KEY, dataset ${text} NOT NULL, source ${text} NOT NULL,
      operation ${text} NOT NULL, snapshot_type ${text} NOT NULL, business_date ${text} NOT NULL,
      source_system ${text} NOT NULL, source_run_id ${text} NOT NULL, record_count ${int} NOT NULL,
      checksum ${text} NOT NULL, status ${text} NOT NULL, accepted ${int} NOT NULL,
      rejected ${int} NOT NULL, duplicate ${int} NOT NULL, pruned ${int} NOT NULL,
      errors ${text} NOT NULL, created_at ${text} NOT NULL, processed_at ${text} NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ix_mds_batches__processed_at ON mds_batches (processed_at)`,
    `CREATE INDEX IF NOT EXISTS ix_mds_batches__dataset ON mds_batches (dataset, processed_at)`,
    `CREATE TABLE IF NOT EXISTS mds_dataset_state (
      dataset ${text} PRIMARY KEY, version ${int} NOT NULL,
      last_batch_id ${text}, last_batch_at ${text})`,
    `CREATE TABLE IF NOT EXISTS mds_keys (
      id ${text} PRIMARY KEY, name ${text} NOT NULL, scope ${text} NOT NULL, prefix ${text} NOT NULL,
      hash ${text} NOT NULL UNIQUE, rate_per_minute ${int}, daily_quota ${int},
      created_at ${text} NOT NULL, last_used_at ${text}, revoked_at ${text})`,
    `CREATE TABLE IF NOT EXISTS mds_key_usage (
      key_id ${text} NOT NULL, hour ${text} NOT NULL, count ${int} NOT NULL,
      PRIMARY KEY (key_id, hour))`,
    // fx as that release declared it: no "bid" yet, "symbol" not yet renamed to "code".
    `CREATE TABLE IF NOT EXISTS "fx" ("symbol" ${text} NOT NULL, "date" ${text} NOT NULL, "open" ${real},
      "high" ${real}, "low" ${real}, "close" ${real} NOT NULL, "ask" ${real}, "source" ${text} NOT NULL,
      "updated_at" ${text}, "created_at" ${text} NOT NULL, "mds_row_json" ${text})${strict}`,
    `CREATE UNIQUE INDEX IF NOT EXISTS "uk_fx" ON "fx" ("symbol", "date" DESC, "source")`,
  ];
}

const fxDeclaration = DECLARATIONS.find((d) => d.name === 'fx') as DatasetDeclaration;
/** fx before it gained "bid" and renamed "symbol" to "code" in answers. */
const olderFx: DatasetDeclaration = {
  ...fxDeclaration,
  fields: Object.fromEntries(Object.entries(fxDeclaration.fields).filter(([k]) => k !== 'bid')),
  rename: {},
  exact: ['symbol', 'date', 'source'],
};
const olderCatalog = compileCatalog(DECLARATIONS.map((d) => (d.name === 'fx' ? olderFx : d)));

const fxRows: Row[] = ['2024-01-02', '2024-01-03', '2024-01-04'].map((date, i) => ({
  symbol: 'USDCNY',
  date,
  open: 7.1 + i,
  high: 7.2,
  low: 7,
  close: 7.15,
  ask: i === 1 ? null : 7.16,
  source: 'ecb',
  updated_at: '2024-01-05T00:00:00.000Z',
}));

/** Runs statements on the database behind the service's back (`?` placeholders); the last one's rows. */
async function raw(
  backend: Backend,
  url: string,
  statements: readonly (string | [string, unknown[]])[],
): Promise<Record<string, unknown>[]> {
  let last: Record<string, unknown>[] = [];
  if (backend === 'sqlite') {
    const db = new Database(url.slice('sqlite:'.length));
    try {
      for (const s of statements) {
        const [text, params] = typeof s === 'string' ? [s, []] : s;
        const stmt = db.prepare(text);
        if (stmt.reader) last = stmt.all(...params) as Record<string, unknown>[];
        else stmt.run(...params);
      }
    } finally {
      db.close();
    }
    return last;
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (const s of statements) {
      const [text, params] = typeof s === 'string' ? [s, []] : s;
      let n = 0;
      last = (
        await c.query(
          text.replace(/\?/g, () => `$${++n}`),
          params,
        )
      ).rows as Record<string, unknown>[];
    }
  } finally {
    await c.end();
  }
  return last;
}

/** The default page (stored row JSON) and the same page through `fields=` naming every field. */
async function bothPages(
  app: Parameters<typeof get>[0],
  query: string,
): Promise<{ stored: unknown[]; projected: unknown[] }> {
  const fx = CATALOG.byName.get('fx');
  assert.ok(fx);
  const all = fx.rowFields.map((f) => f.apiName).join(',');
  const stored = await get(app, `${fx.endpoint}?${query}`);
  const projected = await get(app, `${fx.endpoint}?${query}&fields=${all}`);
  assert.equal(stored.statusCode, 200, stored.body);
  assert.equal(projected.statusCode, 200, projected.body);
  return { stored: json(stored).data as unknown[], projected: json(projected).data as unknown[] };
}

const oldBatch = {
  batch_id: 'b-0.1',
  dataset: 'fx',
  source: 'ecb',
  operation: 'upsert',
  snapshot_type: 'incremental',
  business_date: '2024-01-04',
  source_system: 'upstream',
  source_run_id: 'run-1',
  record_count: 3,
  checksum: 'c'.repeat(64),
  status: 'accepted' as const,
  accepted: 3,
  rejected: 0,
  duplicate: 0,
  pruned: 0,
  errors: [],
  created_at: '2024-01-05T00:00:00.000Z',
  processed_at: '2024-01-05T00:00:01.000Z',
};

for (const backend of await backends()) {
  test(`${backend}: a database of the previous release is upgraded; its row JSON follows the catalog`, async () => {
    const db = await freshDatabaseUrl(backend);
    try {
      const olderJson = rowJson(compileDataset(olderFx));
      const cols = ['symbol', 'date', 'open', 'high', 'low', 'close', 'ask', 'source', 'updated_at'];
      await raw(backend, db.url, [
        ...previousReleaseDdl(backend),
        ...fxRows.map((r): [string, unknown[]] => [
          `INSERT INTO fx (${cols.join(', ')}, created_at, mds_row_json) VALUES (${cols.map(() => '?').join(', ')}, ?, ?)`,
          [...cols.map((c) => r[c]), '2024-01-05T00:00:01.000Z', olderJson(r)],
        ]),
        [
          `INSERT INTO mds_batches VALUES (${Object.keys(oldBatch)
            .map(() => '?')
            .join(', ')})`,
          Object.values(oldBatch).map((v) => (Array.isArray(v) ? JSON.stringify(v) : v)),
        ],
        [`INSERT INTO mds_dataset_state VALUES ('fx', 3, 'b-0.1', ?)`, [oldBatch.processed_at]],
        [
          `INSERT INTO mds_keys VALUES ('k1', 'old key', 'query', 'mdsq_abc', ?, 60, NULL, ?, NULL, NULL)`,
          ['h'.repeat(64), oldBatch.created_at],
        ],
        `INSERT INTO mds_key_usage VALUES ('k1', '2024-01-05T00', 7)`,
      ]);
      // Before the upgrade, that release answered the old shape (no "bid", "symbol").
      assert.deepEqual(Object.keys(JSON.parse(`${olderJson(fxRows[0] as Row)}}`) as object), cols);

      const h = await startApp(backend, {}, { databaseUrl: db.url });
      try {
        const versions = await raw(backend, db.url, ['SELECT version FROM mds_migrations ORDER BY version']);
        assert.deepEqual(
          versions.map((v) => Number(v.version)),
          Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
        );
        // What the old release stored is all there.
        // The status record gains reverted_at (issue 16), null for a batch never reverted.
        assert.deepEqual(await h.store.batches.getBatch('b-0.1'), { ...oldBatch, reverted_at: null });
        assert.equal((await h.store.keys.findKeyByHash('h'.repeat(64)))?.name, 'old key');
        assert.deepEqual(await h.store.keys.usage('2024-01-05T00'), [
          { key_id: 'k1', hour: '2024-01-05T00', count: 7 },
        ]);
        assert.equal(await h.store.datasets.datasetVersion('fx'), 3);

        // The default page answers the current declaration, exactly as fields= does.
        const { stored, projected } = await bothPages(h.app, 'code=USDCNY');
        assert.equal(stored.length, 3);
        assert.deepEqual(stored, projected);
        const first = stored[0] as Record<string, unknown>;
        assert.equal(first.code, 'USDCNY');
        assert.equal(first.bid, null);
        assert.ok(!('symbol' in first));
        assert.deepEqual(
          Object.keys(first),
          CATALOG.byName.get('fx')?.rowFields.map((f) => f.apiName),
        );

        // Migrating again changes nothing.
        const again = await createStore(db.url, CATALOG);
        try {
          await again.migrate();
        } finally {
          await again.close();
        }
        assert.equal(
          (await raw(backend, db.url, ['SELECT count(*) AS n FROM mds_migrations']))[0]?.n,
          backend === 'postgres' ? String(SCHEMA_VERSION) : SCHEMA_VERSION,
        );
      } finally {
        await h.close();
      }
    } finally {
      await db.drop();
    }
  });

  test(`${backend}: a declaration gains a field after rows were stored; migrate rebuilds their JSON`, async () => {
    const db = await freshDatabaseUrl(backend);
    try {
      const older = await createStore(db.url, olderCatalog);
      try {
        await older.migrate();
        const fx = olderCatalog.byName.get('fx');
        assert.ok(fx);
        const applied = await older.batches.applyBatch(
          {
            batchId: 'b1',
            dataset: fx,
            rows: fxRows,
            prune: null,
            now: '2024-01-05T00:00:01.000Z',
          },
          (o) => ({ ...oldBatch, batch_id: 'b1', accepted: o.written, reverted_at: null }),
        );
        assert.equal(applied.kind, 'applied');
      } finally {
        await older.close();
      }
      const h = await startApp(backend, {}, { databaseUrl: db.url });
      try {
        const { stored, projected } = await bothPages(h.app, 'code=USDCNY&limit=2');
        assert.deepEqual(stored, projected);
        assert.equal((stored[0] as Record<string, unknown>).bid, null);
        assert.equal((stored[1] as Record<string, unknown>).code, 'USDCNY');
      } finally {
        await h.close();
      }
    } finally {
      await db.drop();
    }
  });

  test(`${backend}: history as version 3 kept it (every open revision in the revision table) moves onto the rows`, async () => {
    const db = await freshDatabaseUrl(backend);
    const src = 'mig4';
    const day = '2024-04-01';
    const page = async (h: Harness, url: string): Promise<unknown> => {
      const res = await get(h.app, url);
      assert.equal(res.statusCode, 200, res.body);
      return json(res).data;
    };
    const tick = async (): Promise<string> => {
      const t = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 3));
      return t;
    };
    try {
      let h = await startApp(backend, {}, { databaseUrl: db.url });
      const urls: string[] = [];
      let snapshotId = '';
      const seen: unknown[] = [];
      try {
        const pushed = async (body: Record<string, unknown>): Promise<string> => {
          const res = await push(h.app, body);
          assert.equal(res.statusCode, 200, res.body);
          return String(json(res).batch_id);
        };
        await pushed(
          batch(
            'etf_daily',
            [1, 2, 3].map((i) => etfBar(`M${i}`, day, { source: src, close: i })),
            { source: src },
          ),
        );
        const t1 = await tick();
        // Updates M1, prunes M2 and M3 (deletions), inserts M4.
        const snapshot = batch(
          'etf_daily',
          [etfBar('M1', day, { source: src, close: 10 }), etfBar('M4', day, { source: src, close: 4 })],
          { source: src, snapshotType: 'full_snapshot', businessDate: day },
        );
        snapshotId = await pushed(snapshot);
        const t2 = await tick();
        const kline = `/api/v1/etf/kline?source=${src}&sort=code&order=asc`;
        urls.push(
          `/api/v1/revisions/etf_daily?source=${src}`,
          kline,
          `${kline}&as_of=${encodeURIComponent(t1)}`,
          `${kline}&as_of=${encodeURIComponent(t2)}`,
        );
        for (const u of urls) seen.push(await page(h, u));
        assert.equal((seen[0] as unknown[]).length, 7);
      } finally {
        await h.close();
      }

      // The layout version 3 wrote: every current row's open revision in the revision table.
      const d = CATALOG.byName.get('etf_daily');
      assert.ok(d);
      const cols = [...revisionColumns(d), REV_OP, REV_BATCH, REV_FROM].map((c) => `"${c}"`).join(', ');
      await raw(backend, db.url, [
        `INSERT INTO mds_rev_etf_daily (${cols}, mds_valid_to) SELECT ${cols}, NULL FROM etf_daily`,
        'UPDATE etf_daily SET mds_op = NULL, mds_batch_id = NULL, mds_valid_from = NULL',
        'DELETE FROM mds_migrations WHERE version >= 4',
      ]);

      h = await startApp(backend, {}, { databaseUrl: db.url });
      try {
        for (const [i, u] of urls.entries()) assert.deepEqual(await page(h, u), seen[i], u);
        const [open] = await raw(backend, db.url, [
          "SELECT count(*) AS n FROM mds_rev_etf_daily WHERE mds_valid_to IS NULL AND mds_op <> 'delete'",
        ]);
        assert.equal(Number(open?.n), 0);
        // The moved history still reverts: the snapshot's update, deletions and insert undone.
        const res = await h.app.inject({
          method: 'POST',
          url: `/admin/api/batches/${encodeURIComponent(snapshotId)}/revert`,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        assert.equal(res.statusCode, 200, res.body);
        const counts = json(res).data as Record<string, unknown>;
        assert.deepEqual([counts.restored, counts.updated, counts.deleted], [2, 1, 1]);
        assert.deepEqual(await page(h, urls[1] as string), seen[2]);
      } finally {
        await h.close();
      }
    } finally {
      await db.drop();
    }
  });

  test(`${backend}: a database of a newer release is refused, nothing changed`, async () => {
    const db = await freshDatabaseUrl(backend);
    try {
      const store = await createStore(db.url, CATALOG);
      try {
        await store.migrate();
        await raw(backend, db.url, [
          [
            'INSERT INTO mds_migrations (version, name, applied_at) VALUES (?, ?, ?)',
            [SCHEMA_VERSION + 1, 'from the future', '2030-01-01T00:00:00.000Z'],
          ],
        ]);
        await assert.rejects(store.migrate(), /schema version \d+ is newer than this release/);
      } finally {
        await store.close();
      }
    } finally {
      await db.drop();
    }
  });
}

test('the server exits (not retries) on a database of a newer release', { timeout: 120_000 }, async () => {
  const db = await freshDatabaseUrl('sqlite');
  try {
    const store = await createStore(db.url, CATALOG);
    await store.migrate();
    await store.close();
    await raw('sqlite', db.url, [
      [
        'INSERT INTO mds_migrations (version, name, applied_at) VALUES (?, ?, ?)',
        [SCHEMA_VERSION + 1, 'from the future', '2030-01-01T00:00:00.000Z'],
      ],
    ]);
    const server = spawnServer({ DATABASE_URL: db.url });
    const code = await server.exited;
    assert.equal(code, 78, server.output());
    assert.match(server.output(), /schema is newer than this release/);
  } finally {
    await db.drop();
  }
});
