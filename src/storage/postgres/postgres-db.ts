import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Dataset } from '../../catalog/catalog.js';
import type { Db, DbRow, Tx } from '../db.js';
import { ROW_JSON_COLUMN, rowJson } from '../../model/row-json.js';
import { replacedSql } from '../revisions.js';
import { keyIndexOrder } from '../schema.js';
import {
  POSTGRES,
  compile,
  q,
  raw,
  rowDiffers,
  sql,
  upsertConflictClause,
  upsertWriteColumns,
  type Sql,
} from '../sql.js';
import { now, runAsync, wait, type Step } from '../step.js';
import { QueryTimeoutError, StoreSetupError, StoreUnavailableError, type WriteBatch } from '../store.js';
import type { Row } from '../../model/values.js';
import { binaryCopyChunks, stagingType } from './copy-binary.js';
import { breaksConnection, isBatchIdTaken, isRetryable, translate } from './pg-errors.js';
import { OwnerShares } from './owner-shares.js';
import { cancelStatement, freeTimeClient, freeTimeout } from './free-time.js';
import { parseHosts } from '../../database-hosts.js';
import { checkClient, PrimaryLocator, type PrimaryState } from './primary-hosts.js';
import { currentQueryContext, QueryAbortedError, type QueryContext } from '../../request-context.js';

type Client = pg.PoolClient;

/** Rows per step when filling the row JSON of an old table (migrate). */
const FILL_CHUNK = 5000;
/** Advisory lock keys: one bigint for migrations; (namespace, hashtext(batch_id)) for batches. */
const MIGRATE_LOCK = '7169139001';
const BATCH_LOCK_SPACE = 7169139;
/** Attempts of a transaction that hit a deadlock or serialization failure. */
const TX_ATTEMPTS = 3;
/** The batch's staging table (temporary, dropped at commit). */
const STAGE = 'mds_stage';

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
  /** Server-side limit of one statement, ms (default 30000; 0 = none). */
  statementTimeoutMs?: number;
  /**
   * Client-side limit, ms, on the answer to one statement outside a batch transaction (reads,
   * keys, usage; default 10000). A batch transaction's statements get the statement timeout plus
   * this (the server's own cancellation normally comes first); /health's ping the smaller of this
   * and the connect timeout. Past it the connection is destroyed and the request answered 503:
   * a hung server (SIGSTOP, a network partition) cannot hold requests for longer. A query
   * request's statement (readDeadlineMs) is stopped only if the server then fails to answer a
   * check of its own (`bounded`): a long query runs to its deadline.
   */
  queryTimeoutMs?: number;
  /**
   * A pooler in transaction mode (PgBouncer) is in between: statements are never prepared under
   * a name (the next one may reach another server connection) and statement_timeout is set by
   * SET LOCAL in each transaction instead of at connect (PgBouncer refuses startup parameters).
   */
  pooler?: boolean;
  /**
   * MDS_QUERY_TIMEOUT_MS: longest a statement of a query request may run (request-context.ts),
   * ms; past it the statement is cancelled on the server and the request answered 504. Such a
   * statement's answer is awaited this plus queryTimeoutMs client-side. 0: only the above.
   */
  readDeadlineMs?: number;
  /**
   * DATABASE_URL with several hosts: ms between checks that the current one is still the primary
   * (MDS_PG_PRIMARY_CHECK_MS, default 1000; primary-hosts.ts).
   */
  primaryCheckMs?: number;
}

/** pg reads a per-statement `query_timeout` that its types do not declare. */
type TimedQuery = pg.QueryConfig & { query_timeout?: number; rowMode?: 'array' };

/** A timeout that never fires in practice (setTimeout's largest delay, about 24.8 days). */
const UNBOUNDED_MS = 2 ** 31 - 1;

// int8 (count(*), bigint columns) as a JS number: every stored integer was validated as a
// safe integer, and counts stay far below 2^53.
const parseInt8 = (s: string): number => Number(s);
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 && format !== 'binary'
      ? parseInt8
      : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

interface BatchStatements {
  stage: string;
  copy: string;
  /** The staged rows whose key is not stored yet. */
  insertNew: string;
  /** The upsert of the staged rows (a stored row changes only where it differs: rowDiffers). */
  upsert: string;
}

