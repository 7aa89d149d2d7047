import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { Dataset } from '../../catalog/catalog.js';
import { totalOfShortPage, type Db, type DbRow, type ShortPage, type Tx } from '../db.js';
import { ROW_JSON_COLUMN, rowJson } from '../../model/row-json.js';
import { SQLITE, compile, q, upsertConflictClause, upsertWriteColumns, type Sql } from '../sql.js';
import { revisionTableName } from '../revision-schema.js';
import { REV_BATCH, REV_FROM, REV_OP, REV_TO } from '../../model/revisions.js';
import { keyIndexOrder } from '../schema.js';
import { revisionColumns } from '../revisions.js';
import { now, runSync, type Step } from '../step.js';
import { StoreUnavailableError, type WriteBatch } from '../store.js';
import { GATE_HELD, ReadGate } from './read-gate.js';
import { openDatabase } from './open-database.js';
import type { Row, Value } from '../../model/values.js';

/** Rows per step when filling the row JSON of an old table (migrate). */
const FILL_CHUNK = 5000;

/**
 * Rows per upsert statement: 64 × (a dataset's fields + 4) stays far below SQLite's 32,766
 * parameters (the widest dataset has 22 fields).
 */
const UPSERT_ROWS = 64;

/** SQLite's order of two key values of one type (BINARY collation on ASCII codes and dates). */
const compareValues = (a: Value | undefined, b: Value | undefined): number =>
  a === b ? 0 : a === null || a === undefined ? -1 : b === null || b === undefined ? 1 : a < b ? -1 : 1;

/** A batch's rows in its dataset's key index order (its descending columns descending). */
function keyOrderRows(d: Dataset, batch: WriteBatch): Row[] {
  const keys = keyIndexOrder(d).map((k) => ({ name: k.name, sign: k.desc ? -1 : 1 }));
  const order = (a: Row, b: Row): number => {
    for (const k of keys) {
      const c = compareValues(a[k.name], b[k.name]);
      if (c !== 0) return c * k.sign;
    }
    return 0;
  };
  return [...batch.rows].sort(order);
}

interface RowsStatement {
  stmt: Database.Statement;
  row: (r: Value[]) => DbRow;
}

/** SQLite error codes that mean "try again later" rather than a bug: answered with 503. */
const UNAVAILABLE = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_READONLY',
]);

const isBusy = (err: unknown): boolean => {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
};

const gateHeld = (): Error => Object.assign(new Error('a change is being made visible'), { code: GATE_HELD });

const pause = new Int32Array(new SharedArrayBuffer(4));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function translate(err: unknown): never {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && [...UNAVAILABLE].some((c) => code.startsWith(c))) {
    throw new StoreUnavailableError(`database unavailable (${code})`, { condition: code });
  }
  throw err;
}

/**
 * Which connection copies the WAL back into the database file (a checkpoint: up to ~40 MB of
 * pages and an fsync, run synchronously by the connection that does it):
 * - 'own' (default): after this connection's commits, once the WAL passes CHECKPOINT_PAGES;
 * - 'none': never; the request thread when ingest threads write, so no request waits behind a
 *   checkpoint its own small write (usage counts, keys) happened to trigger;
 * - 'all': after this connection's commits and, every CHECKPOINT_EVERY_MS, for what the others
 *   wrote (the ingest threads: the request thread's writes are checkpointed even when no batch
 *   comes).
 */
export type SqliteCheckpoints = 'own' | 'none' | 'all';

/** ~40 MB of WAL (see open()). */
const CHECKPOINT_PAGES = 10_000;
const CHECKPOINT_EVERY_MS = 30_000;

export interface SqliteOptions {
  /** File path, or ':memory:'. */
  file: string;
  /** ms a writer waits for another connection's lock before answering 503. */
  busyTimeoutMs?: number;
  checkpoints?: SqliteCheckpoints;
  /** 'all': ms between checkpoints of the others' writes (CHECKPOINT_EVERY_MS). */
  checkpointEveryMs?: number;
  /** A reader process's connection (reader-pool.ts): it may not write. */
  readOnly?: boolean;
  /**
   * Whether reads pass the read gate and publishing transactions hold it (read-gate.ts):
   * default on for a file, off for ':memory:' (one connection, nothing to wait for).
   */
  readGate?: boolean;
}

