import type { Catalog } from '../catalog/catalog.js';
import type { Db, Tx } from './db.js';
import { INTERNAL_TABLES, MIGRATIONS_TABLE } from './internal-tables.js';
import { rowShape } from '../model/row-json.js';
import { baselineChange, baselineSql, moveOpenRevisions } from './revisions.js';
import { buildMissingPeriods } from './period-store.js';
import { periodTable } from './periods.js';
import { buildMissingSummaries } from './quality-summary.js';
import { revisionTable, revisionTableName } from './revision-schema.js';
import { catalogTables, type TableSpec } from './schema.js';
import { createTableStatements, q, raw, sql } from './sql.js';
import type { Step } from './step.js';
import { SchemaTooNewError } from './store.js';

/**
 * One migration mechanism for every table, the service's own and the datasets', on both
 * backends, in one transaction under the migration lock:
 * 1. every table is brought to its declaration (internal-tables.ts, the catalog through
 *    schema.ts): created when missing, missing columns added, indexes created or replaced;
 * 2. the numbered migrations below the database has not seen run, in order, and each is
 *    recorded in mds_migrations: the schema version is the highest recorded (a database newer
 *    than this release is refused);
 * 3. what is derived from the catalog and stored follows the catalog: a dataset whose recorded
 *    row shape (row-json.ts rowShape) differs from the current declaration has its row JSON
 *    rebuilt in bounded steps, then the new shape is recorded;
 * 4. a daily dataset without quality summaries for its calendar (quality-summary.ts) gets them;
 * 5. a daily dataset without stored period bars of its current declaration (period-store.ts)
 *    gets them.
 * Idempotent; concurrent starters wait for the first.
 */

interface Migration {
  version: number;
  name: string;
  /** Data changes that declarations cannot express; runs after the tables match their declarations. */
  up?: (tx: Tx, catalog: Catalog) => Step<void>;
}