/**
 * The stored rows of the staged keys, as `t` beside `s`: one probe of the key index per staged
 * row (the fenced lateral subquery cannot become a hash join, which scanned the whole table).
 */
const storedOfStaged = (d: Dataset): Sql =>
  raw(
    `${STAGE} AS s CROSS JOIN LATERAL (SELECT * FROM ${q(d.name)} AS t WHERE ` +
      `${d.key.map((k) => `t.${q(k.name)} = s.${q(k.name)}`).join(' AND ')}${POSTGRES.subqueryFence}) AS t`,
  );

/**
 * The PostgreSQL executor: a pg Pool. A batch's rows go by binary COPY into a temporary staging
 * table, then one set-based upsert; a batch id is held by an advisory
 * try-lock for the transaction (another holder → in_progress).
 */
/**
 * Statements of one query key at once, per process. Not all pooled connections but one: the
 * database's CPU is what they share — measured on a quiet 2-core machine, one key's 16 deep
 * sorts at 9 a process (18 on the server) kept /health's fresh-connection ping waiting 4.8 s
 * (median); SQLite's default is one reader per key and process.
 */
/** A server that did not answer a check in time (a statement's watch, /health's ping). */
const notAnswering = (): StoreUnavailableError =>
  new StoreUnavailableError('database did not answer in time', { condition: 'query_timeout' });

const STATEMENTS_PER_KEY = 2;

export class PostgresDb implements Db {
  readonly backend = 'postgres' as const;
  readonly dialect = POSTGRES;
  private readonly pool: pg.Pool;
  private closed = false;
  private readonly batchStatements = new Map<string, BatchStatements>();
  private readonly queryTimeoutMs: number;
  private readonly pingTimeoutMs: number;
  private readonly statementTimeoutMs: number;
  private readonly pooler: boolean;
  private readonly readDeadlineMs: number;
  private readonly connectionString: string;
  /** Several hosts in the URL: which is the primary (primary-hosts.ts); null for one host. */
  private readonly locator: PrimaryLocator | null;
  /** The checks in flight of whether the server answers (bounded), by their time limit. */
  private readonly answering = new Map<number, Promise<boolean>>();
  /** One query key never holds more than STATEMENTS_PER_KEY connections (owner-shares.ts). */
  private readonly shares: OwnerShares;
  private readonly poolMax: number;
  private readonly connectTimeoutMs: number;

  constructor(opts: PostgresOptions) {
    const connectTimeout = opts.connectionTimeoutMs ?? 5000;
    const statementTimeout = opts.statementTimeoutMs ?? 30_000;
    this.queryTimeoutMs = opts.queryTimeoutMs ?? 10_000;
    this.pingTimeoutMs = Math.min(this.queryTimeoutMs, connectTimeout);
    this.statementTimeoutMs = statementTimeout;
    this.pooler = opts.pooler ?? false;
    this.readDeadlineMs = opts.readDeadlineMs ?? 0;
    const hosts = parseHosts(opts.connectionString);
    this.locator =
      hosts.hosts.length > 1 ? new PrimaryLocator(hosts, connectTimeout, opts.primaryCheckMs ?? 1000) : null;
    this.locator?.watch();
    this.connectionString = this.locator ? this.locator.url() : opts.connectionString;
    this.poolMax = opts.max ?? 10;
    this.shares = new OwnerShares(Math.max(1, Math.min(STATEMENTS_PER_KEY, this.poolMax - 1)));
    this.connectTimeoutMs = connectTimeout;
    this.pool = new pg.Pool({
      connectionString: this.connectionString,
      max: this.poolMax,
      // The connect and statement limits count the time this thread was free, not wall time
      // (free-time.ts): a thread busy with its own CPU work (an ingest thread parsing batch after
      // batch) reads an answer late, which is not the database's time. So the pool has none of
      // its own (connectionTimeoutMillis, query_timeout): opening a connection is bounded by the
      // client class, waiting for a pooled one by connectWithin.
      Client: locatedClient(
        freeTimeClient({
          connectMs: connectTimeout,
          // Every statement on every connection (BEGIN, COPY, ROLLBACK included) unless it says less.
          queryMs: statementTimeout > 0 ? statementTimeout + this.queryTimeoutMs : UNBOUNDED_MS,
        }),
        this.locator,
      ),
      idleTimeoutMillis: 30_000,
      // A startup parameter: PgBouncer refuses it (pooler mode sets it per transaction instead).
      ...(this.pooler ? {} : { statement_timeout: statementTimeout }),
      keepAlive: true,
      application_name: 'market-data-service',
      types,
    });
    // An idle connection dropped by the server (restart, pg_terminate_backend) is removed from
    // the pool by pg-pool; without a listener the 'error' event would crash the process.
    this.pool.on('error', () => {});
  }

