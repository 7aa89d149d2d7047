import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { INGEST_KEY, log, startService } from './context.js';
import { ingestBatches, shapeBatches, type IngestShape } from './data.js';
import { pushBatches, stepProfile } from './ingest.js';
import { cpuSeconds, rssMeter } from './proc.js';

/**
 * SQLite ingest of several builds of the service at their default start-up (a cluster of one
 * worker per core), in alternating rounds, each on a fresh file: `count` batches of a shape
 * pushed `inFlight` at a time, as `mds push` sends them (issue 31, rounds seven and eight). On a
 * shared machine only builds measured side by side can be compared.
 *
 *   npx tsx bench/writer-ab.ts <rounds> <shape> <count> <inFlight> <name>:<path/to/main.js>[@<workers>] …
 *   e.g. npx tsx bench/writer-ab.ts 3 daily 20 2 before:../before/dist/main.js after:dist/main.js
 *
 * Per run: records/s, the service's CPU per record (every process of it: the workers, their
 * threads, a writer process), the stored-periods step per record (mds_batch_step_seconds) and
 * the peak RSS of all its processes. Shape `big`: `count` batches of 100,000 records.
 * A build given as `<name>:<main.js>@<n>` runs with MDS_WORKERS=n.
 */
const [roundsArg, shapeArg, countArg, inFlightArg, ...builds] = process.argv.slice(2);
const rounds = Number(roundsArg);
const count = Number(countArg);
const inFlight = Number(inFlightArg);
const shape = shapeArg as IngestShape | 'big';
if (
  !(rounds > 0) ||
  !(count > 0) ||
  !(inFlight > 0) ||
  !['daily', 'backfill', 'big'].includes(shape) ||
  !builds.length
) {
  throw new Error(
    'usage: npx tsx bench/writer-ab.ts <rounds> <daily|backfill|big> <count> <inFlight> <name>:<main.js> …',
  );
}
// `<name>:<main.js>@<n>`: that build with MDS_WORKERS=n (else the start-up default).
const variants = builds.map((b) => {
  const [name, rest] = b.split(/:(.*)/s);
  const [main, workers] = (rest ?? '').split('@');
  if (!name || !main) throw new Error(`not <name>:<main.js>[@<workers>]: ${b}`);
  return { name, main: path.resolve(main), workers: workers ? Number(workers) : undefined };
});
// `big`: 100,000-record batches, as the ingest phase's one large batch.
const batches = shape === 'big' ? ingestBatches('8', count, 100_000) : shapeBatches(shape, '7', count);
const records = batches.reduce((n, b) => n + b.rows.length, 0);
const periodsUs = (before: Map<string, number> | null, after: Map<string, number> | null): string => {
  const s = (after?.get('periods') ?? NaN) - (before?.get('periods') ?? 0);
  return ((s * 1e6) / records).toFixed(1);
};

console.log(`build\tround\trec/s\tCPU µs/record\tperiods µs/record\tpeak RSS MB\tload average`);
for (let round = 0; round < rounds; round++) {
  for (const v of variants) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-writer-ab-'));
    try {
      const svc = await startService(path.join(dir, 'service.db'), v.workers, {}, v.main);
      try {
        const before = await stepProfile(svc.url);
        const meter = rssMeter(svc.pid);
        const cpu0 = cpuSeconds(svc.pid);
        const rate = await pushBatches(svc.url, INGEST_KEY, batches, inFlight);
        const cpuUs = ((cpuSeconds(svc.pid) - cpu0) * 1e6) / records;
        const rss = meter.stop();
        const load = os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ');
        const line = `${v.name}\t${round}\t${rate.toFixed(0)}\t${cpuUs.toFixed(1)}\t${periodsUs(before, await stepProfile(svc.url))}\t${rss.toFixed(0)}\t${load}`;
        console.log(line);
        log(line);
      } finally {
        await svc.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}
