import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { CATALOG } from '../src/catalog/catalog.js';
import { PostgresStore } from '../src/storage/postgres/postgres-store.js';
import { BASELINE_STAMP, ETF_COLUMNS, ETF_DAILY, code, codeRows, tradingDays } from './data.js';
import { ROW_JSON_COLUMN, rowJson } from '../src/model/row-json.js';
import { copyValue } from '../src/storage/postgres/copy-text.js';
import { CFG, log } from './context.js';

/**
 * The query data set on PostgreSQL: `codes` × `days` etf_daily rows in a database of their own
 * (`mds_bench_etf3_<codes>x<days>`; 2: rows carry their stored JSON; 3: and their revision stamp), built through the store's migrate() and COPY, and kept for
 * the next run (BENCH_REBUILD=1 rebuilds it). Returns its URL.
 */
export async function buildPgQueryDatabase(
  adminUrl: string,
  codes: number,
  days: number,
  rebuild: boolean,
  log: (s: string) => void,
): Promise<string> {
  const name = `mds_bench_etf3_${codes}x${days}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (exists && !rebuild) {
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      const done = await c.query("SELECT to_regclass('bench_complete') IS NOT NULL AS ok");
      await c.end();
      if ((done.rows[0] as { ok: boolean }).ok) {
        log(`PostgreSQL query data: reusing database ${name}; migrating it to this release's schema`);
        const kept = new PostgresStore(CATALOG, { connectionString: url.toString() });
        await kept.migrate();
        await kept.close();
        return url.toString();
      }
    }
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const t0 = Date.now();
  const store = new PostgresStore(CATALOG, { connectionString: url.toString() });
  await store.migrate();
  await store.close();
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  try {
    // Secondary indexes are dropped for the load and rebuilt by migrate() afterwards.
    const ix = await c.query(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'etf_daily' AND indexname LIKE 'ix_%'",
    );
    for (const r of ix.rows as { indexname: string }[]) await c.query(`DROP INDEX "${r.indexname}"`);
    const dayList = tradingDays(days);
    const now = '2026-01-01T00:00:00Z';
    const json = rowJson(ETF_DAILY);
    function* lines(): Generator<string> {
      for (let i = 0; i < codes; i++) {
        let buf = '';
        for (const r of codeRows(code(i), dayList, i + 1))
          buf +=
            [...ETF_COLUMNS.map((k) => r[k]), json(r), now, ...BASELINE_STAMP.values]
              .map(copyValue)
              .join('\t') + '\n';
        yield buf;
        if ((i + 1) % 300 === 0) log(`PostgreSQL query data: ${(i + 1) * days} rows`);
      }
    }
    const cols = [...ETF_COLUMNS, ROW_JSON_COLUMN, 'created_at', ...BASELINE_STAMP.columns]
      .map((k) => `"${k}"`)
      .join(', ');
    await pipeline(Readable.from(lines()), c.query(copyFrom(`COPY etf_daily (${cols}) FROM STDIN`)));
  } finally {
    await c.end();
  }
  const again = new PostgresStore(CATALOG, { connectionString: url.toString() });
  await again.migrate();
  await again.close();
  const f = new pg.Client({ connectionString: url.toString() });
  await f.connect();
  await f.query('VACUUM ANALYZE etf_daily');
  await f.query('CREATE TABLE bench_complete (at timestamptz)');
  await f.end();
  log(`PostgreSQL query data: built ${codes * days} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return url.toString();
}

/** The run's PostgreSQL query data set (CFG's size; BENCH_REBUILD=1 rebuilds it): its URL. */
export function benchPgDatabase(adminUrl: string): Promise<string> {
  return buildPgQueryDatabase(adminUrl, CFG.codes, CFG.days, process.env.BENCH_REBUILD === '1', log);
}
