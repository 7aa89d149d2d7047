import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { rng, tradingDays } from './data.js';
import { freshPgDatabase, sqliteFileBytes, sqliteTableSizes } from './minimal.js';

/**
 * A whole A-share history through `mds push` (issue 31): stock_daily CSV files of CODES codes ×
 * DAYS weekdays from 2005-01-03 (a seeded random walk, every field filled, `updated_at` given),
 * FILE_CODES codes a file, written once under DIR; then the built service (`node dist/bundle/main.js`,
 * default start-up) on a fresh database and one `mds push` per file, one after another, each
 * at its defaults (10,000-record batches, two in flight). Prints each file's progress, the total
 * time and the database's size. Run `npm run build` first.
 *
 *   npx tsx bench/history-load.ts <sqlite|postgres> [codes=5000] [days=5000] [file_codes=25]
 *   BENCH_HISTORY_DIR (default $TMPDIR/mds-history), BENCH_HISTORY_PG (PostgreSQL admin URL,
 *   default postgres://postgres@127.0.0.1:5432/postgres; the database mds_history is made anew)
 */
const backend = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
const CODES = Number(process.argv[3] ?? 5000);
const DAYS = Number(process.argv[4] ?? 5000);
const FILE_CODES = Number(process.argv[5] ?? 25);
const DIR = process.env.BENCH_HISTORY_DIR ?? path.join(os.tmpdir(), 'mds-history');
const PG_ADMIN = process.env.BENCH_HISTORY_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const KEY = 'history-load-ingest-key-0123456789';
const PORT = 18_000 + (process.pid % 1000);

const COLUMNS =
  'symbol,date,open,high,low,close,pre_close,change,pct_chg,volume,amount,turnover_rate,pe_ttm,pb,total_mv,circ_mv,is_suspended,source,updated_at';

const r2 = (x: number): string => (Math.round(x * 100) / 100).toString();

/** One code's lines: a random walk of its close, the other fields consistent with it. */
function codeLines(symbol: string, days: readonly string[], seed: number): string {
  const rand = rng(seed);
  const shares = 1e8 + Math.floor(rand() * 1e10);
  let close = 2 + rand() * 50;
  let out = '';
  for (const date of days) {
    const pre = close;
    close = Math.max(0.5, pre * (1 + (rand() - 0.5) * 0.04));
    const open = pre * (1 + (rand() - 0.5) * 0.01);
    const volume = Math.floor(rand() * 1e7);
    const mv = close * shares;
    out +=
      `${symbol},${date},${r2(open)},${r2(Math.max(open, close) * (1 + rand() * 0.01))},` +
      `${r2(Math.min(open, close) * (1 - rand() * 0.01))},${r2(close)},${r2(pre)},${r2(close - pre)},` +
      `${r2(((close - pre) / pre) * 100)},${volume},${r2(volume * close)},${r2(rand() * 5)},` +
      `${r2(10 + rand() * 30)},${r2(1 + rand() * 5)},${r2(mv)},${r2(mv * 0.8)},0,history,2025-01-01T00:00:00Z\n`;
  }
  return out;
}

/** The CSV files, written once (a marker file says they are complete). */
function generate(): string[] {
  const files = Array.from({ length: Math.ceil(CODES / FILE_CODES) }, (_, f) =>
    path.join(DIR, `stock_daily_${String(f).padStart(4, '0')}.csv`),
  );
  const done = path.join(DIR, `complete-${CODES}x${DAYS}x${FILE_CODES}`);
  if (fs.existsSync(done)) return files;
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const days = tradingDays(DAYS, '2005-01-03');
  const t0 = performance.now();
  files.forEach((file, f) => {
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, `${COLUMNS}\n`);
    for (let i = f * FILE_CODES; i < Math.min(CODES, (f + 1) * FILE_CODES); i++) {
      // Six-digit codes as A-shares have; ascending, so each file follows the one before.
      fs.writeSync(fd, codeLines(String(600000 + i), days, 7919 * (i + 1)));
    }
    fs.closeSync(fd);
  });
  fs.writeFileSync(done, new Date().toISOString());
  const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
  console.log(
    `generated ${files.length} files, ${(bytes / 1e9).toFixed(2)} GB, in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  return files;
}

async function databaseUrl(): Promise<string> {
  if (backend === 'sqlite') {
    const file = path.join(DIR, 'history.db');
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    return `sqlite:${file}`;
  }
  return freshPgDatabase(PG_ADMIN, 'mds_history');
}

async function waitHealthy(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${PORT}/health`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('the service did not become healthy in 300 s');
}

async function size(url: string): Promise<void> {
  if (backend === 'sqlite') {
    const file = url.slice('sqlite:'.length);
    const bytes = sqliteFileBytes(file);
    console.log(
      `database: ${(bytes / 1e9).toFixed(2)} GB (${(bytes / (CODES * DAYS)).toFixed(0)} bytes a row)`,
    );
    for (const t of sqliteTableSizes(file).slice(0, 6))
      console.log(`  ${t.name}: ${(t.bytes / 1e9).toFixed(2)} GB`);
    return;
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('VACUUM');
  const r = await c.query('SELECT pg_database_size(current_database())::bigint AS n');
  const bytes = Number((r.rows[0] as { n: string }).n);
  console.log(
    `database: ${(bytes / 1e9).toFixed(2)} GB (${(bytes / (CODES * DAYS)).toFixed(0)} bytes a row)`,
  );
  const t = await c.query(
    `SELECT relname AS name, pg_total_relation_size(oid)::bigint AS bytes FROM pg_class
     WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY 2 DESC LIMIT 6`,
  );
  for (const x of t.rows as { name: string; bytes: string }[])
    console.log(`  ${x.name}: ${(Number(x.bytes) / 1e9).toFixed(2)} GB`);
  await c.end();
}

const files = generate();
const url = await databaseUrl();
const server = spawn(process.execPath, [path.join(ROOT, 'dist', 'bundle', 'main.js')], {
  env: {
    ...process.env,
    PORT: String(PORT),
    HOST: '127.0.0.1',
    DATABASE_URL: url,
    MDS_INGEST_KEYS: KEY,
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
try {
  await waitHealthy();
  console.log(
    `${backend}: ${files.length} files of ${FILE_CODES} codes × ${DAYS} days; load ${os.loadavg()[0]?.toFixed(1)}`,
  );
  const t0 = performance.now();
  let rows = 0;
  for (const [i, file] of files.entries()) {
    const push = spawnSync(
      process.execPath,
      [
        path.join(ROOT, 'dist', 'bundle', 'cli', 'main.js'),
        'push',
        '--dataset',
        'stock_daily',
        file,
        '--url',
        `http://127.0.0.1:${PORT}`,
      ],
      { env: { ...process.env, MDS_PUSH_KEY: KEY }, encoding: 'utf8', maxBuffer: 1 << 26, input: '' },
    );
    if (push.status !== 0)
      throw new Error(`push of ${file} exited ${push.status}: ${push.stderr.slice(-2000)}`);
    rows += Math.min(FILE_CODES, CODES - i * FILE_CODES) * DAYS;
    const s = (performance.now() - t0) / 1000;
    console.log(
      `[${i + 1}/${files.length}] ${rows} rows in ${s.toFixed(0)} s: ${(rows / s).toFixed(0)} rows/s; load ${os.loadavg()[0]?.toFixed(1)}`,
    );
  }
  const s = (performance.now() - t0) / 1000;
  console.log(
    `total: ${rows} rows in ${s.toFixed(0)} s (${(s / 60).toFixed(1)} min), ${(rows / s).toFixed(0)} rows/s`,
  );
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
}
await size(url);
