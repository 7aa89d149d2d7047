import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { code, ingestBatches } from './data.js';
import { runLoad } from './load.js';
import { ROOT, freePort, startServer, type Server } from './proc.js';

/**
 * Query requests/s of the service on SQLite and on PostgreSQL side by side: the same server
 * (`src/main.ts` via tsx, one process), the same 50,000 etf_daily rows pushed through the ingest
 * API, the same load (autocannon in its own process, 10 connections, distinct paths so the
 * response cache never answers).
 *
 *   npx tsx bench/pg-query.ts [seconds=8]
 *   (MDS_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 */

const ADMIN_URL = process.env.MDS_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const INGEST_KEY = 'bench-ingest-key-0123456789';
const QUERY_KEY = 'bench-query-key-0123456789';

async function serve(databaseUrl: string): Promise<Server> {
  const port = await freePort();
  return startServer(
    'service',
    ['--import', 'tsx', path.join(ROOT, 'src/main.ts')],
    {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      MDS_INGEST_KEYS: INGEST_KEY,
      MDS_QUERY_KEYS: QUERY_KEY,
      MDS_WORKERS: '1',
    },
    port,
    '/health',
  );
}

async function seed(url: string): Promise<void> {
  for (const b of ingestBatches('5', 5, 10_000)) {
    const r = await fetch(`${url}/api/v1/upstream/ingest/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
      body: b.body,
    });
    if (r.status !== 200) throw new Error(`seed push answered ${r.status}: ${await r.text()}`);
  }
}

/** Page queries of one code over a date range, all distinct. */
function paths(): string[] {
  const out: string[] = [];
  for (let day = 1; day <= 28; day++) {
    for (let i = 0; i < 200; i++) {
      out.push(
        `/api/v1/etf/kline?code=${code(i, '5')}&date_from=2016-02-${String(day).padStart(2, '0')}&limit=20`,
      );
    }
  }
  return out;
}

async function measure(name: string, databaseUrl: string, seconds: number): Promise<string> {
  const svc = await serve(databaseUrl);
  try {
    await seed(svc.url);
    const spec = { url: svc.url, headers: { 'q-api-key': QUERY_KEY }, connections: 10 };
    await runLoad({ ...spec, paths: paths().reverse(), durationSec: 2 }); // warm-up
    const r = await runLoad({ ...spec, paths: paths(), durationSec: seconds });
    return `  ${name.padEnd(10)} ${r.rps.toFixed(0).padStart(6)} requests/s  p50 ${r.p50} ms  p99 ${r.p99} ms  (2xx ${r.statuses['2xx']}, non-2xx ${r.requests - (r.statuses['2xx'] ?? 0)})`;
  } finally {
    await svc.stop();
  }
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 8);
  const lines: string[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-pgq-'));
  try {
    lines.push(await measure('SQLite', `sqlite:${path.join(dir, 'bench.db')}`, seconds));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const name = `mds_pgq_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  try {
    lines.push(await measure('PostgreSQL', url.toString(), seconds));
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
  console.log('Query /api/v1/etf/kline?code=…&date_from=…&limit=20, 50,000 rows, 10 connections, 1 process:');
  for (const l of lines) console.log(l);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
