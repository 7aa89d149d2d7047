/** One line of the bench's table. */
export interface Row {
  phase: string;
  server: string;
  /** Requests or records per second; null for a note. */
  rate: number | null;
  unit?: 'req/s' | 'rec/s';
  p50?: number;
  p99?: number;
  rssMb?: number;
  /** Server CPU time per request (all its processes), ms. */
  cpuMs?: number;
  /** The load generator's CPU, in cores. */
  genCpu?: number;
  /** The load generator, not the server, was the limit of this figure. */
  genBound?: boolean;
  /** The figure divided by the `vs` baseline of the same run. */
  ratio?: number;
  vs?: string;
  goal?: string;
  met?: boolean;
}

export interface RunInfo {
  mode: string;
  rows: number;
  durationSec: number;
  connections: number;
  cpus: number;
  node: string;
  loadGenerator: string;
}

const fmt = (n: number | undefined, digits = 0): string =>
  n === undefined
    ? ''
    : n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Prints the table as Markdown (so it can be pasted into docs/performance.md as is). */
export function printTable(rows: readonly Row[], info: RunInfo): void {
  const out: string[] = [];
  out.push(
    `mode ${info.mode}; ${info.rows.toLocaleString('en')} etf_daily rows; ${info.durationSec} s loads, ` +
      `${info.connections} connections; ${info.cpus} CPUs; node ${info.node}; ${info.loadGenerator}; ` +
      new Date().toISOString(),
    '',
  );
  const head = [
    'phase',
    'server',
    'rate',
    'p50 ms',
    'p99 ms',
    'CPU ms/req',
    'peak RSS MB',
    'load gen cores',
    'ratio',
    'goal',
    'met',
  ];
  out.push(`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`);
  for (const r of rows) {
    out.push(
      '| ' +
        [
          r.phase,
          r.server,
          r.rate === null ? '' : `${fmt(r.rate)} ${r.unit ?? ''}`,
          r.p50 === undefined ? '' : fmt(r.p50, r.p50 < 10 ? 2 : 1),
          r.p99 === undefined ? '' : fmt(r.p99, r.p99 < 10 ? 2 : 1),
          r.cpuMs === undefined ? '' : fmt(r.cpuMs, 3),
          fmt(r.rssMb),
          r.genCpu === undefined ? '' : `${fmt(r.genCpu, 2)}${r.genBound ? ' **(generator-bound)**' : ''}`,
          r.ratio === undefined ? '' : `${fmt(r.ratio, 2)}× ${r.vs ?? ''}`,
          r.goal ?? '',
          r.met === undefined ? '' : r.met ? 'yes' : '**no**',
        ].join(' | ') +
        ' |',
    );
  }
  process.stdout.write(out.join('\n') + '\n');
}
