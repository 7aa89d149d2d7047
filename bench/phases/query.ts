import { CFG, ONLY_ONE_WORKER, startBaseline, startService } from '../context.js';
import { buildMinimalSqlite } from '../minimal.js';
import { AUTH, REPEATED, medianMs, measureTogether, queryRow, randomPaths, type Load } from '../measure.js';
import { processTree, type Server } from '../proc.js';
import type { Row } from '../table.js';
import { log } from '../context.js';

/**
 * SQLite query phases: random pages against the naive route (Fastify + better-sqlite3 on the
 * minimal table), one polled URL against the ceiling (a pre-serialised page), deep pages.
 * The service runs with its default start-up settings (one worker per core) and, when the
 * machine has several cores, also as one process.
 */
export async function queryPhase(rows: Row[], file: string): Promise<void> {
  const minimal = buildMinimalSqlite(file, log);
  // More paths than any run makes requests, so no page repeats.
  const paths = randomPaths(400_000, 42);
  const warm = randomPaths(20_000, 4242);
  const servers: Server[] = [];
  try {
    const ceilingServer = await startBaseline('ceiling', minimal);
    servers.push(ceilingServer);
    const naiveServer = await startBaseline('naive', minimal);
    servers.push(naiveServer);
    const services: Server[] = [];
    // The defaults are one worker per core; beside them, one process (MDS_WORKERS=1).
    for (const workers of ONLY_ONE_WORKER ? [undefined] : [undefined, 1]) {
      const svc = await startService(file, workers);
      servers.push(svc);
      if (workers === undefined && !ONLY_ONE_WORKER && processTree(svc.pid).length < 2) {
        rows.push({ phase: 'random pages', server: `${svc.name}: MDS_WORKERS not supported`, rate: null });
      } else {
        services.push(svc);
      }
    }

    const [ceiling, naive, ...random] = await measureTogether([
      { server: ceilingServer, paths, warmPaths: warm },
      { server: naiveServer, paths, warmPaths: warm },
      ...services.map((server) => ({ server, paths, headers: AUTH, warmPaths: warm })),
    ]);
    rows.push(queryRow('random pages', 'HTTP ceiling (pre-serialised page)', ceiling!));
    rows.push(queryRow('random pages', 'naive (Fastify + better-sqlite3, minimal table)', naive!));
    for (const [i, svc] of services.entries()) {
      const m = random[i]!;
      rows.push(
        queryRow('random pages', svc.name, m, {
          ratio: m.load.rps / naive!.load.rps,
          vs: 'naive',
          goal: '≥ 2.0× naive, p99 ≤ naive',
          met: m.load.rps >= 2 * naive!.load.rps && m.load.p99 <= naive!.load.p99,
        }),
      );
      rows.push({
        phase: 'random pages (CPU per request)',
        server: svc.name,
        rate: null,
        cpuMs: m.cpuMs,
        ratio: naive!.cpuMs / m.cpuMs,
        vs: 'naive ÷ service',
        goal: 'informative: ≥ 2 = half the CPU of naive',
      });
    }
    for (const [i, svc] of services.entries()) {
      const m = random[i]!;
      rows.push({
        phase: 'memory under query load',
        rate: null,
        server: `${svc.name}: largest process ${m.largestMb.toFixed(0)} MB`,
        rssMb: m.rssMb,
        goal: 'RSS ≤ 250 MB per process',
        met: m.largestMb <= 250,
      });
    }

    // One URL polled: the ceiling beside the service, plain and with If-None-Match.
    const conditional: Load[] = [];
    for (const svc of services) {
      const first = await fetch(svc.url + REPEATED, { headers: AUTH });
      const etag = first.headers.get('etag');
      if (etag)
        conditional.push({ server: svc, paths: [REPEATED], headers: { ...AUTH, 'If-None-Match': etag } });
    }
    const [ceiling2, ...polled] = await measureTogether([
      { server: ceilingServer, paths: [REPEATED] },
      ...services.map((server) => ({ server, paths: [REPEATED], headers: AUTH })),
      ...conditional,
    ]);
    rows.push(queryRow('repeated URL', 'HTTP ceiling (pre-serialised page)', ceiling2!));
    for (const [i, svc] of services.entries()) {
      const m = polled[i]!;
      rows.push(
        queryRow('repeated URL', svc.name, m, {
          ratio: m.load.rps / ceiling2!.load.rps,
          vs: 'ceiling',
          goal: '≥ 0.6× ceiling',
          met: m.load.rps >= 0.6 * ceiling2!.load.rps,
        }),
      );
    }
    for (const [i, l] of conditional.entries()) {
      const m = polled[services.length + i]!;
      rows.push(
        queryRow('repeated URL, If-None-Match → 304', l.server.name, m, {
          ratio: m.load.rps / ceiling2!.load.rps,
          vs: 'ceiling',
        }),
      );
    }
    if (services[0]) await deepPages(rows, services[0]);
  } finally {
    for (const s of servers) await s.stop();
  }
}

async function deepPages(rows: Row[], svc: Server): Promise<void> {
  const base = '/api/v1/etf/kline?limit=100';
  await medianMs(svc, () => base, 1); // the first request counts the table once (cached per version)
  const shallow = await medianMs(svc, (i) => `${base}&offset=${i}`, CFG.deepRuns);
  const deep = await medianMs(svc, (i) => `${base}&offset=${CFG.deepOffset + i}`, CFG.deepRuns);
  const push = (server: string, ms: number, extra: Partial<Row> = {}): void => {
    rows.push({
      phase: 'deep page (unfiltered, sequential)',
      server,
      rate: 1000 / ms,
      unit: 'req/s',
      p50: ms,
      ...extra,
    });
  };
  push('service, offset 0', shallow.ms);
  push(`service, offset ${CFG.deepOffset.toLocaleString('en')}`, deep.ms, {
    ratio: deep.ms / shallow.ms,
    vs: 'time ÷ offset 0',
    goal: '< 10× offset 0 (or cursor)',
    met: deep.ms < 10 * shallow.ms,
  });
  const cursors = deep.bodies
    .map((b) => (b as { meta?: { next_cursor?: string | null } }).meta?.next_cursor)
    .filter((c): c is string => typeof c === 'string');
  if (cursors.length !== deep.bodies.length) return;
  const viaCursor = await medianMs(
    svc,
    (i) => `${base}&cursor=${encodeURIComponent(cursors[i] as string)}`,
    CFG.deepRuns,
  );
  push(`service, cursor at row ${(CFG.deepOffset + 100).toLocaleString('en')}`, viaCursor.ms, {
    ratio: viaCursor.ms / shallow.ms,
    vs: 'time ÷ offset 0',
    goal: '< 10× offset 0',
    met: viaCursor.ms < 10 * shallow.ms,
  });
}
