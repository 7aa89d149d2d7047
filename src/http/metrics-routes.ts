import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { AppError } from '../errors.js';
import { PRIMARY_TIMEOUT_MS, primaryLink } from '../cluster/primary-link.js';
import { METRICS_WAIT_MS } from '../cluster/messages.js';
import { Type } from '@sinclair/typebox';
import { registerRoutes, route } from './route-declaration.js';

/** Refusals counted by mds_rate_limit_refusals_total: limits and budgets. */
const REFUSALS: ReadonlySet<number> = new Set([4030, 4031, 4290, 4291, 4292, 4293, 5031, 5032, 5033]);
import type { BatchIngest, RevertEvent } from '../ingest/ingest-service.js';
import type { DatabaseStats } from '../storage/store.js';
import type { BatchRecord } from '../model/batch.js';
import { BATCH_STEPS, type BatchStep, type BatchStepSeconds } from '../model/batch-steps.js';

/**
 * GET /metrics in the Prometheus text format. One registry per app (not prom-client's global
 * one), so several apps in one process (tests, cluster workers' own endpoints) never mix
 * counts. Labels come only from bounded sets: route patterns, status codes, catalog datasets.
 */

export interface Metrics {
  readonly registry: Registry;
  /** Open server-sent-event streams (maintained by the events route). */
  readonly sseClients: Gauge;
}

interface RequestCell {
  readonly labels: { route: string; method: string; status: string };
  /** Requests not yet added to the counter. */
  count: number;
  readonly latency: { observe(seconds: number): void };
}