  /** Moves on each time the primary is found on another host (0 with one host). */
  get primaryGeneration(): number {
    return this.locator?.generation ?? 0;
  }

  /**
   * DATABASE_URL naming several hosts: whether the primary has moved since `generation`, looking
   * for it now if not (a search in flight is joined, then one more is made: the one in flight may
   * have asked a standby just before its promotion).
   */
  async primaryMovedSince(generation: number): Promise<boolean> {
    const l = this.locator;
    if (!l) return false;
    if (l.generation === generation) await l.suspect();
    if (l.generation === generation) await l.suspect(true);
    return l.generation !== generation;
  }

  /** Which host is the primary, when DATABASE_URL names several (null: one host). */
  get primaryState(): PrimaryState | null {
    return this.locator?.state() ?? null;
  }

  /**
   * Every failure goes out through here: one that a failover would cause (the connection lost or
   * refused, a read-only server) sends the locator looking for the primary, so that the retry
   * (the client's, after Retry-After) reaches the new one.
   */
  private fail(err: unknown): never {
    if (this.locator && (breaksConnection(err) || (err as { code?: unknown }).code === '25006')) {
      void this.locator.suspect();
    }
    return translate(err);
  }

  /** Pool counters, for tests and metrics. */
  get poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  private async query(
    s: Sql,
    prepared: boolean,
    timeoutMs = this.queryTimeoutMs,
    rowMode?: 'array',
  ): Promise<pg.QueryResult> {
    const { sql: text, params } = compile(s, POSTGRES);
    const ctx = currentQueryContext();
    if (ctx && this.readDeadlineMs > 0) {
      return this.bounded(ctx, {
        ...(prepared && !this.pooler ? { name: statementName(text) } : {}),
        text,
        values: params,
        // The cancel at the deadline normally ends it first; this destroys a connection it did not.
        query_timeout: this.readDeadlineMs + this.queryTimeoutMs,
        ...(rowMode ? { rowMode } : {}),
      });
    }
    try {
      // Read statements are prepared once per connection under a name derived from their text
      // (their shapes are few: the catalog's filters and sorts), so PostgreSQL parses and plans
      // them once instead of on every request. A timed-out statement's connection is destroyed
      // by the pool (pool.query releases it with the error).
      const config: TimedQuery = {
        ...(prepared && !this.pooler ? { name: statementName(text) } : {}),
        text,
        values: params,
        query_timeout: timeoutMs,
        ...(rowMode ? { rowMode } : {}),
      };
      return await this.poolQuery(config);
    } catch (err) {
      return this.fail(err);
    }
  }

  /**
   * A pooled connection within the connect timeout, counted in the thread's free time
   * (free-time.ts); one that comes later goes straight back to the pool.
   */
  private connectWithin(): Promise<Client> {
    return new Promise<Client>((resolve, reject) => {
      let late = false;
      const done = (err: Error | undefined, c: Client | undefined): void => {
        clear();
        if (c && late) c.release();
        else if (c) resolve(c);
        else reject(err ?? new Error('no connection'));
      };
      const clear = freeTimeout(this.connectTimeoutMs, () => {
        late = true;
        // Out of the pool's queue, as its own timeout does, so an outage leaves no waiters behind
        // (a connection being opened for it is bounded by the client's connect limit instead).
        const queue = (this.pool as unknown as { _pendingQueue?: { callback: unknown }[] })._pendingQueue;
        const i = queue?.findIndex((p) => p.callback === done) ?? -1;
        if (i >= 0) queue?.splice(i, 1);
        reject(new Error('timeout exceeded when trying to connect'));
      });
      this.pool.connect(done);
    }).then((c) => {
      // A connection to a host that is no longer the primary is closed, not handed out.
      if (!this.locator || generationOf(c) === this.locator.generation) return c;
      c.release(true);
      return this.connectWithin();
    });
  }

