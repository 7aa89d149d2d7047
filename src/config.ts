import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import net from 'node:net';
import { parseHosts } from './database-hosts.js';

/** Every setting, read from the environment once. Defaults follow decisions.md. */
const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATABASE_URL: Type.String({ default: 'sqlite:./data/market-data.db' }),
  REDIS_URL: Type.Optional(Type.String()),
  MDS_INGEST_KEYS: Type.String({ default: '' }),
  MDS_QUERY_KEYS: Type.String({ default: '' }),
  MDS_ADMIN_TOKEN: Type.Optional(Type.String()),
  MDS_STATIC_RATE_PER_MINUTE: Type.Optional(Type.Integer({ minimum: 1 })),
  MDS_STATIC_DAILY_QUOTA: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Limits a new managed query key gets when it names none (0 = no limit). */
  MDS_DEFAULT_RATE_PER_MINUTE: Type.Integer({ minimum: 0, default: 600 }),
  MDS_DEFAULT_DAILY_QUOTA: Type.Integer({ minimum: 0, default: 0 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  /** Largest accepted request body, bytes (64 MiB). */
  MDS_BODY_LIMIT: Type.Integer({ minimum: 1024, default: 64 * 1024 * 1024 }),
  /**
   * Bytes of batch bodies in flight per process (read, or being processed): beyond it a batch is
   * refused with 503 / 5032 (access/budgets.ts). 256 MiB. 0: no budget.
   */
  MDS_INGEST_MEMORY_BUDGET: Type.Integer({ minimum: 0, default: 256 * 1024 * 1024 }),
  /** Most records in one batch. */
  MDS_MAX_RECORDS: Type.Integer({ minimum: 1, default: 100_000 }),
  /** Days a processed batch keeps its status record. */
  MDS_BATCH_RETENTION_DAYS: Type.Integer({ minimum: 1, default: 90 }),
  /**
   * Days revisions are kept after they stop being current (unset: all are kept). Older ones are
   * removed hourly in the background; an as_of before now minus this is refused (4005).
   */
  MDS_REVISIONS_KEEP_DAYS: Type.Optional(Type.Integer({ minimum: 1 })),
  /**
   * Default `source_priority` per dataset, `etf_daily=eastmoney,tushare;stock_daily=tushare`:
   * applied when a request names neither source_priority nor a source (docs/bars-and-quality.md).
   */
  MDS_SOURCE_PRIORITY: Type.Optional(Type.String()),
  /** Whole-request timeout, ms (a 64 MiB batch on a slow link needs minutes). */
  MDS_REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 300_000 }),
  /** Time allowed to receive the request headers, ms (slowloris guard). */
  MDS_HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 15_000 }),
  MDS_KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 72_000 }),
  /** Most simultaneous connections per process; 0 = no limit. */
  MDS_MAX_CONNECTIONS: Type.Integer({ minimum: 0, default: 10_000 }),
  /** An export (format=csv|ndjson) whose client reads nothing this long is cut off, ms. */
  MDS_EXPORT_STALL_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 60_000 }),
  /**
   * Threads per worker process that encode exports (CSV, NDJSON, Arrow, Parquet) off the request
   * thread (export/encoder-pool.ts), started with the first export. 0: the request thread encodes.
   */
  MDS_EXPORT_THREADS: Type.Integer({ minimum: 0, maximum: 64, default: 1 }),
  /** Exports running at once per key in one process, then 429 / 4291 (0: no limit). */
  MDS_EXPORTS_PER_KEY: Type.Integer({ minimum: 0, default: 4 }),
  /** Exports running at once in one process, then 503 / 5031 (0: no limit). */
  MDS_EXPORTS_PER_PROCESS: Type.Integer({ minimum: 0, default: 16 }),
  /** Change streams (GET /api/v1/changes as text/event-stream) one key may hold open in one process, then 429 / 4293 (0: no limit). */
  MDS_CHANGES_STREAMS_PER_KEY: Type.Integer({ minimum: 0, default: 4 }),
  /** A change stream whose client has this many bytes unread is closed (docs/changes.md). */
  MDS_CHANGES_BUFFER_BYTES: Type.Integer({ minimum: 1024, default: 1_048_576 }),
  /** How often the change streams of a process read the feed for other instances' changes, ms. */
  MDS_CHANGES_POLL_MS: Type.Integer({ minimum: 10, default: 500 }),
  /** A change stream's heartbeat (a comment line), ms. */
  MDS_CHANGES_HEARTBEAT_MS: Type.Integer({ minimum: 10, default: 15_000 }),
  /** Grace period for in-flight requests on SIGTERM, ms. */
  MDS_SHUTDOWN_GRACE_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  /** Failed authentications allowed per client address per minute. */
  MDS_AUTH_FAILURES_PER_MINUTE: Type.Integer({ minimum: 1, default: 30 }),
  /** ms a SQLite writer waits for another process's lock before answering 503. */
  MDS_SQLITE_BUSY_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 5000 }),
  /** PostgreSQL connections per process. */
  MDS_PG_POOL_SIZE: Type.Integer({ minimum: 1, default: 10 }),
  /** PostgreSQL statement timeout, ms: also bounds lock waits before a 503. */
  MDS_PG_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 30_000 }),
  /** Time to open a PostgreSQL connection (or wait for a pooled one), ms. */
  MDS_PG_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 5000 }),
  /** Client-side limit on one statement's answer outside batch transactions, ms (postgres-db.ts). */
  MDS_PG_QUERY_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 10_000 }),
  /**
   * DATABASE_URL naming several hosts (failover): ms between checks that the host in use is still
   * the primary; a frozen or demoted one is left for the host that is (0: only on failures).
   */
  MDS_PG_PRIMARY_CHECK_MS: Type.Integer({ minimum: 0, default: 1000 }),
  /**
   * `1`: warn at start-up when the PostgreSQL primary has no synchronous standby
   * (an acknowledged batch could then be lost with the primary: docs/deployment.md "Failover").
   */
  MDS_REQUIRE_SYNC_STANDBY: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '0' }),
  /**
   * PostgreSQL streaming replicas that serve reads (queries, exports, quality reports, trails):
   * comma-separated postgres:// URLs. Writes always go to DATABASE_URL (docs/deployment.md).
   */
  DATABASE_READ_URLS: Type.String({ default: '' }),
  /** A replica further behind the primary than this, ms, serves no reads until it catches up. */
  MDS_REPLICA_MAX_LAG_MS: Type.Integer({ minimum: 1, default: 5000 }),
  /** How often each replica's position (and the primary's) is read, ms. */
  MDS_REPLICA_CHECK_MS: Type.Integer({ minimum: 10, default: 500 }),
  /**
   * How long a read that presents MDS-Read-After waits for a replica to replay that far before
   * it is served by the primary, ms.
   */
  MDS_READ_AFTER_WAIT_MS: Type.Integer({ minimum: 0, default: 1000 }),
  /**
   * `pgbouncer`: the PostgreSQL URLs point at a pooler in transaction mode (PgBouncer): no named
   * prepared statements, no session settings at connect (statement_timeout is set per
   * transaction). `none`: direct connections; a pooler found in between stops the start.
   */
  MDS_PG_POOLER: Type.Union([Type.Literal('none'), Type.Literal('pgbouncer')], { default: 'none' }),
  /**
   * Longest a query's statement may run (a page, its count, one chunk of an export; its wait
   * for a reader process included), ms; past it the statement is stopped and the client gets
   * 504 / 5040. 0: no limit.
   */
  MDS_QUERY_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 30_000 }),
  /**
   * SQLite: reader processes per worker that read dataset rows, each with its own connection
   * (storage/sqlite/reader-pool.ts), started as statements need them. 0: the request thread
   * reads them (no deadline then).
   */
  MDS_READER_PROCESSES: Type.Integer({ minimum: 0, maximum: 64, default: 2 }),
  /** Worker processes sharing the port (0 = one per core, the default; 1 = no cluster). */
  MDS_WORKERS: Type.Integer({ minimum: 0, default: 0 }),
  /** Proxies whose X-Forwarded-For is believed: addresses / CIDRs, comma separated. See parseTrustProxy. */
  MDS_TRUST_PROXY: Type.String({ default: '' }),
  /**
   * Threads that process batches off the request thread (parse, checksum, validate, write).
   * Unset: every core but one, 1 to 4 (ingest-pool.ts). 0: in the request thread (tools, debugging).
   */
  MDS_INGEST_THREADS: Type.Optional(Type.Integer({ minimum: 0, maximum: 64 })),
  /**
   * How many nice steps below the request thread the ingest threads run (Linux; elsewhere
   * ignored). On a busy machine the request thread then gets the CPU first, so queries keep
   * their latency while batches are written; ingest takes what is left. 0: same priority.
   */
  MDS_INGEST_NICE: Type.Integer({ minimum: 0, maximum: 19, default: 10 }),
  /**
   * ms an ingest thread that did work may sit idle before it is replaced by a fresh one (its
   * heap, grown by the batches, goes with it: ingest-pool.ts). 0: threads are never replaced.
   */
  MDS_INGEST_RECYCLE_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  /** The MCP endpoint POST /mcp (docs/mcp.md): `off` leaves it out (404). */
  MDS_MCP: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  /**
   * MCP tool calls (a request without any: one) one key may have in flight in one process, then
   * 429 / 4292 (0: no limit).
   */
  MDS_MCP_CALLS_PER_KEY: Type.Integer({ minimum: 0, default: 100 }),
  /** MCP tool calls in flight in one process, all keys together, then 503 / 5033 (0: no limit). */
  MDS_MCP_CALLS_PER_PROCESS: Type.Integer({ minimum: 0, default: 400 }),
  /**
   * A SQLite cluster's writer process that answers none of its supervisor's pings this long,
   * ms, is hung (stopped, stuck): killed and replaced, its batches answered 503 / 5030.
   */
  MDS_WRITER_HANG_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  /** tools/call messages one JSON-RPC batch may hold, then 413 / 4131. */
  MDS_MCP_BATCH_CALLS: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
});

