import fs from 'node:fs';
import autocannon from 'autocannon';

import type { LoadResult, LoadSpec } from './load.js';

/**
 * The fallback load generator (when wrk cannot be had), run as its own process so it never
 * shares an event loop with a server. Input: a JSON file {url, paths, headers, connections,
 * durationSec}; requests take the paths in order. Output: one JSON line (LoadResult).
 */

const spec = JSON.parse(fs.readFileSync(process.argv[2] as string, 'utf8')) as LoadSpec;
const paths = spec.paths;
let next = 0;
// In order, so no path repeats within a run while the list is longer than the run's requests
// (a repeat could be answered by the service's response cache and flatter it).
const pick = (): string => paths[next++ % paths.length] as string;

const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.durationSec,
  headers: spec.headers,
  requests: [
    {
      method: 'GET',
      setupRequest: (req) => ({ ...req, path: paths.length === 1 ? (paths[0] as string) : pick() }),
    },
  ],
});

const out: Omit<LoadResult, 'generator' | 'generatorCpu'> = {
  rps: result.requests.total / spec.durationSec,
  p50: result.latency.p50,
  p99: result.latency.p99,
  requests: result.requests.total,
  statuses: { '2xx': result['2xx'], '3xx': result['3xx'], '4xx': result['4xx'], '5xx': result['5xx'] },
  errors: result.errors + result.timeouts,
};
process.stdout.write(JSON.stringify(out) + '\n');