  /** One statement on a pooled connection, as pg-pool's query (which has no free-time connect). */
  private async poolQuery(config: TimedQuery): Promise<pg.QueryResult> {
    const c = await this.connectWithin();
    // A connection lost mid-statement also emits 'error' on the client: the statement's own
    // rejection reports it.
    const ignore = (): void => {};
    c.on('error', ignore);
    try {
      const r = await c.query(config);
      c.off('error', ignore);
      c.release();
      return r;
    } catch (err) {
      c.off('error', ignore);
      // As pg-pool: a connection whose statement failed is not pooled again.
      c.release(err instanceof Error ? err : true);
      throw err;
    }
  }

  /**
   * A statement of a query request: answered by its deadline or stopped when its client goes
   * (or the process stops), with one error per cause. Past the deadline, MDS_QUERY_TIMEOUT_MS,
   * the query was too heavy: 504 / 5040. Past the bound on a server that does not answer
   * (queryTimeoutMs, MDS_PG_QUERY_TIMEOUT_MS) when that is the shorter, the server is asked
   * whether it answers at all (`answers`): a statement that is only long runs on to its deadline,
   * one whose server is hung (two checks missed in a row) is stopped with 503 / 5030 as for any
   * statement. Either way the caller is answered at once and the statement cancelled on the
   * server (the protocol's CancelRequest with the connection's key, on a connection of its own: through PgBouncer too);
   * the connection goes back to the pool only once the statement has ended and the cancel been
   * answered, so a late cancel can never hit the next user's statement (the statement's own
   * query_timeout, later, destroys a connection whose server never answers).
   */
  private async bounded(ctx: QueryContext, config: TimedQuery): Promise<pg.QueryResult> {
    if (ctx.signal.aborted) throw abortReason(ctx.signal);
    const started = Date.now();
    await this.shares.take(
      ctx.owner,
      ctx.signal,
      this.readDeadlineMs,
      () => new QueryTimeoutError(this.readDeadlineMs),
      () => abortReason(ctx.signal),
    );
    try {
      return await this.boundedOnConnection(ctx, config, started);
    } finally {
      this.shares.give(ctx.owner);
    }
  }

  /** bounded()'s statement, once its owner has a share; its deadline counts from `started`. */
  private async boundedOnConnection(
    ctx: QueryContext,
    config: TimedQuery,
    started: number,
  ): Promise<pg.QueryResult> {
    const conn = await this.checkout();
    let stopped: Error | null = null;
    let cancelled: Promise<unknown> = Promise.resolve();
    let stop: (err: Error) => void = () => {};
    /** The statement has ended: nothing may cancel its connection's backend any more. */
    let settled = false;
    const stoppedEarly = new Promise<never>((_, reject) => {
      stop = (err) => {
        if (stopped || settled) return;
        stopped = err;
        // The protocol's cancel (its key), not pg_cancel_backend(pid): through PgBouncer the pid
        // is the pooler's, which forwards the cancel to the server connection running it.
        cancelled = cancelStatement(conn.c, this.queryTimeoutMs).catch(() => conn.failed(err, true));
        reject(err);
      };
    });
    const deadline = setTimeout(
      () => stop(new QueryTimeoutError(this.readDeadlineMs)),
      Math.max(0, this.readDeadlineMs - (Date.now() - started)),
    );
    let watch: NodeJS.Timeout | undefined;
    // Two checks missed in a row, not one: a fresh connection to a server busy with long
    // statements can miss a short bound once (seen with MDS_PG_QUERY_TIMEOUT_MS=200 and twelve
    // deep sorts); a hung server misses every one. Each check is given a third of the bound and
    // the second follows a miss at once, so a hung server's statement is answered 503 by
    // MDS_PG_QUERY_TIMEOUT_MS, as documented, rather than left to the deadline's 504.
    const checkMs = Math.max(1, Math.floor(this.queryTimeoutMs / 3));
    let missed = 0;
    const watchServer = (delay: number): void => {
      watch = setTimeout(() => {
        void this.answers(checkMs).then((ok) => {
          if (settled) return;
          missed = ok ? 0 : missed + 1;
          if (missed < 2) watchServer(ok ? checkMs : 0);
          else stop(notAnswering());
        });
      }, delay);
    };
    if (this.queryTimeoutMs < this.readDeadlineMs) watchServer(checkMs);
    const onAbort = (): void => stop(abortReason(ctx.signal));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const running = conn.c.query(config);
    try {
      return await Promise.race([running, stoppedEarly]);
    } catch (err) {
      if (stopped) throw stopped;
      conn.failed(err);
      // The server's own statement_timeout came first.
      if ((err as { code?: unknown }).code === '57014') throw new QueryTimeoutError(this.readDeadlineMs);
      return this.fail(err);
    } finally {
      settled = true;
      clearTimeout(deadline);
      clearTimeout(watch);
      ctx.signal.removeEventListener('abort', onAbort);
      if (stopped) {
        // Released once the statement has ended and the cancel been answered (not awaited here).
        void Promise.allSettled([running, cancelled]).then(() => conn.release());
      } else conn.release();
    }
  }

