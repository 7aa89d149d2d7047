import type { Dataset } from '../catalog/catalog.js';
import type { ValueColumns } from '../model/value-columns.js';
import type { Dialect, Sql } from './sql.js';
import type { Step } from './step.js';
import type { WriteBatch } from './store.js';

/**
 * The per-backend executor that the store parts (dataset-store.ts, batch-store.ts, key-store.ts,
 * migrations.ts) are written against: it runs statements built once by sql.ts and compiled with
 * its dialect, and carries the few operations that are a backend's own by nature (bulk row
 * writes, batch locks). Implementations: sqlite/sqlite-db.ts, postgres/postgres-db.ts.
 */

export type DbRow = Record<string, unknown>;

export interface Db {
  readonly backend: 'sqlite' | 'postgres';
  readonly dialect: Dialect;
  /**
   * Rows as objects keyed by column name. `prepared`: a read statement of few shapes, prepared
   * once per connection (PostgreSQL; SQLite prepares every statement once anyway).
   */
  rows(s: Sql, opts?: { prepared?: boolean }): Promise<DbRow[]>;
  /**
   * Rows as arrays of their column values in the statement's order: no object per row (the
   * columnar exports copy the values straight into typed columns).
   */
  arrays(s: Sql, opts?: { prepared?: boolean }): Promise<unknown[][]>;
  /** The first column of each row. */
  values(s: Sql, opts?: { prepared?: boolean }): Promise<unknown[]>;
  /** Runs a statement; returns the number of rows it changed. */
  run(s: Sql): Promise<number>;
  /**
   * `body` in one write transaction, all or nothing. SQLite: BEGIN IMMEDIATE, run without
   * yielding. PostgreSQL: one connection, retried from the start (a fresh `body`) on deadlock
   * or serialization failure.
   */
  transaction<T>(body: (tx: Tx) => Step<T>): Promise<T>;
  /** The error a second writer of the same batch_id gets from mds_batches' primary key. */
  isBatchIdTaken(err: unknown): boolean;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * When a page's rows already tell its total (an offset page shorter than its limit ends the
 * result), so no count is run: `limit` and `offset` of an offset page, null for a keyset page.
 */
export type ShortPage = { limit: number; offset: number } | null;

/** The total a short offset page tells (see ShortPage), or null when it must be counted. */
export function totalOfShortPage(rows: number, short: ShortPage): number | null {
  if (short === null || rows >= short.limit || (rows === 0 && short.offset > 0)) return null;
  return short.offset + rows;
}

/** The read half of an executor: what the dataset store and key lookups read through. */
export type ReadDb = Pick<Db, 'backend' | 'dialect' | 'rows' | 'arrays' | 'values'> & {
  /**
   * A page and its total (`count`'s value unless the page tells it) in one request and one
   * snapshot, where that saves a round trip (SQLite's reader processes: one IPC message, not two).
   */
  pageAndCount?(page: Sql, count: Sql, short: ShortPage): Promise<{ rows: DbRow[]; total: number }>;
  /**
   * `arrays` column by column, made where the rows are read (SQLite's reader processes). Without
   * it (PostgreSQL: the rows are on the request thread already) the store turns `arrays` into columns.
   */
  columns?(s: Sql): Promise<ValueColumns>;
};

/** What a step can do inside `Db.transaction`. */
export interface Tx {
  readonly dialect: Dialect;
  rows(s: Sql): Step<DbRow[]>;
  run(s: Sql): Step<number>;
  /** Statements without parameters, in order (DDL). */
  exec(statements: readonly string[]): Step<void>;
  /**
   * Holds `batchId` until the transaction ends; false when another transaction holds it
   * (PostgreSQL advisory lock; SQLite's BEGIN IMMEDIATE already serialises writers: always true).
   */
  lockBatch(batchId: string): Step<boolean>;
  /** Serialises migrations across processes and lifts the statement timeout for index builds. */
  lockMigration(): Step<void>;
  /**
   * Just before a change's known instant is read (revisions.ts publish): holds new reads back
   * until this transaction has ended (SQLite: sqlite/read-gate.ts), so that a read either sees
   * the change or began before that instant: on return the clock has passed the instant the
   * gate was taken (nothing to do on PostgreSQL: no gate).
   */
  holdReads(): Step<void>;
  /**
   * Upserts the batch's rows (statement: sql.ts upsertWriteColumns / upsertConflictClause),
   * each stamped as a revision of the batch at `at` (revisions.ts); every stored version a row
   * replaces is first copied into the revision table, closed at `at` (revisions.ts
   * replacedSql). Returns how many rows were inserted or changed. SQLite: one prepared upsert
   * per row, the replaced version copied by a temporary trigger armed only here; PostgreSQL:
   * binary COPY into a staging table, the replaced versions copied by one join, then one
   * set-based upsert.
   */
  writeRows(batch: WriteBatch, at: string): Step<number>;
  /** Makes the batch's keys readable as a table for `pruneSql`; returns its name. */
  batchKeys(batch: WriteBatch): Step<string>;
  /** Rebuilds every row's JSON (row-json.ts) from its columns, in bounded chunks. */
  refillRowJson(d: Dataset): Step<void>;
}
