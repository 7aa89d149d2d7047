import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { MemoryLimiter } from '../access/memory-limiter.js';
import { isMdsMessage, type LimitTally, type ToPrimary, type ToWorker } from './messages.js';

/** How long the primary waits for every worker's metrics before answering with those it has. */
const METRICS_WAIT_MS = 2000;

type Metrics = MetricObjectWithValues<MetricValue<string>>[];

/**
 * The cluster primary's part in what its workers share without Redis: one set of rate-limit
 * counters (so a key's budget is the instance's, not each worker's), batch events passed to
 * every worker (an event stream on any worker sees batches processed on all), and `/metrics`
 * summed over the workers. Also which workers serve: `onReady` when one says so. JavaScript runs one message at a time, so check-and-count stays atomic.
 */
export function serveWorkers(opts: { onReady?: () => void } = {}): { serving(): number } {
  const counters = new MemoryLimiter();
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

  cluster.on('message', (worker: Worker, m: unknown) => {
    if (!isMdsMessage<ToPrimary>(m)) return;
    switch (m.mds) {
      case 'limit': {
        const body: LimitTally[] = m.items.map(([id, ratePerMinute, dailyQuota, dayFloor]) => {
          if (dayFloor > 0) counters.observe(id, 0, dayFloor);
          return counters.tally(id, { ratePerMinute, dailyQuota });
        });
        send(worker, { mds: 'reply', id: m.id, body });
        break;
      }
      case 'peek':
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
