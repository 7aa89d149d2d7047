import type { StepClock } from '../model/batch-steps.js';
import type { Dataset } from '../catalog/catalog.js';
import type {
  CheckCandidate,
  CodeVerdict,
  FactorPoint,
  QualityRow,
  QualitySort,
} from '../model/quality-rules.js';
import type { ApiKeyRecord, KeyPatch, UsageEntry } from '../model/keys.js';
import type { ApplyResult, BatchRecord, RevertCounts } from '../model/batch.js';
import type { QueryPlan } from '../model/query-plan.js';
import type { Row, Value } from '../model/values.js';
import type { ValueColumns } from '../model/value-columns.js';
import type { ChangeEvent } from '../model/changes.js';

/**
 * The storage's types and the `Store` the domain is wired with. One implementation over two
 * executors: `sqlite/sqlite-db.ts` (embedded default) and `postgres/postgres-db.ts`.
 * No SQL exists outside `src/storage`; column names come only from the catalog.
 */

/** How many of a batch's bars changed what was stored and how many were already stored as sent (bar-blocks.ts). */
export interface BarCounts {
  accepted: number;
  unchanged: number;
}

export interface WriteBatch {
  batchId: string;
  dataset: Dataset;
  /** Valid, de-duplicated rows; every dataset field present (null when absent). */
  rows: Row[];
  /** Full snapshot: delete rows of this partition that the batch does not contain. */
  prune: { partitionValue: string | null; source: string | null } | null;
  /** When the batch arrived, ISO UTC (its record's created_at; the clock's default). */
  now: string;
  /**
   * The clock for `processed_at` (default: `now`). A batch that changes rows gets the later of
   * this and 1 ms after the dataset's last change, taken under the dataset's lock, so that
   * revisions of a key are ordered as their batches committed, whatever the instances' clocks.
   */
  clock?: () => string;
  /**
   * Called inside the transaction once every change is written, just before the instant the
   * changes become known is taken (revisions.ts publish): a test hook's place (ingest-service.ts).
   */
  beforeKnown?: () => void;
  /**
   * Called once the instant is recorded, with the batch's record the last statement before
   * COMMIT (reads are held back by then on SQLite: docs/point-in-time.md): a test hook's place.
   */
  afterKnown?: () => void;
  /** Lapped at the end of each step of the transaction (batch-steps.ts), when given. */
  steps?: StepClock;
  /**
   * Rows are bar blocks (catalog.ts `BarBlocks`): compared bar by bar with the stored ones under
   * the dataset's lock and, `merge` (an incremental batch), merged into them (bar-blocks.ts).
   */
  blocks?: { merge: boolean };
}

export interface WriteOutcome {
  /** Rows inserted or changed. */
  written: number;
  /** Rows identical to what was stored (nothing written). */
  unchanged: number;
  pruned: number;
  /** The batch's processed_at: the instant its changes became known (its revisions' valid_from as answered). */
  processedAt: string;
  /** A batch of bar blocks: its bars new or changed and its bars stored as sent. */
  bars?: BarCounts;
}

export type RevertResult =
  | { kind: 'not_found' }
  /** `already`: the batch had been reverted before; nothing changed and the counts are zero. */
  | { kind: 'reverted'; record: BatchRecord; counts: RevertCounts; already: boolean }
  /** A later batch changed some of the rows: up to 100 of their keys (api names), and how many. */
  | { kind: 'conflict'; keys: Record<string, Value>[]; total: number }
  /** What the batch replaced is not known (processed before history began, or removed by retention). */
  | { kind: 'no_history'; reason: string };

/** What a batch changed, for the dashboard: counts per op and a sample with the values before. */
export interface BatchChanges {
  counts: Record<'insert' | 'update' | 'delete', number>;
  /** Row JSON texts (api names, created_at included); `before` null for an insert. */
  sample: { op: string; before: string | null; after: string }[];
}

export interface QueryResult {
  rows: Record<string, Value>[];
  total: number;
}

