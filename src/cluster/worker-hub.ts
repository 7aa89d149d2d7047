import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { MemoryLimiter } from '../access/memory-limiter.js';
import {
  METRICS_WAIT_MS,
  isMdsMessage,
  type LimitItem,
  type LimitTally,
  type ToPrimary,
  type ToWorker,
} from './messages.js';
import { PRIMARY_TIMEOUT_MS } from './primary-link.js';
import { InstanceLimits } from './instance-limits.js';

/**
 * A limit question older than this, by the time it is read, is not acted on: its worker gives up
 * after PRIMARY_TIMEOUT_MS and counts alone what it asked about (and reports it later), so
 * counting it here too would count it twice. The margin leaves the answer time to arrive.
 */
const STALE_MS = PRIMARY_TIMEOUT_MS - 100;

type Metrics = MetricObjectWithValues<MetricValue<string>>[];

/**
 * The cluster primary's part in what its workers share without Redis: one set of rate-limit
 * counters (so a key's budget is the instance's, not each worker's), batch events passed to
 * every worker (an event stream on any worker sees batches processed on all), and `/metrics`
 * summed over the workers. Also which workers serve: `onReady` when one says so. JavaScript runs one message at a time, so check-and-count stays atomic.
 * With `redisUrl`, the counters are Redis's and the supervisor decides only while Redis is
 * unreachable, for the whole instance, and hands that count over when it is back
 * (instance-limits.ts).
 */
export function serveWorkers(opts: { onReady?: () => void; redisUrl?: string } = {}): {
  serving(): number;
} {
  const counters = new MemoryLimiter();
  const limits = opts.redisUrl
    ? new InstanceLimits({
        url: opts.redisUrl,
        onMode: (mode) => {
          console.error(
            mode === 'instance'
              ? 'rate-limit counters: Redis unreachable; the supervisor decides for every worker until it is back'
              : "rate-limit counters: the supervisor's count handed over to Redis; workers use Redis again",
          );
          for (const w of workers()) send(w, { mds: 'limits-mode', mode });
        },
      })
    : null;
  /** Workers that said they serve (database ready, listening), by cluster id. */
  const serving = new Set<number>();
  cluster.on('exit', (w: Worker) => serving.delete(w.id));
  let nextGather = 0;
  const gathers = new Map<number, { parts: Metrics[]; waiting: number; done(): void }>();

  const send = (w: Worker, m: ToWorker): void => {
    if (w.isConnected()) w.send(m);
  };
  const workers = (): Worker[] => Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);

  const gather = async (): Promise<string> => {
    const id = nextGather++;
    const live = workers().filter((w) => w.isConnected());
    const parts: Metrics[] = [];
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, METRICS_WAIT_MS);
      gathers.set(id, {
        parts,
        waiting: live.length,
        done: () => {
          clearTimeout(timer);
          resolve();
        },
      });
      for (const w of live) send(w, { mds: 'metrics-collect', id });
      if (live.length === 0) resolve();
    });
    gathers.delete(id);
    const text = await AggregatorRegistry.aggregate(parts).metrics();
    return (
      text +
      '# HELP mds_cluster_workers_serving Worker processes of this instance that serve requests\n' +
      `# TYPE mds_cluster_workers_serving gauge\nmds_cluster_workers_serving ${serving.size}\n`
    );
  };

  /**
   * What a worker served alone is added first, then the counts are raised to what it knows
   * (which includes those requests, so raising first would count them twice).
   */
  const merge = ([id, , , dayFloor, minuteFloor, dayAdded, minuteAdded]: LimitItem): void => {
    if (dayAdded > 0 || minuteAdded > 0) counters.add(id, minuteAdded, dayAdded);
    counters.observe(id, minuteFloor, dayFloor);
  };

  cluster.on('message', (worker: Worker, m: unknown) => {
    if (!isMdsMessage<ToPrimary>(m)) return;
    switch (m.mds) {
      case 'limit': {
        if (Date.now() - m.at > STALE_MS) {
          send(worker, { mds: 'reply', id: m.id, error: 'stale' });
          break;
        }
        if (limits) {
          void limits.limit(m.items).then((body) => send(worker, { mds: 'reply', id: m.id, body }));
          break;
        }
        const body: LimitTally[] = m.items.map((item) => {
          merge(item);
          const [id, ratePerMinute, dailyQuota] = item;
          return counters.tally(id, { ratePerMinute, dailyQuota });
        });
        send(worker, { mds: 'reply', id: m.id, body });
        break;
      }
      case 'ping':
        send(worker, { mds: 'reply', id: m.id });
        break;
      case 'peek':
        if (limits) {
          send(worker, { mds: 'reply', id: m.id, body: [...limits.peek(m.ids)] });
          break;
        }
        void counters
          .peek(m.ids)
          .then((counts) => send(worker, { mds: 'reply', id: m.id, body: [...counts] }));
        break;
      case 'event':
        for (const w of workers()) send(w, m);
        break;
      case 'metrics':
        gather().then(
          (text) => send(worker, { mds: 'reply', id: m.id, body: text }),
          (err: unknown) => send(worker, { mds: 'reply', id: m.id, error: String(err) }),
        );
        break;
      case 'ready':
        // A worker forked during an outage learns who decides before its first request.
        if (limits) send(worker, { mds: 'limits-mode', mode: limits.current });
        serving.add(worker.id);
        opts.onReady?.();
        break;
      case 'metrics-part': {
        const g = gathers.get(m.id);
        if (!g) break;
        g.parts.push(m.metrics as Metrics);
        if (--g.waiting === 0) g.done();
        break;
      }
    }
  });
  return { serving: () => serving.size };
}
