import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Catalog, Dataset } from '../../catalog/catalog.js';
import type {
  ApiKeyRecord,
  ApplyResult,
  BatchListFilter,
  BatchRecord,
  DatasetCoverage,
  KeyPatch,
  QueryJsonResult,
  QueryPlan,
  QueryResult,
  Row,
  Store,
  Value,
  WriteBatch,
  WriteOutcome,
} from '../store.js';
import { catalogTables } from '../schema.js';
import {
  POSTGRES,
  countStatement,
  createTableStatements,
  q,
  selectStatement,
  upsertColumns,
  upsertConflictClause,
} from '../sql.js';
import { BATCH_COLUMNS, KEY_COLUMNS, internalTableStatements } from '../internal-tables.js';
import { batchFromRow, batchToParams, keyFromRow } from '../row-mapping.js';
import { breaksConnection, isBatchIdTaken, isRetryable, translate } from './pg-errors.js';
import { binaryCopyChunks, stagingType } from './copy-binary.js';
import { ROW_JSON_COLUMN, rowJson } from '../row-json.js';

type DbRow = Record<string, unknown>;
type Client = pg.PoolClient;

const STREAM_CHUNK = 1000;
/** Rows per step when filling the row JSON of an old table (migrate). */
const FILL_CHUNK = 5000;
/** Advisory lock keys: one bigint for migrations; (namespace, hashtext(batch_id)) for batches. */
const MIGRATE_LOCK = '7169139001';
const BATCH_LOCK_SPACE = 7169139;
/** Attempts of a batch transaction that hit a deadlock or serialization failure. */
const TX_ATTEMPTS = 3;
/** Staging column for "the client sent updated_at"; `_` cannot start a catalog field name. */
const GIVEN = '_given';

const statementNames = new Map<string, string>();
/** A stable prepared-statement name for a statement's text. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `mds_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return name;
}

export interface PostgresOptions {
  connectionString: string;
  /** Connections per process (default 10). */
  max?: number;
  /** ms to wait for a connection (new or from the pool) before a 503 (default 5000). */
  connectionTimeoutMs?: number;
  /** Server-side limit of one statement, ms (default 30000). */
  statementTimeoutMs?: number;
}

// int8 (count(*), bigint columns) as a JS number: every stored integer was validated as a
// safe integer, and counts stay far below 2^53.
const parseInt8 = (s: string): number => Number(s);
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 && format !== 'binary'
      ? parseInt8
      : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * PostgreSQL store: a pg Pool, the same semantics as SqliteStore. A batch is one transaction:
 * advisory try-lock on its id (another holder → in_progress), registry check, COPY into a
 * temporary staging table, one set-based upsert per `given` value, prune, version bump, record.
 */
export class PostgresStore implements Store {
  readonly backend = 'postgres' as const;
  private readonly pool: pg.Pool;
  private closed = false;
  private readonly upserts = new Map<string, { stage: string; copy: string; insert: [string, string] }>();

  constructor(
    private readonly catalog: Catalog,
    opts: PostgresOptions,
  ) {
    this.pool = new pg.Pool({
      connectionString: opts.connectionString,
      max: opts.max ?? 10,
      connectionTimeoutMillis: opts.connectionTimeoutMs ?? 5000,
      idleTimeoutMillis: 30_000,
      statement_timeout: opts.statementTimeoutMs ?? 30_000,
      keepAlive: true,
      application_name: 'market-data-service',
      types,
    });
    // An idle connection dropped by the server (restart, pg_terminate_backend) is removed from
    // the pool by pg-pool; without a listener the 'error' event would crash the process.
    this.pool.on('error', () => {});
  }

  /** Pool counters, for tests and metrics. */
  get poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  private async sql(text: string, params: readonly Value[] = [], prepared = false): Promise<DbRow[]> {
    try {
      // Read statements are prepared once per connection under a name derived from their text
      // (their shapes are few: the catalog's filters and sorts), so PostgreSQL parses and plans
      // them once instead of on every request.
      const config = prepared ? { name: statementName(text), text, values: params as Value[] } : null;
      const res = config ? await this.pool.query(config) : await this.pool.query(text, params as Value[]);
      return res.rows as DbRow[];
    } catch (err) {
      return translate(err);
    }
  }