/**
 * A page as each whole row's response JSON object (every row field, api names, catalog order),
 * ready to be joined into the envelope. null: a row stored without it (see row-json.ts).
 */
export interface QueryJsonResult {
  rows: (string | null)[];
  total: number;
}

export interface DatasetCoverage {
  dataset: string;
  rows: number;
  first_date: string | null;
  last_date: string | null;
  last_batch_id: string | null;
  last_batch_at: string | null;
}

export interface BatchListFilter {
  dataset?: string;
  status?: string;
  limit: number;
}

/** Thrown by a store when the database cannot answer now (busy, full, unreachable): a 503. */
export class StoreUnavailableError extends Error {
  /**
   * What a client may be told: an SQLSTATE, a SQLite or system error code, or "unavailable".
   * The message (for the log) may hold the database's address and the driver's text; this never.
   */
  readonly condition: string;

  constructor(message: string, options: ErrorOptions & { condition?: string } = {}) {
    super(message, options);
    const c = options.condition;
    this.condition = c !== undefined && /^[A-Za-z0-9_]{1,64}$/.test(c) ? c : 'unavailable';
  }
}

/**
 * Thrown when the database cannot serve as configured, whatever the wait (a pooler the service
 * was not told of, PgBouncer in statement mode): the start stops with the message.
 */
export class StoreSetupError extends Error {}