/**
 * The embedded executor: better-sqlite3, WAL with synchronous=FULL so an acknowledged batch
 * survives a crash of the process or the machine. better-sqlite3 is synchronous, so a
 * transaction's steps run without yielding and cannot interleave with other requests of this
 * process; BEGIN IMMEDIATE serialises writers across processes sharing the file.
 */
export class SqliteDb implements Db {
  readonly backend = 'sqlite' as const;
  readonly dialect = SQLITE;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly reads = new Map<string, RowsStatement>();
  private readonly upserts = new Map<string, Database.Statement>();
  /** Whether the replaced-version triggers copy (writeRows only; other updates copy explicitly). */
  private keepReplaced = false;
  private readonly tx: Tx;
  private readonly busyTimeoutMs: number;
  private checkpointTimer: NodeJS.Timeout | null = null;
  private readonly gate: ReadGate | null;
  private readonly snapshotStatements: {
    begin: Database.Statement;
    look: Database.Statement;
    end: Database.Statement;
  };

  constructor(opts: SqliteOptions) {
    if (opts.file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(opts.file)), { recursive: true });
    // SQLite's own busy wait would block the thread: locks are waited for in busyRetry instead.
    const checkpoints = opts.checkpoints ?? 'own';
    this.busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
    this.db = SqliteDb.open(opts.file, 0, checkpoints === 'none' ? 0 : CHECKPOINT_PAGES, this.busyTimeoutMs);
    this.db.function('mds_keep_replaced', { deterministic: false }, () => (this.keepReplaced ? 1 : 0));
    if (opts.readOnly === true) this.db.pragma('query_only = ON');
    this.gate = (opts.readGate ?? opts.file !== ':memory:') ? new ReadGate(opts.file) : null;
    this.snapshotStatements = {
      begin: this.db.prepare('BEGIN'),
      // Any page read starts the WAL read transaction: its snapshot is fixed from here on.
      look: this.db.prepare('SELECT 1 FROM sqlite_schema LIMIT 1'),
      end: this.db.prepare('COMMIT'),
    };
    this.tx = this.transactionSteps();
    if (checkpoints === 'all') {
      const every = opts.checkpointEveryMs ?? CHECKPOINT_EVERY_MS;
      this.checkpointTimer = setInterval(() => this.checkpoint(), every);
      this.checkpointTimer.unref();
    }
  }

  /** Copies what it can of the WAL into the file without waiting for anyone (PASSIVE). */
  checkpoint(): void {
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy (another connection checkpoints) or closed: the next one catches up.
    }
  }

  private static open(
    file: string,
    busyTimeoutMs: number,
    autoCheckpoint: number,
    openWaitMs: number,
  ): Database.Database {
    const db = openDatabase(file);
    db.pragma(`busy_timeout = ${Math.floor(busyTimeoutMs)}`);
    // The first read of the file. The last connection of another process, as it closes, holds the
    // file exclusively while it cleans up its WAL, and SQLite answers SQLITE_BUSY for that without
    // asking its busy handler (sqlite.org/wal.html, "Sometimes queries return SQLITE_BUSY in WAL
    // mode"): a server restarted at once after another stopped failed to start. Milliseconds:
    // waited for here, at open only, for up to `openWaitMs`.
    const deadline = Date.now() + openWaitMs;
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      try {
        db.pragma('journal_mode = WAL');
        break;
      } catch (err) {
        if (!isBusy(err) || Date.now() >= deadline) {
          db.close();
          throw err;
        }
        Atomics.wait(pause, 0, 0, delay);
      }
    }
    db.pragma('synchronous = FULL');
    // Checkpoint every ~40 MB of WAL (CHECKPOINT_PAGES) instead of SQLite's 4 MB: a 10,000-row batch writes more
    // than 4 MB (rows, their JSON, three indexes), so the default checkpointed after every
    // batch; less often, pages rewritten by consecutive batches are copied to the file once.
    db.pragma(`wal_autocheckpoint = ${autoCheckpoint}`);
    db.pragma('cache_size = -32000');
    // JavaScript's toLowerCase matches PostgreSQL's lower() on non-ASCII text, unlike SQLite's.
    db.function('mds_lower', { deterministic: true }, (s: unknown) =>
      typeof s === 'string' ? s.toLowerCase() : null,
    );
    return db;
  }

  /** Exposed for fault-injection tests (e.g. max_page_count); not part of Db. */
  get raw(): Database.Database {
    return this.db;
  }

  private stmt(text: string): Database.Statement {
    let s = this.statements.get(text);
    if (!s) {
      s = this.db.prepare(text);
      this.statements.set(text, s);
    }
    return s;
  }

  /**
   * A read statement in raw (array) mode with a row builder for its columns: one object literal
   * per row costs far less than the driver setting each property (bench: about -35 % per page).
   */
  private read(text: string): RowsStatement {
    let p = this.reads.get(text);
    if (!p) {
      const stmt = this.db.prepare(text).raw(true);
      // Column names are the catalog's api names (checked against /^[a-z][a-z0-9_]*$/ at boot)
      // or this folder's own.
      const props = stmt.columns().map((c, i) => `${JSON.stringify(c.name)}: r[${i}]`);
      const row = new Function('r', `return { ${props.join(', ')} };`) as RowsStatement['row'];
      p = { stmt, row };
      this.reads.set(text, p);
    }
    return p;
  }

  /**
   * `fn`, tried again while another connection holds the write lock, for up to busyTimeoutMs,
   * waiting between tries on a timer: a lock wait never blocks the thread (the request thread's
   * queries and /health go on), then 503.
   */
  private async busyRetry<T>(fn: () => T): Promise<T> {
    const deadline = Date.now() + this.busyTimeoutMs;
    for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
      try {
        return fn();
      } catch (err) {
        const left = deadline - Date.now();
        if (!isBusy(err) || left <= 0) return translate(err);
        // The gate is held for a COMMIT (milliseconds): looked at again every millisecond.
        const gate = (err as { code?: unknown }).code === GATE_HELD;
        await sleep(Math.min(gate ? 1 : delay, left));
      }
    }
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      return translate(err);
    }
  }

  /**
   * The one way a read outside a write transaction begins, on the request thread and in the
   * reader processes alike: its snapshot is taken past the read gate (read-gate.ts), then `fn`
   * runs in it with the gate let go (a long statement never holds a writer back). `waitMs`: how
   * long to wait for the gate here, synchronously (a reader process); 0: throw GATE_HELD at
   * once for busyRetry to wait on a timer (the request thread). `statements`: how many `fn`
   * runs (more than one share a snapshot, gate or not).
   */
  private snapshot<T>(fn: () => T, waitMs = 0, statements = 1): T {
    if (this.db.inTransaction) return fn();
    const gate = this.gate;
    // Without a gate one statement is its own snapshot.
    if (!gate && statements === 1) return fn();
    const until = Date.now() + waitMs;
    while (gate && !gate.tryEnter()) {
      if (Date.now() >= until) throw gateHeld();
      Atomics.wait(pause, 0, 0, 0.5);
    }
    const st = this.snapshotStatements;
    try {
      st.begin.run();
      st.look.get();
    } catch (err) {
      if (this.db.inTransaction) st.end.run();
      throw err;
    } finally {
      gate?.leave();
    }
    try {
      return fn();
    } finally {
      if (this.db.inTransaction) st.end.run();
    }
  }

  private rowsNow(s: Sql): DbRow[] {
    const { sql, params } = compile(s, SQLITE);
    const r = this.read(sql);
    return (r.stmt.all(...params) as Value[][]).map(r.row);
  }

  private runNow(s: Sql): number {
    const { sql, params } = compile(s, SQLITE);
    return this.stmt(sql).run(...params).changes;
  }

  async rows(s: Sql): Promise<DbRow[]> {
    return this.busyRetry(() => this.snapshot(() => this.rowsNow(s)));
  }

  async arrays(s: Sql): Promise<unknown[][]> {
    const { sql, params } = compile(s, SQLITE);
    return this.busyRetry(() => this.snapshot(() => this.read(sql).stmt.all(...params) as unknown[][]));
  }

  async values(s: Sql): Promise<unknown[]> {
    const { sql, params } = compile(s, SQLITE);
    return this.busyRetry(() =>
      this.snapshot(() =>
        this.stmt(sql)
          .pluck()
          .all(...params),
      ),
    );
  }

  /**
   * A read statement compiled elsewhere (the request thread: reader-pool.ts), run at once:
   * a reader connection never waits for a lock (WAL).
   */
  readCompiled(mode: 'rows' | 'arrays' | 'values', text: string, params: unknown[]): unknown {
    return this.guard(() => this.snapshot(() => this.compiledNow(mode, text, params), this.busyTimeoutMs));
  }

  private compiledNow(mode: 'rows' | 'arrays' | 'values', text: string, params: unknown[]): unknown {
    if (mode === 'values')
      return this.stmt(text)
        .pluck()
        .all(...params);
    const r = this.read(text);
    const rows = r.stmt.all(...params) as Value[][];
    return mode === 'arrays' ? rows : rows.map(r.row);
  }

  /**
   * A page compiled elsewhere and its total, in one read transaction: the count sees the rows
   * the page saw (reader-pool.ts sends both in one message).
   */
  pageCompiled(
    page: { sql: string; params: unknown[] },
    count: { sql: string; params: unknown[]; short: ShortPage },
  ): { rows: DbRow[]; total: number } {
    return this.guard(() => this.pageNow(page, count, this.busyTimeoutMs));
  }

  /** The page and its total in one snapshot; `waitMs` for the read gate as in snapshot(). */
  private pageNow(
    page: { sql: string; params: unknown[] },
    count: { sql: string; params: unknown[]; short: ShortPage },
    waitMs: number,
  ): { rows: DbRow[]; total: number } {
    return this.snapshot(
      () => {
        const rows = this.compiledNow('rows', page.sql, page.params) as DbRow[];
        const total =
          totalOfShortPage(rows.length, count.short) ??
          Number((this.compiledNow('values', count.sql, count.params) as unknown[])[0] ?? 0);
        return { rows, total };
      },
      waitMs,
      2,
    );
  }

  /**
   * A page and its total in one read transaction on this connection (bounded reads:
   * dataset-store.ts); the request thread waits for the read gate on a timer, never in place.
   */
  async pageAndCount(page: Sql, count: Sql, short: ShortPage): Promise<{ rows: DbRow[]; total: number }> {
    const p = compile(page, SQLITE);
    const c = { ...compile(count, SQLITE), short };
    return this.busyRetry(() => this.pageNow(p, c, 0));
  }

  async run(s: Sql): Promise<number> {
    return this.busyRetry(() => this.runNow(s));
  }

  async transaction<T>(body: (tx: Tx) => Step<T>): Promise<T> {
    // A fresh body per try: BEGIN IMMEDIATE fails at once while another connection writes.
    // The gate, if the body took it (holdReads), is let go once the transaction has ended.
    return this.busyRetry(() => {
      try {
        return this.db.transaction(() => runSync(body(this.tx))).immediate();
      } finally {
        this.gate?.release();
      }
    });
  }

  private transactionSteps(): Tx {
    return {
      dialect: SQLITE,
      rows: (s) => now(this.rowsNow(s)),
      run: (s) => now(this.runNow(s)),
      exec: (statements) => now(statements.forEach((s) => this.db.exec(s))),
      // BEGIN IMMEDIATE: no other writer runs until this transaction ends.
      lockBatch: () => now(true),
      lockMigration: () => now(undefined),
      // Reads held back until the transaction ends (read-gate.ts).
      holdReads: () => now(void this.gate?.hold()),
      writeRows: (batch, at) => now(this.writeRows(batch, at)),
      batchKeys: (batch) => now(this.batchKeys(batch)),
      refillRowJson: (d) => now(this.refillRowJson(d)),
    };
  }

  /**
   * The upserts of a dataset's rows, one statement of `rows` rows per count used, and (once per
   * connection) the temporary trigger that copies the version a row's update replaces into the
   * revision table, closed at the new version's instant: SQLite's RETURNING only gives the new
   * values, and a probe before every upsert would cost every new row. Armed only while
   * writeRows runs (mds_keep_replaced).
   */
  private upsertStatement(d: Dataset, rows: number): Database.Statement {
    const name = `${d.name}/${rows}`;
    let s = this.upserts.get(name);
    if (!s) {
      const rev = revisionColumns(d).map(q);
      const stamp = [REV_OP, REV_BATCH, REV_FROM].map(q);
      this.db.exec(
        `CREATE TEMP TRIGGER IF NOT EXISTS ${q(`mds_replaced_${d.name}`)} AFTER UPDATE OF ${q(REV_FROM)} ` +
          `ON main.${q(d.name)} WHEN mds_keep_replaced() BEGIN ` +
          `INSERT INTO main.${q(revisionTableName(d))} (${[...rev, ...stamp, q(REV_TO)].join(', ')}) ` +
          `VALUES (${[...rev, ...stamp].map((c) => `OLD.${c}`).join(', ')}, NEW.${q(REV_FROM)}); END`,
      );
      const cols = upsertWriteColumns(d);
      // The op is 'insert' as written; the conflict clause makes it 'update'.
      const one = `(${cols.map((c) => (c === REV_OP ? `'insert'` : '?')).join(', ')})`;
      s = this.db.prepare(
        `INSERT INTO ${q(d.name)} AS t (${cols.map(q).join(', ')}) VALUES ${new Array<string>(rows).fill(one).join(', ')} ` +
          upsertConflictClause(d, SQLITE, 't'),
      );
      this.upserts.set(name, s);
    }
    return s;
  }

  /**
   * The batch's rows upserted in the key index's order (its pages filled in order rather than
   * split half-empty, and each touched once while in cache), UPSERT_ROWS to a statement (one
   * statement's fixed cost per row was a tenth of a row's write). Keys are distinct within a
   * batch (validation), so the order does not change what is written.
   */
  private writeRows(batch: WriteBatch, at: string): number {
    const d = batch.dataset;
    const cols = d.fields.map((f) => f.name);
    const json = rowJson(d);
    const n = cols.length;
    // upsertWriteColumns' order without the op (a literal): the fields, the row's JSON,
    // created_at, batch, instant.
    const width = n + 4;
    let written = 0;
    this.keepReplaced = true;
    try {
      const rows = keyOrderRows(d, batch);
      for (let start = 0; start < rows.length; start += UPSERT_ROWS) {
        const count = Math.min(UPSERT_ROWS, rows.length - start);
        const values: Value[] = new Array<Value>(count * width);
        for (let k = 0; k < count; k++) {
          const row = rows[start + k] as Record<string, Value>;
          const o = k * width;
          for (let c = 0; c < n; c++) values[o + c] = row[cols[c] as string] ?? null;
          values[o + n] = json(row);
          values[o + n + 1] = at;
          values[o + n + 2] = batch.batchId;
          values[o + n + 3] = at;
        }
        written += this.upsertStatement(d, count).run(values).changes;
      }
    } finally {
      this.keepReplaced = false;
    }
    return written;
  }

  /** The batch's keys in a temporary table of this connection, indexed for the prune's lookups. */
  private batchKeys(batch: WriteBatch): string {
    const d = batch.dataset;
    const table = `temp.${q(`mds_prune_${d.name}`)}`;
    const keys = d.key.map((k) => k.name);
    this.db.exec(
      `CREATE TEMP TABLE IF NOT EXISTS ${q(`mds_prune_${d.name}`)} (` +
        `${d.key.map((k) => `${q(k.name)} ${SQLITE.columnType(k.type)}`).join(', ')}, PRIMARY KEY (${keys.map(q).join(', ')}))`,
    );
    this.stmt(`DELETE FROM ${table}`).run();
    const insert = this.stmt(
      `INSERT INTO ${table} (${keys.map(q).join(', ')}) VALUES (${keys.map(() => '?').join(', ')})`,
    );
    for (const r of batch.rows) insert.run(keys.map((k) => r[k] ?? null));
    return table;
  }

  /** Every row's JSON rebuilt (inside migrate's transaction). */
  private refillRowJson(d: Dataset): void {
    const json = rowJson(d);
    const cols = d.fields.map((f) => q(f.name)).join(', ');
    // In rowid order, FILL_CHUNK rows at a time: bounded memory whatever the table's size.
    const read = this.db.prepare(
      `SELECT rowid AS _rowid, ${cols} FROM ${q(d.name)} WHERE rowid > ? ORDER BY rowid LIMIT ${FILL_CHUNK}`,
    );
    const write = this.db.prepare(`UPDATE ${q(d.name)} SET ${q(ROW_JSON_COLUMN)} = ? WHERE rowid = ?`);
    for (let after = 0; ;) {
      const rows = read.all(after) as DbRow[];
      for (const r of rows) write.run(json(r as Row), r._rowid as number);
      const last = rows[rows.length - 1];
      if (rows.length < FILL_CHUNK || !last) return;
      after = last._rowid as number;
    }
  }

  /** Writers are serialised by BEGIN IMMEDIATE: a second writer of an id never gets this far. */
  isBatchIdTaken(): boolean {
    return false;
  }

  async ping(): Promise<void> {
    this.guard(() => this.stmt('SELECT 1').get());
  }

  async close(): Promise<void> {
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    this.gate?.close();
    if (this.db.open) this.db.close();
  }
}