/**
 * The service's schema versions. A change of a table's declaration needs no entry (step 1 does
 * it); an entry records a release's schema and carries what step 1 cannot do (moving data, e.g.
 * copying a renamed column's values: `UPDATE t SET new = old`).
 */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'release 0.1: batches, dataset state, keys, key usage; dataset tables with row JSON' },
  { version: 2, name: 'schema versions (mds_migrations) and row shapes per dataset (mds_dataset_shapes)' },
  {
    version: 3,
    name: 'revision history (mds_rev_<dataset>, mds_batches.reverted_at); stored rows get a baseline revision',
    // Rows stored before history existed: one revision each, valid from this upgrade, so that no
    // as_of earlier than the upgrade claims values the service had not kept (docs/point-in-time.md).
    // Since version 4 that revision is the row's own stamp.
    *up(tx, catalog) {
      const at = new Date().toISOString();
      for (const d of catalog.datasets) yield* tx.run(baselineSql(d, at));
    },
  },
  {
    version: 4,
    name: 'a current row is its own open revision (stamp columns); the revision table keeps replaced versions and deletions',
    // The open revision of each current row moves onto the row; the revision table then holds
    // no copy of a current row (an insert writes one row, not two).
    *up(tx, catalog) {
      const at = new Date().toISOString();
      for (const d of catalog.datasets) {
        yield* moveOpenRevisions(tx, d);
        yield* tx.run(baselineSql(d, at));
      }
    },
  },
  // The summaries themselves are built by migrate's step 4, which also follows the catalog's calendars.
  {
    version: 5,
    name: 'quality report summaries per daily dataset and code (mds_quality_codes, mds_quality_state)',
  },
  // The periods themselves are built by migrate's step 5, which also follows the catalog's declarations.
  {
    version: 6,
    name: 'stored weekly and monthly bars per daily dataset (mds_periods_<dataset>, mds_period_state)',
  },
  {
    version: 7,
    name: 'knowledge time: each change records the instant it became visible (mds_changes)',
    // Every stamp written before is its own knowledge instant: one baseline row per dataset at
    // its latest stamp (sql.ts knownStamp).
    *up(tx, catalog) {
      for (const d of catalog.datasets) yield* baselineChange(tx, d);
    },
  },
  // The tables are created by step 1; the feed begins with the first change after the upgrade.
  {
    version: 8,
    name: 'change feed: one event per change, ids from a stored sequence (mds_events, mds_feed)',
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

export function migrate(db: Db, catalog: Catalog): Promise<void> {
  const dialect = db.dialect;
  return db.transaction(function* (tx) {
    yield* tx.lockMigration();
    yield* tx.exec(createTableStatements(MIGRATIONS_TABLE, dialect).slice(0, 1));
    const [applied] = yield* tx.rows(sql`SELECT max(version) AS v FROM mds_migrations`);
    const from = Number(applied?.v ?? 0);
    if (from > SCHEMA_VERSION) {
      throw new SchemaTooNewError(
        `the database's schema version ${from} is newer than this release's (${SCHEMA_VERSION}): ` +
          'run the release that wrote it, or restore a backup taken before the upgrade',
      );
    }

    const grown = yield* syncTables(tx, [
      ...INTERNAL_TABLES,
      ...catalogTables(catalog),
      ...catalog.datasets.map(revisionTable),
      ...catalog.datasets.flatMap((d) => periodTable(d) ?? []),
    ]);

    const now = new Date().toISOString();
    for (const m of MIGRATIONS) {
      if (m.version <= from) continue;
      if (m.up) yield* m.up(tx, catalog);
      yield* tx.run(
        sql`INSERT INTO mds_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${now})`,
      );
    }

    const shapes = yield* tx.rows(sql`SELECT dataset, row_shape FROM mds_dataset_shapes`);
    const recorded = new Map(shapes.map((r) => [String(r.dataset), String(r.row_shape)]));
    for (const d of catalog.datasets) {
      const shape = rowShape(d);
      if (recorded.get(d.name) === shape && !grown.has(d.name)) continue;
      // Rows written under another declaration, before shapes were recorded, or before the
      // JSON column existed: rebuilt.
      yield* tx.refillRowJson(d);
      // Revisions keep their row's JSON too: the same shape, so as_of pages follow the catalog.
      yield* tx.refillRowJson({ ...d, name: revisionTableName(d) });
      yield* tx.run(
        sql`INSERT INTO mds_dataset_shapes (dataset, row_shape) VALUES (${d.name}, ${shape})
           ON CONFLICT (dataset) DO UPDATE SET row_shape = excluded.row_shape`,
      );
    }

    yield* buildMissingSummaries(tx, catalog);
    yield* buildMissingPeriods(tx, catalog);
  });
}

/**
 * Step 1: every table as declared (CREATE … IF NOT EXISTS, ADD COLUMN, indexes). Returns the
 * tables that gained columns.
 */
function* syncTables(tx: Tx, tables: readonly TableSpec[]): Step<Set<string>> {
  const grown = new Set<string>();
  const dialect = tx.dialect;
  for (const t of tables) yield* tx.exec(createTableStatements(t, dialect).slice(0, 1));
  const existing = yield* tx.rows(raw(dialect.listColumns));
  const have = new Set(existing.map((r) => `${String(r.table_name)}.${String(r.column_name)}`));
  for (const t of tables) {
    // Columns declared after the table was created: nullable, whatever the declaration says,
    // since the rows already there have no value for them.
    const added = t.columns.filter((c) => !have.has(`${t.name}.${c.name}`));
    if (added.length > 0) grown.add(t.name);
    yield* tx.exec(
      added.map((c) => `ALTER TABLE ${q(t.name)} ADD COLUMN ${q(c.name)} ${dialect.columnType(c.type)}`),
    );
    yield* tx.exec(createTableStatements(t, dialect).slice(1));
  }
  return grown;
}