/** A query's statement ran past MDS_QUERY_TIMEOUT_MS and was stopped: a 504 / 5040. */
export class QueryTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the query ran longer than its time limit (${timeoutMs} ms) and was stopped`);
  }
}

/** Thrown by migrate() when the database's schema is newer than this release: retrying cannot help. */
export class SchemaTooNewError extends StoreSetupError {}

/** Dataset rows and the queries over them (dataset-store.ts). */
export interface DatasetStore {
  query(plan: QueryPlan, withTotal: boolean): Promise<QueryResult>;
  /**
   * `query` without a total, as columns of `plan.select`'s values in that order
   * (model/value-columns.ts): no object per row, and a chunk of an export crosses to its encoding
   * thread as a few buffers.
   */
  queryColumns(plan: QueryPlan): Promise<ValueColumns>;
  /** `query` for a plan selecting every row field, each row as its response JSON (plan.select ignored). */
  queryJson(plan: QueryPlan, withTotal: boolean): Promise<QueryJsonResult>;
  /** A number that changes whenever a batch changes the dataset's rows (ETag, caches). */
  datasetVersion(dataset: string): Promise<number>;
  /** The version and the processed_at of the dataset's last change (null: never changed). */
  datasetState(dataset: string): Promise<{ version: number; changedAt: string | null }>;
  /** The instant the dataset's first change became known (null: it has none): before it, no state is held. */
  firstChange(dataset: string): Promise<string | null>;
  /** The distinct values of the dataset's source field among its current rows (none without one). */
  sourceValues(dataset: string): Promise<string[]>;
  coverage(): Promise<DatasetCoverage[]>;
  /** The calendar a quality report judges by: the exchanges stored, and the latest open day up to `until`. */
  qualityCalendar(q: QualityQuery, until: string): Promise<{ exchanges: string[]; latest: string | null }>;
  /** Every code's quality verdict, computed from the dataset's rows (quality-summary.ts). */
  qualityCodes(q: QualityQuery): Promise<CodeVerdict[]>;
  /**
   * The bar-by-bar checks of some codes of a quality report (quality-sql.ts qualityChecksSql):
   * the bars flagged, each with the previous bar of its series, and the codes' factors.
   */
  qualityChecks(
    q: QualityQuery,
    codes: readonly string[],
    jumpPct: number,
  ): Promise<{ candidates: CheckCandidate[]; factors: FactorPoint[] }>;
  /**
   * A page of the quality report read from the per-code summaries the batch transaction keeps;
   * null when they do not cover the query (a date window, another exchange, not built).
   * `latest`: the calendar's latest open day up to today (staleness).
   */
  qualitySummaryPage(
    q: QualityQuery,
    latest: string | null,
    page: QualityPageRequest,
  ): Promise<QualityPage | null>;
  /**
   * The minute quality report's page (quality-minute-sql.ts), in one statement, so one snapshot:
   * its codes ordered by code, each with the span, days, blocks and bars of its stored blocks
   * that the query selects, the report's total, and the codes' blocks in the window (null when
   * they are more than `maxBlocks`: none is read).
   */
  minuteQualityPage(
    q: MinuteQualityQuery,
    limit: number,
    offset: number,
    maxBlocks: number,
  ): Promise<{ rows: MinuteCodeSpan[]; total: number; blocks: MinuteBlock[] | null }>;
}

/** One stored block of a minute quality page: its code, trading date, source and encoded bars. */
export interface MinuteBlock {
  code: string;
  date: string;
  source: string;
  bars: string;
}

/** What a minute quality report covers: a dataset of bar blocks, optionally one code and source, a date window. */
export interface MinuteQualityQuery {
  dataset: Dataset;
  code: string | null;
  source: string | null;
  dateFrom: string | null;
  dateTo: string | null;
  order: 'asc' | 'desc';
}

/** One code of a minute quality report as the block table tells it, before any block is decoded. */
export interface MinuteCodeSpan {
  code: string;
  first_date: string;
  last_date: string;
  days: number;
  blocks: number;
  bars: number;
}

/** What a quality report covers: a daily dataset, judged by one exchange's calendar. */
export interface QualityQuery {
  dataset: Dataset;
  calendar: Dataset;
  exchange: string;
  code: string | null;
  dateFrom: string | null;
  dateTo: string | null;
}

export interface QualityPageRequest {
  sort: QualitySort;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export interface QualityPage {
  rows: QualityRow[];
  total: number;
}

/** The batch registry (mds_batches) and the batch writes (batch-store.ts). */
export interface BatchStore {
  getBatch(batchId: string): Promise<BatchRecord | null>;
  /**
   * One transaction (batch-transaction.ts): check the registry (a batch holding the id →
   * exists), upsert the rows, prune a full snapshot's partition, bump the dataset's version,
   * and save the record that `finish` builds from the outcome. All or nothing.
   */
  applyBatch(batch: WriteBatch, finish: (outcome: WriteOutcome) => BatchRecord): Promise<ApplyResult>;
  /** Saves the record of a batch whose every record was rejected (nothing else written). */
  saveRejectedBatch(record: BatchRecord): Promise<ApplyResult>;
  /** Deletes status records processed before `before` (ISO). Returns how many. */
  purgeBatches(before: string): Promise<number>;
  listBatches(filter: BatchListFilter): Promise<BatchRecord[]>;
}

/** A change's test hooks around the instant it becomes known (WriteBatch's beforeKnown, afterKnown). */
export type KnownHooks = Pick<WriteBatch, 'beforeKnown' | 'afterKnown'>;

/** Revision history beyond what the batch transaction writes (revision-store.ts). */
export interface RevisionStore {
  /**
   * Puts back what the batch changed, as new revisions of batch `revert:<id>`, in one
   * transaction; or refuses (conflict, no history) changing nothing. `clock`: ISO now.
   */
  revertBatch(batchId: string, clock: () => string, hooks?: KnownHooks): Promise<RevertResult>;
  /** The revisions a batch wrote: counts per op and up to `sample` of them with the values before. */
  batchChanges(record: BatchRecord, sample: number): Promise<BatchChanges>;
  /**
   * Deletes revisions whose valid_to is before `before` (ISO), in bounded steps; a dataset that
   * lost some gets a new version (its trail changed). Returns how many.
   */
  purgeRevisions(before: string): Promise<number>;
}

/** A change feed event as stored: the catalog's parts (field names, adjusted datasets) are the feed's. */
export type StoredChange = Omit<ChangeEvent, 'code_field' | 'date_field' | 'adjusts'>;

export interface ChangeQuery {
  /** Only these datasets' events; null: every dataset's. */
  datasets: readonly string[] | null;
  /** Events with a greater id. */
  after: number;
  limit: number;
}

export interface ChangePage {
  /** Oldest first, ids in (after, latest]. */
  events: StoredChange[];
  /** The latest id given (0: none yet). The page is complete up to it when shorter than its limit. */
  latest: number;
  /** Retention removed every event up to this id (0: none). */
  purgedThrough: number;
  /** The oldest event kept (null: none). */
  oldest: number | null;
}

/** The change feed's events (change-events.ts); batches and reverts record them in their transactions. */
export interface ChangeStore {
  list(query: ChangeQuery): Promise<ChangePage>;
  /** Retention: removes the events known before `before` (ISO). Returns how many. */
  purge(before: string): Promise<number>;
}

/** API keys (mds_keys) and their request counts per hour (mds_key_usage) (key-store.ts). */
export interface KeyStore {
  insertKey(key: ApiKeyRecord): Promise<void>;
  listKeys(): Promise<ApiKeyRecord[]>;
  getKey(id: string): Promise<ApiKeyRecord | null>;
  findKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  updateKey(id: string, patch: KeyPatch): Promise<ApiKeyRecord | null>;
  revokeKey(id: string, at: string): Promise<ApiKeyRecord | null>;
  /** Records last use and adds request counts per key and UTC hour (bucket `YYYY-MM-DDTHH`). */
  recordUsage(entries: readonly UsageEntry[]): Promise<void>;
  usage(since: string): Promise<{ key_id: string; hour: string; count: number }[]>;
}

export interface PoolStats {
  /** Connections open, idle among them, and requests waiting for one (saturation). */
  total: number;
  idle: number;
  waiting: number;
}

/** The PostgreSQL connections of a process and where its reads went (/metrics). */
export interface DatabaseStats {
  primary: {
    up: boolean;
    reads: number;
    pool: PoolStats;
    /** DATABASE_URL naming several hosts: times this process moved to a new primary. */
    switches?: number;
  };
  replicas: {
    name: string;
    /** Answered its last check, as a standby. */
    up: boolean;
    /** ms behind the primary at most (null: not known yet). */
    lagMs: number | null;
    /** Serving reads now (up and within MDS_REPLICA_MAX_LAG_MS, or the primary is down). */
    usable: boolean;
    reads: number;
    pool: PoolStats;
  }[];
}

/**
 * A backend's store, split by what it stores and composed for wiring (sql-store.ts); each
 * service takes only the part it needs (`Pick<Store, 'keys'>`, …).
 */
export interface Store {
  readonly backend: 'sqlite' | 'postgres';
  /** Dataset rows and the queries over them. */
  readonly datasets: DatasetStore;
  /** The batch registry and the batch writes. */
  readonly batches: BatchStore;
  /** API keys and their usage. */
  readonly keys: KeyStore;
  /** Revert, change summaries and retention of the revision history. */
  readonly revisions: RevisionStore;
  /** The change feed's events. */
  readonly changes: ChangeStore;
  /** Creates or upgrades tables and indexes from the catalog. Idempotent. */
  migrate(): Promise<void>;
  /** Resolves while the database answers (with read replicas: the primary or one of them). */
  ping(): Promise<void>;
  /**
   * Read-your-writes: a token that a read presenting it (MDS-Read-After) is served only by a
   * database holding every write committed before this call. null: every read sees them anyway
   * (SQLite; PostgreSQL without read replicas).
   */
  readToken(): Promise<string | null>;
  /** Connection pools and read routing (PostgreSQL), for /metrics; undefined elsewhere. */
  databaseStats?(): DatabaseStats;
  /**
   * PostgreSQL: the primary's standbys that acknowledge commits (synchronous replication), for
   * MDS_REQUIRE_SYNC_STANDBY; undefined elsewhere.
   */
  synchronousStandbys?(): Promise<number>;
  close(): Promise<void>;
}
