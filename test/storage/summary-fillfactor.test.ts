import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CATALOG } from '../../src/catalog/catalog.js';
import type { Db } from '../../src/storage/db.js';
import { INTERNAL_TABLES } from '../../src/storage/internal-tables.js';
import { createTableStatements, POSTGRES, SQLITE, sql } from '../../src/storage/sql.js';
import { SqlStore } from '../../src/storage/sql-store.js';
import { backends, freshDb } from '../helpers/harness.js';

/**
 * Issue 31: each daily batch rewrites every code's quality summary, so on PostgreSQL their table
 * keeps half of each page for the new versions (written on the same page, the dead ones
 * reclaimed there without VACUUM; docs/performance.md). Set on every migrate, so a database
 * created before has it too; SQLite has no such option.
 */

const SUMMARIES = INTERNAL_TABLES.find((t) => t.name === 'mds_quality_codes');

test('the summaries table declares a fill factor; only PostgreSQL has a statement for it', () => {
  assert.equal(SUMMARIES?.fillfactor, 50);
  const spec = SUMMARIES as NonNullable<typeof SUMMARIES>;
  assert.ok(
    createTableStatements(spec, POSTGRES).includes('ALTER TABLE "mds_quality_codes" SET (fillfactor = 50)'),
  );
  assert.ok(!createTableStatements(spec, SQLITE).some((s) => s.includes('fillfactor')));
});

for (const backend of (await backends()).filter((b) => b === 'postgres')) {
  describe(`the summaries' fill factor (${backend})`, () => {
    let db: Db;
    let drop: () => Promise<void>;
    before(async () => {
      ({ db, drop } = await freshDb(backend));
    });
    after(async () => {
      await db?.close();
      await drop?.();
    });

    const options = async (): Promise<string> => {
      const [r] = await db.rows(
        sql`SELECT coalesce(array_to_string(reloptions, ','), '') AS o FROM pg_class WHERE relname = 'mds_quality_codes'`,
      );
      return String(r?.o);
    };

    test('set by migrate, and again on a table created without it', async () => {
      await new SqlStore(CATALOG, db).migrate();
      assert.equal(await options(), 'fillfactor=50');
      await db.transaction(function* (tx) {
        yield* tx.exec(['ALTER TABLE mds_quality_codes RESET (fillfactor)']);
      });
      assert.equal(await options(), '');
      await new SqlStore(CATALOG, db).migrate();
      assert.equal(await options(), 'fillfactor=50');
    });
  });
}
