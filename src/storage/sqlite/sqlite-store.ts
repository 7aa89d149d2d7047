import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Catalog, Dataset } from '../../catalog/catalog.js';
import type {
  ApiKeyRecord,
  ApplyResult,
  BatchListFilter,
  BatchRecord,
  DatasetCoverage,
  KeyPatch,
  QueryPlan,
  QueryResult,
  QueryJsonResult,
  Row,
  Store,
  Value,
  WriteBatch,
  WriteOutcome,
} from '../store.js';
import { StoreUnavailableError } from '../store.js';
import { catalogTables } from '../schema.js';
import {
  SQLITE,
  countStatement,
  createTableStatements,
  q,
  selectStatement,
  upsertColumns,
  upsertConflictClause,
} from '../sql.js';
import { BATCH_COLUMNS, KEY_COLUMNS, internalTableStatements } from '../internal-tables.js';
import { batchFromRow, batchToParams, keyFromRow, keyString } from '../row-mapping.js';
import { ROW_JSON_COLUMN, rowJson } from '../row-json.js';

type Params = Value[];
type DbRow = Record<string, unknown>;

const STREAM_CHUNK = 1000;
/** Rows per step when filling the row JSON of an old table (migrate). */
const FILL_CHUNK = 5000;

interface PageStatement {
  stmt: Database.Statement;
  row: (r: Value[]) => Record<string, Value>;
}

/** SQLite error codes that mean "try again later" rather than a bug: answered with 503. */
const UNAVAILABLE = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_READONLY',
]);

function translate(err: unknown): never {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && [...UNAVAILABLE].some((c) => code.startsWith(c))) {
    throw new StoreUnavailableError(`database unavailable (${code})`);
  }
  throw err;
}

export interface SqliteOptions {
  /** File path, or ':memory:'. */
  file: string;
  /** ms a writer waits for another process's lock before answering 503. */
  busyTimeoutMs?: number;
}

/**
 * The embedded store: better-sqlite3, WAL with synchronous=FULL so an acknowledged batch
 * survives a crash of the process or the machine. better-sqlite3 is synchronous, so a batch's
 * transaction runs without yielding and cannot interleave with other requests of this
 * process; BEGIN IMMEDIATE serialises writers across processes sharing the file.
 */