  /**
   * Whether the server answers at all: SELECT 1 on a connection of its own (the pool's may all be
   * held by long statements, which says nothing of the server), bounded as /health's ping is.
   * One check at a time, shared by every statement that asks meanwhile.
   */
  private answers(timeoutMs = this.pingTimeoutMs): Promise<boolean> {
    const running = this.answering.get(timeoutMs);
    if (running) return running;
    const check = (async () => {
      const c = checkClient(this.locator?.url() ?? this.connectionString, timeoutMs);
      try {
        await c.connect();
        await c.query('SELECT 1');
        return true;
      } catch {
        return false;
      } finally {
        this.answering.delete(timeoutMs);
        void c.end().catch(() => {});
      }
    })();
    this.answering.set(timeoutMs, check);
    return check;
  }

  async rows(s: Sql, opts: { prepared?: boolean } = {}): Promise<DbRow[]> {
    return (await this.query(s, opts.prepared ?? false)).rows as DbRow[];
  }

  async arrays(s: Sql, opts: { prepared?: boolean } = {}): Promise<unknown[][]> {
    return (await this.query(s, opts.prepared ?? false, this.queryTimeoutMs, 'array')).rows as unknown[][];
  }

  async values(s: Sql, opts: { prepared?: boolean } = {}): Promise<unknown[]> {
    const r = await this.query(s, opts.prepared ?? false);
    const first = r.fields[0]?.name;
    return first === undefined ? [] : (r.rows as DbRow[]).map((row) => row[first]);
  }

  async run(s: Sql): Promise<number> {
    return (await this.query(s, false)).rowCount ?? 0;
  }

  /**
   * A connection of its own. One that failed at the protocol level is destroyed on release,
   * never handed out again; an 'error' event while it is checked out is recorded instead of
   * crashing the process.
   */
  private async checkout(): Promise<{
    c: Client;
    /** Records an error: the connection is destroyed on release if it broke it (or `always`). */
    failed(err: unknown, always?: boolean): void;
    readonly broken: boolean;
    release(): void;
  }> {
    let c: Client;
    try {
      c = await this.connectWithin();
    } catch (err) {
      return this.fail(err);
    }
    let broken: Error | undefined;
    const onError = (err: Error): void => {
      broken ??= err;
    };
    c.on('error', onError);
    return {
      c,
      failed: (err, always = false) => {
        if (always || breaksConnection(err)) broken ??= err instanceof Error ? err : new Error(String(err));
      },
      get broken() {
        return broken !== undefined;
      },
      release: () => {
        c.off('error', onError);
        c.release(broken ?? false);
      },
    };
  }

