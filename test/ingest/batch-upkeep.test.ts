import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CATALOG, type Dataset } from '../../src/catalog/catalog.js';
import { IngestService } from '../../src/ingest/ingest-service.js';
import type { Db, Tx } from '../../src/storage/db.js';
import { refreshPeriods } from '../../src/storage/period-store.js';
import { refreshQuality } from '../../src/storage/quality-summary.js';
import { batchRevisionsSql } from '../../src/storage/revisions.js';
import { sql, type Sql } from '../../src/storage/sql.js';
import { SqlStore } from '../../src/storage/sql-store.js';
import type { Step } from '../../src/storage/step.js';
import { batch, etfBar } from '../helpers/batches.js';
import { backends, freshDb } from '../helpers/harness.js';

/**
 * Issue 31: a batch's upkeep (stored periods, quality summaries) is set-wise, its statements
 * bounded whatever the number of codes and periods it touches. A daily batch of 600 codes (600
 * weeks and 600 months, none consecutive with another of its code) is refreshed in a handful of
 * statements; the values themselves are held by bars-periods.test.ts and
 * quality-summaries.test.ts.
 */

const CODES = 600;
const ETF = CATALOG.byName.get('etf_daily') as Dataset;
const code = (i: number): string => String(510000 + i);
const day = (date: string) =>
  batch(
    'etf_daily',
    Array.from({ length: CODES }, (_, i) => etfBar(code(i), date)),
  );

/** The statements `body` runs in a transaction that is then rolled back. */
async function statementsOf(db: Db, body: (tx: Tx) => Step<void>): Promise<string[]> {
  const seen: string[] = [];
  const count =
    <T>(f: (s: Sql) => Step<T>) =>
    (s: Sql): Step<T> => {
      const text = s.chunks.map((c) => (typeof c === 'string' ? c : '?')).join('');
      seen.push(text.trim().split(/\s+/).slice(0, 3).join(' '));
      return f(s);
    };
  const rollback = new Error('rollback');
  await assert.rejects(
    db.transaction((tx) =>
      (function* () {
        yield* body({ ...tx, rows: count(tx.rows), run: count(tx.run) });
        throw rollback;
      })(),
    ),
    (err) => err === rollback,
  );
  return seen;
}

for (const backend of await backends()) {
  describe(`batch upkeep is set-wise (${backend})`, () => {
    let db: Db;
    let drop: () => Promise<void>;
    let changed: Sql;
    before(async () => {
      ({ db, drop } = await freshDb(backend));
      const store = new SqlStore(CATALOG, db);
      await store.migrate();
      const ingest = new IngestService(CATALOG, store, { maxRecords: 10_000 });
      let last = null;
      for (const date of ['2024-01-02', '2024-01-03']) {
        const out = await ingest.ingest(day(date));
        assert.equal(out.kind, 'processed');
        assert.equal(out.record.accepted, CODES);
        last = out.record;
      }
      // The batch's revisions, by the stamp its rows carry (mds_changes: stamp and known instant).
      const [stamp] = await db.rows(
        sql`SELECT valid_from FROM mds_changes WHERE dataset = 'etf_daily' AND batch_id = ${last!.batch_id}`,
      );
      changed = batchRevisionsSql(ETF, last!.batch_id, String(stamp?.valid_from));
      const [n] = await db.rows(sql`SELECT count(*) AS n FROM ${changed}`);
      assert.equal(Number(n?.n), CODES);
    });
    after(async () => {
      await db?.close();
      await drop?.();
    });

    test('the stored periods of 600 codes: one probe for deletions and one upsert per interval', async () => {
      const seen = await statementsOf(db, (tx) => refreshPeriods(tx, ETF, changed));
      assert.deepEqual(seen, [
        'SELECT 1 AS',
        'INSERT INTO "mds_periods_etf_daily"',
        'INSERT INTO "mds_periods_etf_daily"',
      ]);
    });

    test('the quality summaries of 600 codes: a handful of statements', async () => {
      const seen = await statementsOf(db, (tx) => refreshQuality(tx, CATALOG, ETF, changed));
      // The lock, the touched codes, the open days, their summaries, the extended verdicts
      // (aggregates, bad bars), and the upserts (600 = 512 + 64 + 16 + 8 rows): 10.
      assert.ok(seen.length <= 10, seen.join('\n'));
      assert.ok(!seen.some((s) => s.startsWith('DELETE')), 'summaries are written over, not deleted');
    });
  });
}