export class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly upserts = new Map<string, Database.Statement>();
  private readonly pages = new Map<string, PageStatement>();

  constructor(
    private readonly catalog: Catalog,
    private readonly opts: SqliteOptions,
  ) {
    if (opts.file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(opts.file)), { recursive: true });
    this.db = SqliteStore.open(opts.file, opts.busyTimeoutMs ?? 5000, false);
  }

  private static open(file: string, busyTimeoutMs: number, readonly: boolean): Database.Database {
    const db = new Database(file, { readonly, fileMustExist: readonly });
    db.pragma(`busy_timeout = ${Math.floor(busyTimeoutMs)}`);
    if (!readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      // Checkpoint every ~40 MB of WAL instead of SQLite's 4 MB: a 10,000-row batch writes more
      // than 4 MB (rows, their JSON, three indexes), so the default checkpointed after every
      // batch; less often, pages rewritten by consecutive batches are copied to the file once.
      db.pragma('wal_autocheckpoint = 10000');
    }
    db.pragma('cache_size = -32000');
    // JavaScript's toLowerCase matches PostgreSQL's lower() on non-ASCII text, unlike SQLite's.
    db.function('mds_lower', { deterministic: true }, (s: unknown) =>
      typeof s === 'string' ? s.toLowerCase() : null,
    );
    return db;
  }

  /** Exposed for fault-injection tests (e.g. max_page_count); not part of Store. */
  get raw(): Database.Database {
    return this.db;
  }

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  private run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      return translate(err);
    }
  }

  async migrate(): Promise<void> {
    this.run(() => {
      this.db.transaction(() => {
        for (const s of internalTableStatements(SQLITE)) this.db.exec(s);
        for (const t of catalogTables(this.catalog)) {
          const [create, ...indexes] = createTableStatements(t, SQLITE);
          this.db.exec(create as string);
          // Columns added to the catalog after the table was created.
          const have = new Set(
            (this.db.prepare(`PRAGMA table_info(${q(t.name)})`).all() as { name: string }[]).map(
              (c) => c.name,
            ),
          );
          for (const c of t.columns) {
            if (!have.has(c.name)) {
              this.db.exec(`ALTER TABLE ${q(t.name)} ADD COLUMN ${q(c.name)} ${SQLITE.columnType(c.type)}`);
            }
          }
          const d = this.catalog.byName.get(t.name);
          if (d && !have.has(ROW_JSON_COLUMN)) this.fillRowJson(d);
          for (const i of indexes) this.db.exec(i);
        }
      })();
    });
  }

  /** Rows stored before the JSON column existed get theirs (once, inside migrate's transaction). */
  private fillRowJson(d: Dataset): void {
    const json = rowJson(d);
    const cols = d.fields.map((f) => q(f.name)).join(', ');
    // In rowid order, FILL_CHUNK rows at a time: bounded memory whatever the table's size.
    const read = this.db.prepare(
      `SELECT rowid AS _rowid, ${cols} FROM ${q(d.name)} WHERE rowid > ? AND ${q(ROW_JSON_COLUMN)} IS NULL ORDER BY rowid LIMIT ${FILL_CHUNK}`,
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

  async ping(): Promise<void> {
    this.run(() => this.stmt('SELECT 1').get());
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  async getBatch(batchId: string): Promise<BatchRecord | null> {
    const r = this.run(() => this.stmt('SELECT * FROM mds_batches WHERE batch_id = ?').get(batchId)) as
      DbRow | undefined;
    return r ? batchFromRow(r) : null;
  }

  private upsertStatement(d: Dataset): Database.Statement {
    let s = this.upserts.get(d.name);
    if (!s) {
      const cols = upsertColumns(d);
      s = this.db.prepare(
        `INSERT INTO ${q(d.name)} AS t (${cols.map(q).join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) ` +
          upsertConflictClause(d, SQLITE, 't', '?'),
      );
      this.upserts.set(d.name, s);
    }
    return s;
  }

  private prune(batch: WriteBatch): number {
    const { dataset: d, prune } = batch;
    if (!prune) return 0;
    const where: string[] = [];
    const params: Params = [];
    if (d.partition) {
      where.push(`${q(d.partition.name)} = ?`);
      params.push(prune.partitionValue);
    }
    if (d.sourceField) {
      where.push(`${q(d.sourceField.name)} = ?`);
      params.push(prune.source);
    }
    const keyCols = d.key.map((k) => k.name);
    const keep = new Set(batch.rows.map((r) => keyString(keyCols.map((c) => r[c]))));
    const existing = this.stmt(
      `SELECT rowid AS _rowid, ${keyCols.map(q).join(', ')} FROM ${q(d.name)}` +
        (where.length ? ` WHERE ${where.join(' AND ')}` : ''),
    ).all(...params) as DbRow[];
    const del = this.stmt(`DELETE FROM ${q(d.name)} WHERE rowid = ?`);
    let pruned = 0;
    for (const r of existing) {
      if (!keep.has(keyString(keyCols.map((c) => r[c])))) pruned += del.run(r._rowid as number).changes;
    }
    return pruned;
  }

  private insertBatchRecord(record: BatchRecord): void {
    this.stmt(
      `INSERT INTO mds_batches (${BATCH_COLUMNS.join(', ')}) VALUES (${BATCH_COLUMNS.map(() => '?').join(', ')})`,
    ).run(...batchToParams(record));
  }

  /** Registry check inside the write transaction: only a rejected batch's id may be reused. */
  private claim(batchId: string): BatchRecord | null {
    const existing = this.stmt('SELECT * FROM mds_batches WHERE batch_id = ?').get(batchId) as
      DbRow | undefined;
    if (!existing) return null;
    const rec = batchFromRow(existing);
    if (rec.status !== 'rejected') return rec;
    this.stmt('DELETE FROM mds_batches WHERE batch_id = ?').run(batchId);
    return null;
  }

  private bumpVersion(dataset: string, batchId: string, at: string): void {
    this.stmt(
      `INSERT INTO mds_dataset_state (dataset, version, last_batch_id, last_batch_at) VALUES (?, 1, ?, ?)
       ON CONFLICT (dataset) DO UPDATE SET version = mds_dataset_state.version + 1,
       last_batch_id = excluded.last_batch_id, last_batch_at = excluded.last_batch_at`,
    ).run(dataset, batchId, at);
  }

  async applyBatch(batch: WriteBatch, finish: (o: WriteOutcome) => BatchRecord): Promise<ApplyResult> {
    const d = batch.dataset;
    const cols = d.fields.map((f) => f.name);
    const json = rowJson(d);
    const tx = this.db.transaction((): ApplyResult => {
      const existing = this.claim(batch.batchId);
      if (existing) return { kind: 'exists', record: existing };
      const upsert = this.upsertStatement(d);
      let written = 0;
      // upsertColumns' order: the fields, the row's JSON, created_at; then "updated_at given".
      const values: Value[] = new Array<Value>(cols.length + 3);
      for (let i = 0; i < batch.rows.length; i++) {
        const row = batch.rows[i] as Record<string, Value>;
        for (let c = 0; c < cols.length; c++) values[c] = row[cols[c] as string] ?? null;
        values[cols.length] = json(row);
        values[cols.length + 1] = batch.now;
        values[cols.length + 2] = batch.updatedAtGiven[i] ?? 0;
        written += upsert.run(values).changes;
      }
      const pruned = this.prune(batch);
      const record = finish({ written, unchanged: batch.rows.length - written, pruned });
      if (written + pruned > 0) this.bumpVersion(d.name, batch.batchId, record.processed_at);
      this.insertBatchRecord(record);
      return { kind: 'applied', record };
    });
    return this.run(() => tx.immediate());
  }

  async saveRejectedBatch(record: BatchRecord): Promise<ApplyResult> {
    const tx = this.db.transaction((): ApplyResult => {
      const existing = this.claim(record.batch_id);
      if (existing) return { kind: 'exists', record: existing };
      this.insertBatchRecord(record);
      return { kind: 'applied', record };
    });
    return this.run(() => tx.immediate());
  }

  async purgeBatches(before: string): Promise<number> {
    return this.run(() => this.stmt('DELETE FROM mds_batches WHERE processed_at < ?').run(before).changes);
  }

  async listBatches(filter: BatchListFilter): Promise<BatchRecord[]> {
    const where: string[] = [];
    const params: Params = [];
    if (filter.dataset) {
      where.push('dataset = ?');
      params.push(filter.dataset);
    }
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    const sql =
      `SELECT * FROM mds_batches${where.length ? ` WHERE ${where.join(' AND ')}` : ''}` +
      ` ORDER BY processed_at DESC, batch_id ASC LIMIT ?`;
    const rows = this.run(() => this.stmt(sql).all(...params, filter.limit)) as DbRow[];
    return rows.map(batchFromRow);
  }

  /**
   * A page statement in raw (array) mode with a row builder for its columns: one object literal
   * per row costs far less than the driver setting each property (bench: about -35 % per page).
   */
  private pageStatement(sql: string): PageStatement {
    let p = this.pages.get(sql);
    if (!p) {
      const stmt = this.db.prepare(sql).raw(true);
      // Column names are the catalog's api names (checked against /^[a-z][a-z0-9_]*$/ at boot).
      const props = stmt.columns().map((c, i) => `${JSON.stringify(c.name)}: r[${i}]`);
      const row = new Function('r', `return { ${props.join(', ')} };`) as PageStatement['row'];
      p = { stmt, row };
      this.pages.set(sql, p);
    }
    return p;
  }

  async query(plan: QueryPlan, withTotal: boolean): Promise<QueryResult> {
    return this.run(() => {
      const sel = selectStatement(plan, SQLITE);
      const page = this.pageStatement(sel.sql);
      const rows = (page.stmt.all(...sel.params) as Value[][]).map(page.row);
      return { rows, total: this.total(plan, rows.length, withTotal) };
    });
  }

  async queryJson(plan: QueryPlan, withTotal: boolean): Promise<QueryJsonResult> {
    return this.run(() => {
      const sel = selectStatement(plan, SQLITE, true, true);
      const rows = this.stmt(sel.sql)
        .pluck()
        .all(...sel.params) as (string | null)[];
      return { rows, total: this.total(plan, rows.length, withTotal) };
    });
  }

  /** The page's total: -1 when not wanted; a short offset page ends the result, so no count. */
  private total(plan: QueryPlan, pageRows: number, withTotal: boolean): number {
    if (!withTotal) return -1;
    if (plan.after === undefined && pageRows < plan.limit && (pageRows > 0 || plan.offset === 0)) {
      return plan.offset + pageRows;
    }
    const cnt = countStatement(plan, SQLITE);
    return this.stmt(cnt.sql)
      .pluck()
      .get(...cnt.params) as number;
  }

  async *stream(plan: QueryPlan): AsyncIterable<Record<string, Value>[]> {
    // A connection of its own: one consistent snapshot (WAL), and the main connection stays free
    // for other requests while the export yields between chunks.
    const reader =
      this.opts.file === ':memory:'
        ? this.db
        : SqliteStore.open(this.opts.file, this.opts.busyTimeoutMs ?? 5000, true);
    try {
      const sel = selectStatement(plan, SQLITE, false);
      const iter = reader.prepare(sel.sql).iterate(...sel.params) as IterableIterator<Record<string, Value>>;
      let chunk: Record<string, Value>[] = [];
      for (const row of iter) {
        chunk.push(row);
        if (chunk.length >= STREAM_CHUNK) {
          yield chunk;
          chunk = [];
        }
      }
      if (chunk.length) yield chunk;
    } finally {
      if (reader !== this.db) reader.close();
    }
  }

  async datasetVersion(dataset: string): Promise<number> {
    const v = this.run(() =>
      this.stmt('SELECT version FROM mds_dataset_state WHERE dataset = ?').pluck().get(dataset),
    ) as number | undefined;
    return v ?? 0;
  }

  async coverage(): Promise<DatasetCoverage[]> {
    return this.run(() =>
      this.catalog.datasets.map((d) => {
        const dateField = d.range ?? d.partition;
        const agg = this.stmt(
          dateField
            ? `SELECT count(*) AS n, min(${q(dateField.name)}) AS first, max(${q(dateField.name)}) AS last FROM ${q(d.name)}`
            : `SELECT count(*) AS n, NULL AS first, NULL AS last FROM ${q(d.name)}`,
        ).get() as { n: number; first: string | null; last: string | null };
        const state = this.stmt(
          'SELECT last_batch_id, last_batch_at FROM mds_dataset_state WHERE dataset = ?',
        ).get(d.name) as { last_batch_id: string | null; last_batch_at: string | null } | undefined;
        return {
          dataset: d.name,
          rows: agg.n,
          first_date: agg.first,
          last_date: agg.last,
          last_batch_id: state?.last_batch_id ?? null,
          last_batch_at: state?.last_batch_at ?? null,
        };
      }),
    );
  }

  async insertKey(key: ApiKeyRecord): Promise<void> {
    this.run(() =>
      this.stmt(
        `INSERT INTO mds_keys (${KEY_COLUMNS.join(', ')}) VALUES (${KEY_COLUMNS.map(() => '?').join(', ')})`,
      ).run(...KEY_COLUMNS.map((c) => key[c])),
    );
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    const rows = this.run(() => this.stmt('SELECT * FROM mds_keys ORDER BY created_at, id').all()) as DbRow[];
    return rows.map(keyFromRow);
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    const r = this.run(() => this.stmt('SELECT * FROM mds_keys WHERE id = ?').get(id)) as DbRow | undefined;
    return r ? keyFromRow(r) : null;
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    const r = this.run(() => this.stmt('SELECT * FROM mds_keys WHERE hash = ?').get(hash)) as
      DbRow | undefined;
    return r ? keyFromRow(r) : null;
  }

  async updateKey(id: string, patch: KeyPatch): Promise<ApiKeyRecord | null> {
    const sets: string[] = [];
    const params: Params = [];
    for (const k of ['name', 'rate_per_minute', 'daily_quota'] as const) {
      if (patch[k] !== undefined) {
        sets.push(`${k} = ?`);
        params.push(patch[k] ?? null);
      }
    }
    if (sets.length)
      this.run(() => this.stmt(`UPDATE mds_keys SET ${sets.join(', ')} WHERE id = ?`).run(...params, id));
    return this.getKey(id);
  }

  async revokeKey(id: string, at: string): Promise<ApiKeyRecord | null> {
    this.run(() =>
      this.stmt('UPDATE mds_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id),
    );
    return this.getKey(id);
  }

  async recordUsage(
    entries: readonly { keyId: string; hour: string; count: number; lastUsed: string }[],
  ): Promise<void> {
    if (entries.length === 0) return;
    const add = this.stmt(
      `INSERT INTO mds_key_usage (key_id, hour, count) VALUES (?, ?, ?)
       ON CONFLICT (key_id, hour) DO UPDATE SET count = mds_key_usage.count + excluded.count`,
    );
    const touch = this.stmt(
      'UPDATE mds_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
    );
    this.run(() =>
      this.db.transaction(() => {
        for (const e of entries) {
          add.run(e.keyId, e.hour, e.count);
          touch.run(e.lastUsed, e.keyId, e.lastUsed);
        }
      })(),
    );
  }

  async usage(since: string): Promise<{ key_id: string; hour: string; count: number }[]> {
    return this.run(
      () =>
        this.stmt('SELECT key_id, hour, count FROM mds_key_usage WHERE hour >= ? ORDER BY hour, key_id').all(
          since,
        ) as { key_id: string; hour: string; count: number }[],
    );
  }
}