  /** Runs `fn` on a connection of its own (see checkout). */
  private async withClient<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    const conn = await this.checkout();
    try {
      return await fn(conn.c);
    } catch (err) {
      conn.failed(err);
      return this.fail(err);
    } finally {
      conn.release();
    }
  }

  /** BEGIN … COMMIT on one connection, retried from the start on deadlock / serialization failure. */
  async transaction<T>(body: (tx: Tx) => Step<T>): Promise<T> {
    return this.withClient(async (c) => {
      for (let attempt = 1; ; attempt++) {
        try {
          await c.query('BEGIN');
          try {
            if (this.pooler && this.statementTimeoutMs > 0) {
              await c.query(`SET LOCAL statement_timeout = ${this.statementTimeoutMs}`);
            }
            const out = await runAsync(body(this.steps(c)));
            await c.query('COMMIT');
            return out;
          } catch (err) {
            // A broken connection (timed out, cut) is destroyed on release, which ends the
            // transaction on the server; a ROLLBACK would only wait behind the unanswered statement.
            if (breaksConnection(err)) throw err;
            await c.query('ROLLBACK').catch((rollbackErr: unknown) => {
              // The original error is what the caller must see; the connection is unusable now.
              throw breaksConnection(err) ? err : rollbackErr;
            });
            throw err;
          }
        } catch (err) {
          if (!isRetryable(err) || attempt >= TX_ATTEMPTS) throw err;
        }
      }
    });
  }

  private steps(c: Client): Tx {
    // A migration's statements (index builds on large tables) have no time limit on either side.
    let migrating = false;
    const timed = (text: string, values: unknown[] = []): TimedQuery => ({
      text,
      values,
      ...(migrating ? { query_timeout: UNBOUNDED_MS } : {}),
    });
    const query = (s: Sql): Promise<pg.QueryResult> => {
      const { sql: text, params } = compile(s, POSTGRES);
      return c.query(timed(text, params));
    };
    return {
      dialect: POSTGRES,
      rows: (s) => wait(query(s).then((r) => r.rows as DbRow[])),
      run: (s) => wait(query(s).then((r) => r.rowCount ?? 0)),
      exec: (statements) =>
        wait(
          (async () => {
            for (const s of statements) await c.query(timed(s));
          })(),
        ),
      lockBatch: (batchId) =>
        wait(
          c
            .query('SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS ok', [BATCH_LOCK_SPACE, batchId])
            .then((r) => (r.rows[0] as DbRow | undefined)?.ok === true),
        ),
      lockMigration: () =>
        wait(
          (async () => {
            // Several instances may start at once: one migrates, the others wait, then find
            // everything in place (CREATE … IF NOT EXISTS is not safe against concurrent creators).
            migrating = true;
            await c.query(timed('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK]));
            // An index built on a large existing table may take longer than statement_timeout.
            await c.query(timed('SET LOCAL statement_timeout = 0'));
          })(),
        ),
      // No gate: a snapshot is taken when a statement starts, and a commit becomes visible to
      // new snapshots at once after its log flush (docs/point-in-time.md, the residual window).
      holdReads: () => now(undefined),
      writeRows: (batch, at) => wait(this.writeRows(c, batch, at)),
      batchKeys: () =>
        wait(
          // The rows just upserted are invisible to the table's statistics, so the planner
          // expects one and nests loops: a 50,000-row snapshot took > 30 s (statement timeout).
          // A hash join: 80 ms.
          c.query('SET LOCAL enable_nestloop = off').then(() => STAGE),
        ),
      refillRowJson: (d) => wait(this.refillRowJson(c, d)),
    };
  }

  private statementsFor(d: Dataset): BatchStatements {
    let s = this.batchStatements.get(d.name);
    if (!s) {
      const fields = d.fields.map((f) => f.name);
      const cols = upsertWriteColumns(d);
      const keyOrder = keyIndexOrder(d)
        .map((k) => (k.desc ? `${q(k.name)} DESC` : q(k.name)))
        .join(', ');
      // Staging rows are written in the key index's order: concurrent batches lock rows in one
      // order, and the index's leaf pages fill left to right instead of splitting half-empty
      // (rows in ascending date order went into a descending date index leftwards).
      // $1 created_at, $2 the batch, $3 its instant; the op is 'insert' as written.
      const insert = (where: string, conflict: string): string =>
        `INSERT INTO ${q(d.name)} AS t (${cols.map(q).join(', ')}) ` +
        `SELECT ${[...fields, ROW_JSON_COLUMN].map(q).join(', ')}, $1::text, 'insert', $2::text, $3::text ` +
        `FROM ${STAGE}${where} ORDER BY ${keyOrder} ${conflict}`;
      s = {
        // The staging rows are sorted by key (below): room to do that in memory, not on disk,
        // for a 10,000-row batch with its row JSON (PostgreSQL's default work_mem is 4 MB).
        // No JIT: a batch's statements run once each, and compiling one (the lookup of stored
        // keys is costed above jit_above_cost) took longer than running it.
        stage:
          `SET LOCAL work_mem = '64MB'; SET LOCAL jit = off; CREATE TEMPORARY TABLE ${STAGE} (` +
          d.fields.map((f) => `${q(f.name)} ${stagingType(f.type)}`).join(', ') +
          `, ${q(ROW_JSON_COLUMN)} text) ON COMMIT DROP`,
        copy: `COPY ${STAGE} (${[...fields, ROW_JSON_COLUMN].map(q).join(', ')}) FROM STDIN (FORMAT binary)`,
        insertNew: insert('', 'ON CONFLICT DO NOTHING'),
        upsert: insert('', upsertConflictClause(d, POSTGRES, 't')),
      };
      this.batchStatements.set(d.name, s);
    }
    return s;
  }

  private async writeRows(c: Client, batch: WriteBatch, at: string): Promise<number> {
    const d = batch.dataset;
    const s = this.statementsFor(d);
    await c.query(s.stage);
    if (batch.rows.length > 0) {
      const chunks = binaryCopyChunks(
        batch.rows,
        d.fields.map((f) => f.name),
        d.fields.map((f) => f.type),
        rowJson(d),
      );
      await pipeline(Readable.from(chunks), c.query(copyFrom(s.copy)));
    }
    // New keys first: a batch of new rows (the common case) is then written, with nothing to
    // look up. Only when some keys were stored already are their versions that will change
    // copied into the revision table, and those rows upserted (the rows just inserted equal
    // their staged values, so the upsert leaves them alone).
    const args = [at, batch.batchId, at];
    let written = (await c.query(s.insertNew, args)).rowCount ?? 0;
    if (written === batch.rows.length) return written;
    // The lookup probes the key index only if the planner knows the table's size: statistics
    // taken before a fifth of its rows changed let it pick the (source, date) index and scan a
    // whole day per key. Such a table is analysed first (what autovacuum would soon do anyway).
    const [stats] = (
      await c.query(
        'SELECT n_mod_since_analyze > 0.2 * greatest(n_live_tup, 1000) AS stale FROM pg_stat_user_tables WHERE relid = $1::regclass',
        [q(d.name)],
      )
    ).rows as DbRow[];
    if (stats?.stale === true) await c.query(`ANALYZE ${q(d.name)}`);
    const differs = raw(rowDiffers(d, POSTGRES, 't', 's'));
    const { sql: copyOld, params } = compile(replacedSql(d, at, differs, storedOfStaged(d)), POSTGRES);
    await c.query(copyOld, params);
    written += (await c.query(s.upsert, args)).rowCount ?? 0;
    return written;
  }

  /** Every row's JSON rebuilt (inside migrate's transaction). */
  private async refillRowJson(c: Client, d: Dataset): Promise<void> {
    const json = rowJson(d);
    // A cursor over the rows (its snapshot does not see the updates below), FILL_CHUNK rows
    // at a time, each chunk written by one UPDATE … FROM unnest: bounded memory, few round trips.
    await c.query(
      `DECLARE mds_fill NO SCROLL CURSOR FOR SELECT ctid AS _ctid, ${d.fields.map((f) => q(f.name)).join(', ')} ` +
        `FROM ${q(d.name)}`,
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

  isBatchIdTaken(err: unknown): boolean {
    return isBatchIdTaken(err);
  }

  async ping(): Promise<void> {
    // Every pooled connection held by long statements says nothing of the server: ask it on a
    // connection of its own rather than wait behind them.
    if (this.pool.idleCount === 0 && this.pool.totalCount >= this.poolMax) {
      if (await this.answers()) return;
      throw notAnswering();
    }
    await this.query({ chunks: ['SELECT 1'] }, false, this.pingTimeoutMs);
  }

  /**
   * Refuses a connection path that cannot keep the service's guarantees, with what to change:
   * a pooler the service was not told about (it swallowed or refused statement_timeout, and
   * would break named prepared statements), or one in statement mode (no transactions).
   */
  async checkSetup(): Promise<void> {
    // Several hosts: the migration and everything after go to the primary from the start.
    await this.locator?.suspect();
    try {
      if (this.pooler) {
        await this.transaction(() => wait(Promise.resolve()));
        return;
      }
      const [row] = await this.rows(sql`SELECT setting FROM pg_settings WHERE name = 'statement_timeout'`);
      if (this.statementTimeoutMs > 0 && Number(row?.setting) !== this.statementTimeoutMs) {
        throw new StoreSetupError(
          `the PostgreSQL session did not keep statement_timeout=${this.statementTimeoutMs} asked at connect ` +
            `(it is ${String(row?.setting)} ms): a connection pooler is in between; set MDS_PG_POOLER=pgbouncer ` +
            '(PgBouncer in pool_mode=transaction or session)',
        );
      }
    } catch (err) {
      const text =
        err instanceof Error ? `${err.message} ${err.cause instanceof Error ? err.cause.message : ''}` : '';
      if (/unsupported startup parameter/i.test(text)) {
        throw new StoreSetupError(
          `a connection pooler refused a startup parameter (${text.trim()}): set MDS_PG_POOLER=pgbouncer`,
          { cause: err },
        );
      }
      if (/not allowed in statement pool/i.test(text)) {
        throw new StoreSetupError(
          'PgBouncer runs in pool_mode=statement, which allows no transactions: every batch is one ' +
            'transaction; use pool_mode=transaction (or session)',
          { cause: err },
        );
      }
      throw err;
    }
  }

  /** Standbys whose flush the primary's commits wait for (pg_stat_replication's sync or quorum). */
  async synchronousStandbys(): Promise<number> {
    const [n] = await this.values(
      sql`SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')`,
    );
    return Number(n);
  }

  /**
   * ms since the oldest transaction now in progress that has written began (0: none). The
   * service's own sessions are visible to its role (pg_stat_activity shows backend_xid and
   * xact_start of one's own role); a difference of the server's clock, so no clock is compared.
   */
  async oldestWriteAge(): Promise<number> {
    const [v] = await this.values(
      sql`SELECT coalesce(extract(epoch FROM clock_timestamp() - min(xact_start)) * 1000, 0)
        FROM pg_stat_activity WHERE backend_xid IS NOT NULL`,
    );
    return Math.max(0, Number(v));
  }

  /** The primary's WAL position now: every transaction committed so far is at or before it. */
  async walPosition(): Promise<string> {
    const [lsn] = await this.values(sql`SELECT pg_current_wal_lsn()::text`);
    return String(lsn);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.locator?.stop();
    await this.pool.end();
  }
}

const GENERATION = Symbol('generation');

/** The generation of the primary a pooled connection was opened to (primary-hosts.ts). */
function generationOf(c: Client): number {
  return (c as unknown as { [GENERATION]?: number })[GENERATION] ?? 0;
}

/** The pool's Client class, each connection pointed at the primary `locator` last found. */
function locatedClient(base: typeof pg.Client, locator: PrimaryLocator | null): typeof pg.Client {
  if (!locator) return base;
  const at = locator;
  return class LocatedClient extends base {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      // pg connects to these (Client._connect), read from the URL in its constructor.
      const self = this as unknown as { host: string; port: number; [GENERATION]: number };
      self.host = at.current.host;
      self.port = at.current.port;
      self[GENERATION] = at.generation;
      at.attach(this as unknown as Parameters<PrimaryLocator['attach']>[0]);
    }
  };
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new QueryAbortedError('disconnected');
}