interface RouteMethod {
  readonly latency: { observe(seconds: number): void };
  readonly statuses: Map<number, RequestCell>;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** A batch step takes from microseconds (a registry read) to seconds (a 100,000-row write). */
const STEP_BUCKETS = [0.0001, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * PostgreSQL pools and read replicas (docs/deployment.md "Operator's checks"), read from the
 * store when scraped. Summed over a cluster's workers, except lag (the worst) and up (the least).
 */
function databaseMetrics(registry: Registry, stats: () => DatabaseStats): void {
  const each = (
    s: DatabaseStats,
  ): { name: string; pool: DatabaseStats['primary']['pool']; reads: number }[] => [
    { name: 'primary', ...s.primary },
    ...s.replicas,
  ];
  const pool = new Gauge({
    name: 'mds_pg_pool_connections',
    help: 'PostgreSQL connections of this process by database: in use (busy), idle, and requests waiting for one (waiting > 0: the pool is saturated)',
    labelNames: ['database', 'state'] as const,
    registers: [registry],
    collect() {
      for (const db of each(stats())) {
        pool.set({ database: db.name, state: 'busy' }, db.pool.total - db.pool.idle);
        pool.set({ database: db.name, state: 'idle' }, db.pool.idle);
        pool.set({ database: db.name, state: 'waiting' }, db.pool.waiting);
      }
    },
  });
  const seen = new Map<string, number>();
  const reads = new Counter({
    name: 'mds_pg_reads_total',
    help: 'Dataset reads (statements) by the database that served them: primary or a replica',
    labelNames: ['database'] as const,
    registers: [registry],
    collect() {
      for (const db of each(stats())) {
        reads.inc({ database: db.name }, db.reads - (seen.get(db.name) ?? 0));
        seen.set(db.name, db.reads);
      }
    },
  });
  // Per replica: the worst over a cluster's workers is what an operator acts on.
  const replicaGauge = (
    name: string,
    help: string,
    aggregator: 'max' | 'min',
    value: (r: DatabaseStats['replicas'][number]) => number | null,
  ): void => {
    const gauge: Gauge<'replica'> = new Gauge({
      name,
      help,
      labelNames: ['replica'] as const,
      registers: [registry],
      aggregator,
      collect() {
        for (const r of stats().replicas) {
          const v = value(r);
          if (v !== null) gauge.set({ replica: r.name }, v);
        }
      },
    });
  };
  replicaGauge(
    'mds_pg_replica_lag_seconds',
    'How far each read replica is behind the primary at most (its reads are stopped past MDS_REPLICA_MAX_LAG_MS)',
    'max',
    (r) => (r.lagMs === null ? null : r.lagMs / 1000),
  );
  let switched = 0;
  const switches = new Counter({
    name: 'mds_pg_primary_switches_total',
    help: 'DATABASE_URL naming several hosts: times this process found the primary on another host (a failover)',
    registers: [registry],
    collect() {
      const n = stats().primary.switches ?? 0;
      switches.inc(n - switched);
      switched = n;
    },
  });
  replicaGauge(
    'mds_pg_replica_serving',
    'Whether each read replica serves reads now (1) or not (0: down, not a standby, or too far behind)',
    'min',
    (r) => (r.usable ? 1 : 0),
  );
}

let processRegistry: Registry | null = null;

/** Process metrics (memory, CPU, event loop, GC) are per process: collected once, shared by apps. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'mds_' });
  }
  return processRegistry;
}

/** GET /metrics: the exposition text, from the registry (or the cluster primary's sum). */
export const METRICS_ROUTE = route<'/metrics', { text: () => Promise<string>; contentType: string }>({
  method: 'get',
  url: '/metrics',
  operationId: 'metrics',
  tags: ['operations'],
  summary: 'Prometheus metrics (text exposition format)',
  description: 'Request counts and latency by route, ingest counts by dataset, process metrics.',
  auth: 'none',
  responses: { 200: { description: 'metrics', content: { 'text/plain': Type.String() } } },
  handle:
    ({ text, contentType }) =>
    async (_req, reply) =>
      reply.type(contentType).send(await text()),
});

export function registerMetricsRoutes(
  app: FastifyInstance,
  ingest: BatchIngest,
  databaseStats?: () => DatabaseStats,
): Metrics {
  const registry = new Registry();
  if (databaseStats) databaseMetrics(registry, databaseStats);

  // Requests are counted in plain cells and added to the counter when it is read: prom-client
  // hashes the label set on every inc(). Cells are kept in first-seen order, as the counter's.
  const requestCells: RequestCell[] = [];
  const requests = new Counter({
    name: 'mds_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
    collect() {
      for (const c of requestCells) {
        if (c.count === 0) continue;
        requests.inc(c.labels, c.count);
        c.count = 0;
      }
    },
  });
  const latency = new Histogram({
    name: 'mds_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern and method',
    labelNames: ['route', 'method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  // The plain counters: a name, its help and its labels, on this app's registry.
  const counter = <L extends string>(name: string, help: string, ...labelNames: L[]): Counter<L> =>
    new Counter({ name, help, labelNames, registers: [registry] });
  const batches = counter(
    'mds_ingest_batches_total',
    'Ingest batches processed, by dataset and status (accepted, partial, rejected)',
    'dataset',
    'status',
  );
  const records = counter(
    'mds_ingest_records_total',
    'Records of processed batches, by dataset and outcome (accepted, duplicate, rejected)',
    'dataset',
    'outcome',
  );
  const pruned = counter(
    'mds_ingest_pruned_rows_total',
    'Rows deleted by full snapshots, by dataset',
    'dataset',
  );
  const reverts = counter(
    'mds_batch_reverts_total',
    'Batches reverted (POST /admin/api/batches/{id}/revert), by dataset',
    'dataset',
  );
  const revertedRows = counter(
    'mds_revert_rows_total',
    'Rows put back by reverts, by dataset and outcome (restored, updated, deleted)',
    'dataset',
    'outcome',
  );
  const refusals = counter(
    'mds_rate_limit_refusals_total',
    'Requests refused by a key limit or a budget: code 4030 (rate), 4031 (daily quota), 4290 (failed-auth guard), ' +
      '4291 / 5031 (exports per key / per process), 5032 (ingest memory), 4292 / 5033 (MCP tool calls per key / per process)',
    'code',
  );
  const steps = new Histogram({
    name: 'mds_batch_step_seconds',
    help: 'Time a processed batch spent in each step of ingest (parse, checksum, registry, validation, claim, rows, revisions, prune, quality, periods, record, commit)',
    labelNames: ['step'] as const,
    buckets: STEP_BUCKETS,
    registers: [registry],
  });
  // Label children made once per step (prom-client hashes the label set on every observe()).
  const stepCells = new Map(BATCH_STEPS.map((step) => [step, steps.labels({ step })]));
  const sseClients = new Gauge({
    name: 'mds_ingest_event_streams',
    help: 'Open server-sent-event streams on /api/v1/upstream/ingest/events',
    registers: [registry],
  });

  const onBatch = (rec: BatchRecord): void => {
    batches.inc({ dataset: rec.dataset, status: rec.status });
    records.inc({ dataset: rec.dataset, outcome: 'accepted' }, rec.accepted);
    records.inc({ dataset: rec.dataset, outcome: 'duplicate' }, rec.duplicate);
    records.inc({ dataset: rec.dataset, outcome: 'rejected' }, rec.rejected);
    if (rec.pruned > 0) pruned.inc({ dataset: rec.dataset }, rec.pruned);
  };
  const onRevert = (ev: RevertEvent): void => {
    reverts.inc({ dataset: ev.dataset });
    for (const outcome of ['restored', 'updated', 'deleted'] as const) {
      revertedRows.inc({ dataset: ev.dataset, outcome }, ev[outcome]);
    }
  };
  const onSteps = (seconds: BatchStepSeconds): void => {
    for (const [step, s] of Object.entries(seconds)) stepCells.get(step as BatchStep)?.observe(s);
  };
  ingest.events.on('batch', onBatch);
  ingest.events.on('steps', onSteps);
  ingest.events.on('revert', onRevert);
  app.addHook('onClose', async () => {
    ingest.events.off('batch', onBatch);
    ingest.events.off('steps', onSteps);
    ingest.events.off('revert', onRevert);
  });

  // Route → method → its latency child and its status cells, made once per label set.
  const routes = new Map<string, Map<string, RouteMethod>>();
  const cellOf = (route: string, method: string, status: number): RequestCell => {
    let methods = routes.get(route);
    if (methods === undefined) routes.set(route, (methods = new Map()));
    let rm = methods.get(method);
    if (rm === undefined) {
      rm = { latency: latency.labels({ route, method }), statuses: new Map() };
      methods.set(method, rm);
    }
    let cell = rm.statuses.get(status);
    if (cell === undefined) {
      cell = { labels: { route, method, status: String(status) }, count: 0, latency: rm.latency };
      rm.statuses.set(status, cell);
      requestCells.push(cell);
    }
    return cell;
  };

  // Callback-style hooks: an async hook costs every request a promise.
  app.addHook('onResponse', (req, reply, done) => {
    // Route patterns, never raw URLs: unknown paths share one label.
    const route = req.routeOptions.url ?? 'unmatched';
    if (route !== '/metrics') {
      const cell = cellOf(route, req.method, reply.statusCode);
      cell.count++;
      cell.latency.observe(reply.elapsedTime / 1000);
    }
    done();
  });
  app.addHook('onError', (_req, _reply, err: unknown, done) => {
    const code = err instanceof AppError ? err.code : null;
    if (code !== null && REFUSALS.has(code)) refusals.inc({ code: String(code) });
    done();
  });
  for (const code of REFUSALS) refusals.inc({ code: String(code) }, 0);

  // In a cluster worker, the primary sums every worker's metrics (cluster/worker-hub.ts): a
  // scrape through the shared port sees the instance, whichever worker answers it.
  const link = primaryLink();
  link?.provideMetrics(async () => [
    ...(await registry.getMetricsAsJSON()),
    ...(await processMetrics().getMetricsAsJSON()),
  ]);
  const own = async (): Promise<string> => (await registry.metrics()) + (await processMetrics().metrics());
  // A primary that does not answer (stopped, gone) must not hold the scrape: this worker's own.
  const text = async (): Promise<string> =>
    link
      ? await link
          .ask<string>({ mds: 'metrics' }, METRICS_WAIT_MS + PRIMARY_TIMEOUT_MS)
          .catch(
            async () => '# the cluster primary did not answer: this worker process only\n' + (await own()),
          )
      : await own();
  registerRoutes(app, [METRICS_ROUTE], { text, contentType: registry.contentType });
  return { registry, sseClients };
}
