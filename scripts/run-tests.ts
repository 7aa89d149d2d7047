// `npm run test:unit`: every test file under test/, several at a time, the longest started first
// so that none of them ends the run alone. Files given as arguments run instead of all.
// MDS_TEST_CONCURRENCY sets how many files run at once (default 4: docs/testing.md).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { compileTests, compiledPath } from './compile-tests.js';

/** The longest files (docs/testing.md, measured alone), longest first. */
const LONGEST = [
  'faults-via-pgbouncer-crash',
  'faults-crash-postgres',
  'faults-crash-sqlite',
  'faults-heavy-reads-postgres',
  'faults-heavy-reads-sqlite',
  'faults-via-pgbouncer',
  'faults-shutdown-postgres',
  'faults-shutdown-sqlite',
  'faults-exports-postgres',
  'faults-exports-sqlite',
  'revisions-faults-postgres',
  'revisions-faults-sqlite',
  'faults-concurrency-postgres',
  'faults-concurrency-sqlite',
  'disk-full-postgres',
  'disk-full-sqlite',
  // Long in wall time, not in CPU (they wait for replicas, timeouts, streams): started early, they run
  // beside the others rather than alone at the end (docs/testing.md).
  'postgres-replicas',
  'postgres-failover',
  'changes-feed',
  'exports-under-ingest',
  'writer-frozen',
  'mcp-isolation',
  'mirror',
  'postgres-query-bounds',
  'postgres-resilience',
  'events-stream',
  'query-encoding',
  // The other folders' files of 60 s or more, each alone on a loaded machine (docs/testing.md).
  'columnar-formats',
  'push-cli',
  'bars-periods',
  'openapi-contract',
  'mcp-outside',
  'seed-demo',
  'knowledge-time',
  'query-row-json',
  'cluster-workers',
  'python-client',
  'mcp-clients',
  'mcp-concurrency',
  'query-features',
  'limits-rate',
  'limits-redis',
  'mcp-minute',
  'messy-sources',
  'bars-adjust',
  'openapi-generated-client',
  'docs-mcp',
  'export-cli',
  'ingest',
  'minute-bars',
  'query',
  'dashboard-e2e',
];

const rank = (file: string): number => {
  const i = LONGEST.indexOf(path.basename(file, '.test.ts'));
  return i < 0 ? LONGEST.length : i;
};

const given = process.argv.slice(2);
const files =
  given.length > 0
    ? given
    : fs
        .readdirSync('test', { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => path.join('test', f))
        .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));

// Four: on two cores a file that waits (a replica, a timeout, Python) leaves a core idle with three.
const concurrency = Number(process.env.MDS_TEST_CONCURRENCY ?? 4);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  throw new Error(`MDS_TEST_CONCURRENCY must be a positive integer, not ${process.env.MDS_TEST_CONCURRENCY}`);
}
// MDS_TEST_CPU_REPORT=<file>: each file's CPU and the shared servers' at the end (scripts/test-cpu.ts).
const cpuReport = process.env.MDS_TEST_CPU_REPORT;
if (cpuReport !== undefined) fs.writeFileSync(cpuReport, '');
const sampler =
  cpuReport === undefined ? null : await (await import('./test-cpu.js')).startCpuSampler(cpuReport);
const preload =
  cpuReport === undefined ? [] : ['--import', path.join(import.meta.dirname, 'file-cpu-preload.mjs')];
// One PostgreSQL database migrated for the whole run, cloned by every test that would migrate a
// fresh one at once (test/helpers/postgres.ts): about 1 s of CPU less per database.
// MDS_TEST_PG_TEMPLATE=none: every database fresh and migrated by its test, as when a file runs alone.
const template =
  process.env.MDS_TEST_PG_TEMPLATE === 'none'
    ? null
    : await (await import('../test/helpers/postgres.js')).createMigratedTemplate();
// In-process apps start their ingest and export threads from the bundle rather than through tsx
// (src/worker-threads.ts, MDS_THREADS_FROM_DIST), and the tests' servers and CLIs are the bundle's
// (test/helpers/built.ts). So dist/ must be what src/ says: `npm test` has just emitted it; run
// alone, the runner emits it if stale.
const { staleSource } = await import('../test/helpers/dist-fresh.js');
if (staleSource() !== null) {
  const emit = spawnSync('npm', ['run', '-s', 'build:emit'], { stdio: 'inherit' });
  if (emit.status !== 0 || staleSource() !== null)
    throw new Error('dist/ could not be built: npm run build:emit');
}
// The test files run bundled (scripts/compile-tests.ts): plain JavaScript, bundled at the start
// of every run, each file's process without tsx's loader (about 0.7 s of CPU less a file) and
// with one module per test rather than a few hundred (about 0.25 s less: docs/testing.md).
// MDS_TEST_COMPILED=0: the sources under tsx, as one file run by hand.
const compiled = process.env.MDS_TEST_COMPILED !== '0';
if (compiled) await compileTests();
const child = compiled
  ? // Stack traces name the .ts lines (the tree's source maps). A file given that is not
    // TypeScript (a .mjs) runs as it is.
    [
      '--enable-source-maps',
      compiledPath('scripts/run-test-files.ts'),
      ...files.map((f) => (f.endsWith('.ts') ? compiledPath(f) : f)),
    ]
  : ['--import', 'tsx', path.join(import.meta.dirname, 'run-test-files.ts'), ...files];
const run = spawn(
  process.execPath,
  // run-test-files.ts runs them in this order (node --test would sort them by name), with the
  // usual reporter and the run's longest files (file-times-reporter.mjs).
  [...preload, ...child],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      MDS_TEST_CONCURRENCY: String(concurrency),
      MDS_TEST_PG_TEMPLATE: template?.name ?? '',
      MDS_THREADS_FROM_DIST: process.env.MDS_THREADS_FROM_DIST ?? '1',
    },
  },
);
const status = await new Promise<number | null>((resolve) => run.once('exit', resolve));
await template?.drop();
await sampler?.finish();
process.exit(status ?? 1);