  /**
   * Runs `fn` on a connection of its own. A connection that failed at the protocol level is
   * destroyed on release, never handed out again; an 'error' event while it is checked out is
   * recorded instead of crashing the process.
   */
  private async withClient<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    let client: Client;
    try {
      client = await this.pool.connect();
    } catch (err) {
      return translate(err);
    }
    let broken: Error | undefined;
    const onError = (err: Error): void => {
      broken ??= err;
    };
    client.on('error', onError);
    try {
      return await fn(client);
    } catch (err) {
      if (breaksConnection(err)) broken ??= err as Error;
      return translate(err);
    } finally {
      client.off('error', onError);
      client.release(broken ?? false);
    }
  }

  /** BEGIN … COMMIT on `c`; ROLLBACK on error (a failed ROLLBACK marks the connection broken). */
  private async transaction<T>(c: Client, begin: string, fn: () => Promise<T>): Promise<T> {
    await c.query(begin);
    try {
      const out = await fn();
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch((rollbackErr: unknown) => {
        // The original error is what the caller must see; the connection is unusable now.
        throw breaksConnection(err) ? err : rollbackErr;
      });
      throw err;
    }
  }

  async migrate(): Promise<void> {
    await this.withClient((c) =>
      this.transaction(c, 'BEGIN', async () => {
        // Several instances may start at once: one migrates, the others wait, then find
        // everything in place (CREATE … IF NOT EXISTS is not safe against concurrent creators).
        await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK]);
        // An index built on a large existing table may take longer than statement_timeout.
        await c.query('SET LOCAL statement_timeout = 0');
        for (const s of internalTableStatements(POSTGRES)) await c.query(s);
        const tables = catalogTables(this.catalog);
        for (const t of tables) await c.query(createTableStatements(t, POSTGRES)[0] as string);
        const existing = await c.query(
          `SELECT table_name, column_name FROM information_schema.columns
           WHERE table_schema = current_schema()`,
        );
        const have = new Set(
          existing.rows.map((r: DbRow) => `${String(r.table_name)}.${String(r.column_name)}`),
        );
        for (const t of tables) {
          // Columns added to the catalog after the table was created.
          for (const col of t.columns) {
            if (!have.has(`${t.name}.${col.name}`)) {
              await c.query(
                `ALTER TABLE ${q(t.name)} ADD COLUMN ${q(col.name)} ${POSTGRES.columnType(col.type)}`,
              );
            }
          }
          const d = this.catalog.byName.get(t.name);
          if (d && !have.has(`${t.name}.${ROW_JSON_COLUMN}`)) await this.fillRowJson(c, d);
          for (const i of createTableStatements(t, POSTGRES).slice(1)) await c.query(i);
        }
      }),
    );
  }

  /** Rows stored before the JSON column existed get theirs (once, inside migrate's transaction). */
  private async fillRowJson(c: Client, d: Dataset): Promise<void> {
    const json = rowJson(d);
    // A cursor over the rows (its snapshot does not see the updates below), FILL_CHUNK rows
    // at a time, each chunk written by one UPDATE … FROM unnest: bounded memory, few round trips.
    await c.query(
      `DECLARE mds_fill NO SCROLL CURSOR FOR SELECT ctid AS _ctid, ${d.fields.map((f) => q(f.name)).join(', ')} ` +
        `FROM ${q(d.name)} WHERE ${q(ROW_JSON_COLUMN)} IS NULL`,
    );
    for (;;) {
      const r = await c.query(`FETCH FORWARD ${FILL_CHUNK} FROM mds_fill`);
      const rows = r.rows as DbRow[];
      if (rows.length > 0) {
        await c.query(
          `UPDATE ${q(d.name)} AS t SET ${q(ROW_JSON_COLUMN)} = v.j ` +
            `FROM unnest($1::tid[], $2::text[]) AS v(id, j) WHERE t.ctid = v.id`,
          [rows.map((x) => String(x._ctid)), rows.map((x) => json(x as Row))],
        );
      }
      if (rows.length < FILL_CHUNK) break;
    }
    await c.query('CLOSE mds_fill');
  }

  async ping(): Promise<void> {
    await this.sql('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  async getBatch(batchId: string): Promise<BatchRecord | null> {
    const [r] = await this.sql('SELECT * FROM mds_batches WHERE batch_id = $1', [batchId]);
    return r ? batchFromRow(r) : null;
  }

  private statementsFor(d: Dataset): { stage: string; copy: string; insert: [string, string] } {
    let s = this.upserts.get(d.name);
    if (!s) {
      const fields = d.fields.map((f) => f.name);
      const cols = upsertColumns(d);
      const keyOrder = d.key.map((k) => q(k.name)).join(', ');
      // Staging rows are written in key order so concurrent batches lock rows in one order.
      const insert = (given: boolean): string =>
        `INSERT INTO ${q(d.name)} AS t (${cols.map(q).join(', ')}) ` +
        `SELECT ${[...fields, ROW_JSON_COLUMN].map(q).join(', ')}, $1::text FROM mds_stage WHERE ${q(GIVEN)} = ${given} ` +
        `ORDER BY ${keyOrder} ` +
        upsertConflictClause(d, POSTGRES, 't', given ? 'TRUE' : 'FALSE');
      s = {
        // The staging rows are sorted by key (below): room to do that in memory, not on disk,
        // for a 10,000-row batch with its row JSON (PostgreSQL's default work_mem is 4 MB).
        stage:
          `SET LOCAL work_mem = '64MB'; CREATE TEMPORARY TABLE mds_stage (` +
          d.fields.map((f) => `${q(f.name)} ${stagingType(f.type)}`).join(', ') +
          `, ${q(ROW_JSON_COLUMN)} text, ${q(GIVEN)} boolean NOT NULL) ON COMMIT DROP`,
        copy: `COPY mds_stage (${[...fields, ROW_JSON_COLUMN, GIVEN].map(q).join(', ')}) FROM STDIN (FORMAT binary)`,
        insert: [insert(true), insert(false)],
      };
      this.upserts.set(d.name, s);
    }
    return s;
  }

  /** Registry check under the batch's lock: only a rejected batch's id may be reused. */
  private async claim(c: Client, batchId: string): Promise<ApplyResult | null> {
    const lock = await c.query('SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS ok', [
      BATCH_LOCK_SPACE,
      batchId,
    ]);
    if ((lock.rows[0] as DbRow | undefined)?.ok !== true) return { kind: 'in_progress' };
    const existing = await c.query('SELECT * FROM mds_batches WHERE batch_id = $1', [batchId]);
    const row = existing.rows[0] as DbRow | undefined;
    if (!row) return null;
    const rec = batchFromRow(row);
    if (rec.status !== 'rejected') return { kind: 'exists', record: rec };
    await c.query('DELETE FROM mds_batches WHERE batch_id = $1', [batchId]);
    return null;
  }

  private async insertBatchRecord(c: Client, record: BatchRecord): Promise<void> {
    await c.query(
      `INSERT INTO mds_batches (${BATCH_COLUMNS.join(', ')}) VALUES (${BATCH_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
      batchToParams(record),
    );
  }

  private async writeRows(c: Client, batch: WriteBatch): Promise<number> {
    const d = batch.dataset;
    const s = this.statementsFor(d);
    await c.query(s.stage);
    if (batch.rows.length > 0) {
      const chunks = binaryCopyChunks(
        batch.rows,
        d.fields.map((f) => f.name),
        d.fields.map((f) => f.type),
        batch.updatedAtGiven,
        rowJson(d),
      );
      await pipeline(Readable.from(chunks), c.query(copyFrom(s.copy)));
    }
    const givenCount = batch.updatedAtGiven.reduce((n, g) => n + (g ? 1 : 0), 0);
    let written = 0;
    if (givenCount > 0) written += (await c.query(s.insert[0], [batch.now])).rowCount ?? 0;
    if (givenCount < batch.rows.length) written += (await c.query(s.insert[1], [batch.now])).rowCount ?? 0;
    return written;
  }

  /** Full snapshot: delete the partition's rows whose key is not in the batch (the staging table). */
  private async prune(c: Client, batch: WriteBatch): Promise<number> {
    const { dataset: d, prune } = batch;
    if (!prune) return 0;
    const where: string[] = [];
    const params: Value[] = [];
    if (d.partition) {
      params.push(prune.partitionValue);
      where.push(`t.${q(d.partition.name)} = $${params.length}`);
    }
    if (d.sourceField) {
      params.push(prune.source);
      where.push(`t.${q(d.sourceField.name)} = $${params.length}`);
    }
    const same = d.key.map((k) => `s.${q(k.name)} = t.${q(k.name)}`).join(' AND ');
    where.push(`NOT EXISTS (SELECT 1 FROM mds_stage s WHERE ${same})`);
    // The rows just upserted are invisible to the table's statistics, so the planner expects one
    // and nests loops: a 50,000-row snapshot took > 30 s (statement timeout). A hash join: 80 ms.
    await c.query('SET LOCAL enable_nestloop = off');
    const r = await c.query(`DELETE FROM ${q(d.name)} AS t WHERE ${where.join(' AND ')}`, params);
    return r.rowCount ?? 0;
  }

  private async bumpVersion(c: Client, dataset: string, batchId: string, at: string): Promise<void> {
    await c.query(
      `INSERT INTO mds_dataset_state (dataset, version, last_batch_id, last_batch_at) VALUES ($1, 1, $2, $3)
       ON CONFLICT (dataset) DO UPDATE SET version = mds_dataset_state.version + 1,
       last_batch_id = excluded.last_batch_id, last_batch_at = excluded.last_batch_at`,
      [dataset, batchId, at],
    );
  }

  /**
   * One registry transaction, retried on deadlock / serialization failure. Should the batch id's
   * row appear anyway (an engine without advisory locks), the primary key refuses the second
   * writer and its whole transaction rolls back: exactly once either way.
   */
  private async registryTransaction(
    batchId: string,
    body: (c: Client) => Promise<ApplyResult>,
  ): Promise<ApplyResult> {
    return this.withClient(async (c) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.transaction(c, 'BEGIN', async () => (await this.claim(c, batchId)) ?? body(c));
        } catch (err) {
          if (isBatchIdTaken(err)) {
            const rec = await c.query('SELECT * FROM mds_batches WHERE batch_id = $1', [batchId]);
            const row = rec.rows[0] as DbRow | undefined;
            const prior = row ? batchFromRow(row) : null;
            return prior && prior.status !== 'rejected'
              ? { kind: 'exists', record: prior }
              : { kind: 'in_progress' };
          }
          if (!isRetryable(err) || attempt >= TX_ATTEMPTS) throw err;
        }
      }
    });
  }

  async applyBatch(batch: WriteBatch, finish: (o: WriteOutcome) => BatchRecord): Promise<ApplyResult> {
    return this.registryTransaction(batch.batchId, async (c) => {
      const written = await this.writeRows(c, batch);
      const pruned = await this.prune(c, batch);
      const record = finish({ written, unchanged: batch.rows.length - written, pruned });
      if (written + pruned > 0)
        await this.bumpVersion(c, batch.dataset.name, batch.batchId, record.processed_at);
      await this.insertBatchRecord(c, record);
      return { kind: 'applied', record };
    });
  }

  async saveRejectedBatch(record: BatchRecord): Promise<ApplyResult> {
    return this.registryTransaction(record.batch_id, async (c) => {
      await this.insertBatchRecord(c, record);
      return { kind: 'applied', record };
    });
  }

  async purgeBatches(before: string): Promise<number> {
    try {
      return (
        (await this.pool.query('DELETE FROM mds_batches WHERE processed_at < $1', [before])).rowCount ?? 0
      );
    } catch (err) {
      return translate(err);
    }
  }

  async listBatches(filter: BatchListFilter): Promise<BatchRecord[]> {
    const where: string[] = [];
    const params: Value[] = [];
    if (filter.dataset) {
      params.push(filter.dataset);
      where.push(`dataset = $${params.length}`);
    }
    if (filter.status) {
      params.push(filter.status);
      where.push(`status = $${params.length}`);
    }
    params.push(filter.limit);
    const rows = await this.sql(
      `SELECT * FROM mds_batches${where.length ? ` WHERE ${where.join(' AND ')}` : ''}` +
        ` ORDER BY processed_at DESC, batch_id ASC LIMIT $${params.length}`,
      params,
    );
    return rows.map(batchFromRow);
  }

  async query(plan: QueryPlan, withTotal: boolean): Promise<QueryResult> {
    const { rows, total } = await this.page(plan, withTotal, false);
    return { rows: rows as Record<string, Value>[], total };
  }

  async queryJson(plan: QueryPlan, withTotal: boolean): Promise<QueryJsonResult> {
    const { rows, total } = await this.page(plan, withTotal, true);
    return { rows: rows.map((r) => (typeof r.j === 'string' ? r.j : null)), total };
  }

  private async page(
    plan: QueryPlan,
    withTotal: boolean,
    json: boolean,
  ): Promise<{ rows: DbRow[]; total: number }> {
    const sel = selectStatement(plan, POSTGRES, true, json);
    if (!withTotal) return { rows: await this.sql(sel.sql, sel.params, true), total: -1 };
    // The page and the total in ONE statement (one snapshot, one round trip): the count is an
    // uncorrelated scalar subquery, evaluated once, added to every row as "__total" (a name no
    // catalog field can take: they start with a letter). Parameters are renumbered after the
    // count's; the SQL's only literals are the row JSON's, which hold no `$`.
    const cnt = countStatement(plan, POSTGRES);
    const shift = cnt.params.length;
    const page = sel.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`);
    const from = page.indexOf(` FROM ${q(plan.dataset.name)}`);
    const sql = `${page.slice(0, from)}, (${cnt.sql}) AS "__total"${page.slice(from)}`;
    const rows = await this.sql(sql, [...cnt.params, ...sel.params], true);
    const first = rows[0];
    if (!first) {
      // Past the last row: the page is empty, so only the total is left to read.
      const [n] = await this.sql(cnt.sql, cnt.params, true);
      return { rows, total: Number(n?.n ?? 0) };
    }
    const total = Number(first.__total);
    for (const r of rows) delete r.__total;
    return { rows, total };
  }

  async *stream(plan: QueryPlan): AsyncIterable<Record<string, Value>[]> {
    // A server-side cursor in a read-only snapshot: bounded memory, one consistent view.
    let client: Client;
    try {
      client = await this.pool.connect();
    } catch (err) {
      return translate(err);
    }
    let broken: Error | undefined;
    const onError = (err: Error): void => {
      broken ??= err;
    };
    client.on('error', onError);
    let open = false;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      open = true;
      const sel = selectStatement(plan, POSTGRES, false);
      await client.query(`DECLARE mds_export NO SCROLL CURSOR FOR ${sel.sql}`, sel.params);
      for (;;) {
        const r = await client.query(`FETCH FORWARD ${STREAM_CHUNK} FROM mds_export`);
        if (r.rows.length > 0) yield r.rows as Record<string, Value>[];
        if (r.rows.length < STREAM_CHUNK) break;
      }
      await client.query('COMMIT');
      open = false;
    } catch (err) {
      if (breaksConnection(err)) broken ??= err as Error;
      translate(err);
    } finally {
      // Also reached when the consumer stops early (client went away): end the snapshot.
      if (open && !broken) await client.query('ROLLBACK').catch((e: Error) => (broken ??= e));
      client.off('error', onError);
      client.release(broken ?? false);
    }
  }

  async datasetVersion(dataset: string): Promise<number> {
    const [r] = await this.sql('SELECT version FROM mds_dataset_state WHERE dataset = $1', [dataset], true);
    return r ? Number(r.version) : 0;
  }

  async coverage(): Promise<DatasetCoverage[]> {
    // One statement (one round trip, one snapshot) for every dataset.
    const parts = this.catalog.datasets.map((d, i) => {
      const dateField = d.range ?? d.partition;
      const agg = dateField
        ? `min(${q(dateField.name)})::text AS first, max(${q(dateField.name)})::text AS last`
        : 'NULL::text AS first, NULL::text AS last';
      return `SELECT ${i} AS i, count(*) AS n, ${agg} FROM ${q(d.name)}`;
    });
    const aggs = await this.sql(parts.join(' UNION ALL '));
    const states = await this.sql('SELECT dataset, last_batch_id, last_batch_at FROM mds_dataset_state');
    const stateOf = new Map(states.map((s) => [String(s.dataset), s]));
    const byIndex = new Map(aggs.map((a) => [Number(a.i), a]));
    return this.catalog.datasets.map((d, i) => {
      const a = byIndex.get(i);
      const s = stateOf.get(d.name);
      return {
        dataset: d.name,
        rows: Number(a?.n ?? 0),
        first_date: (a?.first as string | null | undefined) ?? null,
        last_date: (a?.last as string | null | undefined) ?? null,
        last_batch_id: (s?.last_batch_id as string | null | undefined) ?? null,
        last_batch_at: (s?.last_batch_at as string | null | undefined) ?? null,
      };
    });
  }

  async insertKey(key: ApiKeyRecord): Promise<void> {
    await this.sql(
      `INSERT INTO mds_keys (${KEY_COLUMNS.join(', ')}) VALUES (${KEY_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
      KEY_COLUMNS.map((c) => key[c]),
    );
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return (await this.sql('SELECT * FROM mds_keys ORDER BY created_at, id')).map(keyFromRow);
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    const [r] = await this.sql('SELECT * FROM mds_keys WHERE id = $1', [id]);
    return r ? keyFromRow(r) : null;
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    const [r] = await this.sql('SELECT * FROM mds_keys WHERE hash = $1', [hash]);
    return r ? keyFromRow(r) : null;
  }

  async updateKey(id: string, patch: KeyPatch): Promise<ApiKeyRecord | null> {
    const sets: string[] = [];
    const params: Value[] = [];
    for (const k of ['name', 'rate_per_minute', 'daily_quota'] as const) {
      if (patch[k] !== undefined) {
        params.push(patch[k] ?? null);
        sets.push(`${k} = $${params.length}`);
      }
    }
    if (sets.length) {
      params.push(id);
      await this.sql(`UPDATE mds_keys SET ${sets.join(', ')} WHERE id = $${params.length}`, params);
    }
    return this.getKey(id);
  }

  async revokeKey(id: string, at: string): Promise<ApiKeyRecord | null> {
    await this.sql('UPDATE mds_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]);
    return this.getKey(id);
  }

  async recordUsage(
    entries: readonly { keyId: string; hour: string; count: number; lastUsed: string }[],
  ): Promise<void> {
    if (entries.length === 0) return;
    await this.withClient((c) =>
      this.transaction(c, 'BEGIN', async () => {
        for (const e of entries) {
          await c.query(
            `INSERT INTO mds_key_usage (key_id, hour, count) VALUES ($1, $2, $3)
             ON CONFLICT (key_id, hour) DO UPDATE SET count = mds_key_usage.count + excluded.count`,
            [e.keyId, e.hour, e.count],
          );
          await c.query(
            'UPDATE mds_keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)',
            [e.lastUsed, e.keyId],
          );
        }
      }),
    );
  }

  async usage(since: string): Promise<{ key_id: string; hour: string; count: number }[]> {
    return (await this.sql(
      'SELECT key_id, hour, count FROM mds_key_usage WHERE hour >= $1 ORDER BY hour, key_id',
      [since],
    )) as { key_id: string; hour: string; count: number }[];
  }
}