/** Fastify's trustProxy: none, or the addresses / CIDRs of the proxies in front. */
export type TrustProxy = false | string[];

export type Config = Omit<Static<typeof ConfigSchema>, 'MDS_TRUST_PROXY'> & { MDS_TRUST_PROXY: TrustProxy };

export class ConfigError extends Error {}

/** proxy-addr's names for address ranges (loopback, link-local, unique-local). */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * Only named proxies are believed. "true" (every hop) would let any client choose its address
 * by writing X-Forwarded-For, escaping the failed-authentication guard or blocking someone
 * else's address; a hop count cannot tell the proxy from a client that reaches the port
 * directly (Fastify 5 disables it for that reason). Both are refused with a message.
 */
export function parseTrustProxy(raw: string): TrustProxy {
  const v = raw.trim();
  if (v === '' || v === 'false') return false;
  const list = v.split(',').map((s) => s.trim());
  for (const entry of list) {
    const [addr = '', bits, ...rest] = entry.split('/');
    const family = net.isIP(addr);
    const okBits =
      bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!(RANGE_NAMES.has(entry) || (family !== 0 && okBits && rest.length === 0))) {
      throw new ConfigError(
        `invalid configuration MDS_TRUST_PROXY: ${JSON.stringify(entry)} is not an IP address, a CIDR ` +
          'or loopback / linklocal / uniquelocal; name the proxies in front of the service, ' +
          'e.g. MDS_TRUST_PROXY=10.0.0.5 or MDS_TRUST_PROXY=10.0.0.0/8,loopback',
      );
    }
  }
  return list;
}

/** Parses the environment (or a test's overrides) into a Config, or throws naming the bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== '') raw[key] = v;
  }
  const withDefaults = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw));
  if (!Value.Check(ConfigSchema, withDefaults)) {
    const first = Value.Errors(ConfigSchema, withDefaults).First();
    throw new ConfigError(`invalid configuration ${first?.path ?? ''}: ${first?.message ?? 'unknown error'}`);
  }
  try {
    parseHosts(withDefaults.DATABASE_URL);
  } catch (err) {
    throw new ConfigError(`invalid configuration DATABASE_URL: ${(err as Error).message}`);
  }
  return { ...withDefaults, MDS_TRUST_PROXY: parseTrustProxy(withDefaults.MDS_TRUST_PROXY) };
}

/** Splits a comma-separated key list, dropping blanks. */
export function splitKeys(list: string): string[] {
  return list
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k.length > 0);
}
