import type { Catalog } from '../catalog/catalog.js';
import type { Db } from './db.js';
import { internalTableStatements } from './internal-tables.js';
import { ROW_JSON_COLUMN } from './row-json.js';
import { catalogTables } from './schema.js';
import { createTableStatements, q, raw } from './sql.js';

/**
 * Creates or upgrades every table and index, in one transaction, the same steps on both
 * backends. Idempotent; concurrent starters serialise on the migration lock.
 */
export function migrate(db: Db, catalog: Catalog): Promise<void> {
  const dialect = db.dialect;
  return db.transaction(function* (tx) {
    yield* tx.lockMigration();
    yield* tx.exec(internalTableStatements(dialect));
    const tables = catalogTables(catalog);
    for (const t of tables) yield* tx.exec(createTableStatements(t, dialect).slice(0, 1));
    const existing = yield* tx.rows(raw(dialect.listColumns));
    const have = new Set(existing.map((r) => `${String(r.table_name)}.${String(r.column_name)}`));
    for (const t of tables) {
      // Columns added to the catalog after the table was created.
      const added = t.columns.filter((c) => !have.has(`${t.name}.${c.name}`));
      yield* tx.exec(
        added.map((c) => `ALTER TABLE ${q(t.name)} ADD COLUMN ${q(c.name)} ${dialect.columnType(c.type)}`),
      );
      const d = catalog.byName.get(t.name);
      if (d && added.some((c) => c.name === ROW_JSON_COLUMN)) yield* tx.fillRowJson(d);
      yield* tx.exec(createTableStatements(t, dialect).slice(1));
    }
  });
}
