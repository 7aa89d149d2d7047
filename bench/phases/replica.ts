import { CFG, INGEST_KEY, log, startService } from '../context.js';
import { ingestBatches } from '../data.js';
import { pushBatches } from '../ingest.js';
import { AUTH, measure, queryRow, randomPaths } from '../measure.js';
import { buildPgQueryDatabase } from '../pg-query-data.js';
import fs from 'node:fs';
import { processTree, type Server } from '../proc.js';
import type { Row } from '../table.js';
import {
  privatePostgres,
  privatePostgresAvailable,
  privateStandby,
  type PrivateServer,
} from '../../test/helpers/private-servers.js';
import { viaPort } from '../../test/helpers/postgres.js';

/**
 * PostgreSQL with a streaming replica (issue 28), on private clusters of this machine (a primary
 * and a `pg_basebackup -R` hot standby): random pages served by the primary alone against the
 * same service reading from the replica (rate, p99, and each database's CPU per request), then
 * the replica's lag, as the service measures it (/metrics), while 10k-record batches are pushed
 * back to back. On one machine the replica competes with the primary for the same cores: the
 * figures say what the routing costs and where the work goes, not what a second machine adds.
 */
export async function replicaPhase(rows: Row[]): Promise<void> {
  if (!privatePostgresAvailable()) {
    rows.push({ phase: 'PostgreSQL replica', server: 'skipped: initdb / postgres not found', rate: null });
    return;
  }
  const primary = await privatePostgres();
  let standby: PrivateServer | null = null;
  try {
    const url = await buildPgQueryDatabase(primary.url, CFG.codes, CFG.days, true, log);
    standby = await privateStandby(primary);
    const replicaUrl = viaPort(url, standby.port);
    const paths = randomPaths(400_000, 4343);
    const phase = 'PostgreSQL random pages, replica';
    const dbCpu = async (svc: Server): Promise<{ m: Awaited<ReturnType<typeof measure>>; label: string }> => {
      const p0 = serverCpu(primary.pid);
      const s0 = serverCpu(standby?.pid);
      const m = await measure(svc, paths, AUTH, randomPaths(20_000, 434343));
      const per = (s: number): string => ((s * 1000) / Math.max(1, m.load.requests)).toFixed(3);
      const label = `database CPU ms/req: primary ${per(serverCpu(primary.pid) - p0)}, replica ${per(serverCpu(standby?.pid) - s0)}`;
      log(`${svc.name}: ${label}`);
      return { m, label };
    };
    const alone = await startService(url, undefined);
    let aloneRps = 0;
    try {
      const { m, label } = await dbCpu(alone);
      aloneRps = m.load.rps;
      rows.push(queryRow(phase, `primary only; ${label}`, m));
    } finally {
      await alone.stop();
    }
    // Checks every 100 ms: the lag figure below is resolved to about that.
    const routed = await startService(url, undefined, {
      DATABASE_READ_URLS: replicaUrl,
      MDS_REPLICA_CHECK_MS: '100',
    });
    try {
      const { m, label } = await dbCpu(routed);
      rows.push(
        queryRow(phase, `primary + replica (DATABASE_READ_URLS); ${label}`, m, {
          ratio: m.load.rps / aloneRps,
          vs: 'primary only',
        }),
      );
      await lagDuringBatches(rows, routed);
    } finally {
      await routed.stop();
    }
  } finally {
    await standby?.remove();
    await primary.remove();
  }
}

/**
 * CPU seconds of a PostgreSQL server so far: every live process of it, plus what the postmaster's
 * exited children (backends of closed connections) used, which it has reaped (cutime, cstime).
 */
function serverCpu(root: number | undefined): number {
  if (root === undefined) return 0;
  let ticks = 0;
  for (const p of processTree(root)) {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime, stime (fields 14, 15); for the postmaster also cutime, cstime (16, 17).
      ticks += Number(f[11]) + Number(f[12]) + (p === root ? Number(f[13]) + Number(f[14]) : 0);
    } catch {
      // ended
    }
  }
  return ticks / 100;
}

/** The replica's lag (the service's own figure, /metrics) sampled while batches are pushed. */
async function lagDuringBatches(rows: Row[], svc: Server): Promise<void> {
  const batches = ingestBatches('7', CFG.batches, 10_000);
  const samples: number[] = [];
  let pushing = true;
  const sampler = (async () => {
    while (pushing) {
      const text = await (await fetch(`${svc.url}/metrics`)).text();
      const m = /^mds_pg_replica_lag_seconds\{replica="replica0"\} (\S+)$/m.exec(text);
      if (m) samples.push(Number(m[1]) * 1000);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  let rate: number;
  try {
    rate = await pushBatches(svc.url, INGEST_KEY, batches);
  } finally {
    pushing = false;
    await sampler;
  }
  samples.sort((a, b) => a - b);
  const at = (q: number): string => (samples[Math.floor(q * (samples.length - 1))] ?? NaN).toFixed(0);
  const summary = `replica lag ms (±100, the check interval) over ${samples.length} samples: median ${at(0.5)}, p99 ${at(0.99)}, max ${at(1)}`;
  log(`${batches.length} batches of 10k back to back: ${rate.toFixed(0)} rec/s; ${summary}`);
  rows.push({
    phase: 'PostgreSQL replica lag, back-to-back 10k batches',
    server: `${svc.name}; ${summary}`,
    rate,
    unit: 'rec/s',
  });
}
