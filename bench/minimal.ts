import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { ETF_COLUMNS, ETF_DAILY, type IngestBatch } from './data.js';

/**
 * The references' table: etf_daily's fields (and created_at, which rows carry) with the unique
 * key as primary key and nothing else — no secondary index, no stored row JSON. The service's
 * extra indexes and columns are its own cost, so the naive route and the raw ingest ceilings
 * read and write this table, not the service's.
 */
export const MIN_COLUMNS = [...ETF_COLUMNS, 'created_at'] as const;
const KEY = ['symbol', 'date', 'source'];

const q = (c: string): string => `"${c}"`;

function columnType(c: string, dialect: 'sqlite' | 'postgres'): string {
  if (c === 'created_at') return 'TEXT';
  const t = ETF_DAILY.fieldByName.get(c)?.type ?? 'string';
  if (t === 'number') return dialect === 'sqlite' ? 'REAL' : 'double precision';
  if (t === 'integer' || t === 'flag') return dialect === 'sqlite' ? 'INTEGER' : 'bigint';
  return 'TEXT';
}

export function minimalDdl(dialect: 'sqlite' | 'postgres', table = 'etf_daily'): string {
  const cols = MIN_COLUMNS.map(
    (c) => `${q(c)} ${columnType(c, dialect)}${KEY.includes(c) ? ' NOT NULL' : ''}`,
  );
  return `CREATE TABLE ${table} (${cols.join(', ')}, PRIMARY KEY (${KEY.map(q).join(', ')}))`;
}

const upsertTail = (): string =>
  `ON CONFLICT (${KEY.map(q).join(', ')}) DO UPDATE SET ${ETF_COLUMNS.filter((c) => !KEY.includes(c))
    .map((c) => `${q(c)} = excluded.${q(c)}`)
    .join(', ')}`;

/** A copy of the service's bench file's rows in the minimal table, built once and kept. */
export function buildMinimalSqlite(serviceFile: string, log: (s: string) => void): string {
  const file = serviceFile.replace(/\.db$/, '-minimal.db');
  const done = `${file}.complete`;
  if (fs.existsSync(done) && fs.existsSync(file)) return file;
  for (const f of [file, `${file}-wal`, `${file}-shm`, done]) fs.rmSync(f, { force: true });
  const t0 = Date.now();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.exec(minimalDdl('sqlite'));
  db.prepare('ATTACH DATABASE ? AS svc').run(serviceFile);
  const cols = MIN_COLUMNS.map(q).join(', ');
  db.exec(
    `INSERT INTO main.etf_daily (${cols}) SELECT ${cols} FROM svc.etf_daily ORDER BY ${KEY.map(q).join(', ')}`,
  );
  db.exec('DETACH DATABASE svc');
  db.exec('ANALYZE');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  fs.writeFileSync(done, new Date().toISOString());
  log(`minimal table: built ${file} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return file;
}

/**
 * Raw SQLite ceiling, records/s: the batches upserted into a fresh minimal table with one
 * prepared better-sqlite3 statement, one transaction per batch, with the service's durability
 * settings (WAL, synchronous = FULL).
 */
export function sqliteRawUpsertCeiling(file: string, batches: readonly IngestBatch[]): number {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(minimalDdl('sqlite'));
  const upsert = db.prepare(
    `INSERT INTO etf_daily (${MIN_COLUMNS.map(q).join(', ')}) VALUES (${MIN_COLUMNS.map(() => '?').join(', ')}) ${upsertTail()}`,
  );
  const now = new Date().toISOString();
  const apply = db.transaction((b: IngestBatch) => {
    for (const r of b.rows) upsert.run(...ETF_COLUMNS.map((c) => r[c]), now);
  });
  const t = performance.now();
  let n = 0;
  for (const b of batches) {
    apply(b);
    n += b.rows.length;
  }
  const rate = n / ((performance.now() - t) / 1000);
  db.close();
  return rate;
}

/** COPY text format: \N for null, backslash escapes. */
const copyText = (v: string | number | null | undefined): string =>
  v === null || v === undefined
    ? '\\N'
    : typeof v === 'number'
      ? String(v)
      : v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');

/**
 * Raw PostgreSQL ceiling, records/s: per batch one transaction of a temporary staging table,
 * COPY (text), and one INSERT … SELECT … ON CONFLICT DO UPDATE into a fresh minimal table.
 */
export async function pgRawUpsertCeiling(url: string, batches: readonly IngestBatch[]): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('DROP TABLE IF EXISTS etf_daily');
    await client.query(minimalDdl('postgres'));
    const cols = MIN_COLUMNS.map(q).join(', ');
    let records = 0;
    const t0 = process.hrtime.bigint();
    for (const b of batches) {
      const now = new Date().toISOString();
      await client.query('BEGIN');
      await client.query('CREATE TEMPORARY TABLE raw_stage (LIKE etf_daily) ON COMMIT DROP');
      function* lines(): Generator<string> {
        let buf = '';
        for (const r of b.rows) {
          buf += [...ETF_COLUMNS.map((c) => r[c]), now].map(copyText).join('\t') + '\n';
          if (buf.length > 1 << 16) {
            yield buf;
            buf = '';
          }
        }
        if (buf) yield buf;
      }
      await pipeline(Readable.from(lines()), client.query(copyFrom(`COPY raw_stage (${cols}) FROM STDIN`)));
      await client.query(`INSERT INTO etf_daily (${cols}) SELECT ${cols} FROM raw_stage ${upsertTail()}`);
      await client.query('COMMIT');
      records += b.rows.length;
    }
    return records / (Number(process.hrtime.bigint() - t0) / 1e9);
  } finally {
    await client.end();
  }
}

/**
 * The PostgreSQL query data's rows copied into the minimal table, in a schema `minimal` of the
 * same database; the returned URL selects it (search_path), so the naive route reads it.
 */
export async function buildMinimalPg(serviceUrl: string, log: (s: string) => void): Promise<string> {
  const c = new pg.Client({ connectionString: serviceUrl });
  await c.connect();
  try {
    const done = await c.query("SELECT to_regclass('minimal.bench_complete') IS NOT NULL AS ok");
    if (!(done.rows[0] as { ok: boolean }).ok) {
      const t0 = Date.now();
      await c.query('DROP SCHEMA IF EXISTS minimal CASCADE');
      await c.query('CREATE SCHEMA minimal');
      await c.query(minimalDdl('postgres', 'minimal.etf_daily'));
      const cols = MIN_COLUMNS.map(q).join(', ');
      await c.query(
        `INSERT INTO minimal.etf_daily (${cols}) SELECT ${cols} FROM public.etf_daily ORDER BY ${KEY.map(q).join(', ')}`,
      );
      await c.query('VACUUM ANALYZE minimal.etf_daily');
      await c.query('CREATE TABLE minimal.bench_complete (at timestamptz)');
      log(`minimal table (PostgreSQL): built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    await c.end();
  }
  const u = new URL(serviceUrl);
  u.searchParams.set('options', '-c search_path=minimal');
  return u.toString();
}

/** Bytes of a PostgreSQL table with its indexes and TOAST. */
export async function pgTableBytes(url: string, table: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query('SELECT pg_total_relation_size($1::regclass)::bigint AS n', [table]);
    return Number((r.rows[0] as { n: string }).n);
  } finally {
    await c.end();
  }
}

/** Bytes of a SQLite table and its indexes (dbstat), after a checkpoint. */
export function sqliteTableBytes(file: string, table: string): number {
  const db = new Database(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const names = [
      table,
      ...(db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?")
        .pluck()
        .all(table) as string[]),
    ];
    let bytes = 0;
    const stat = db.prepare('SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?').pluck();
    for (const n of names) bytes += Number(stat.get(n));
    return bytes;
  } finally {
    db.close();
  }
}

/** A SQLite database file's bytes (pages × page size) after a checkpoint that empties the WAL. */
export function sqliteFileBytes(file: string): number {
  const db = new Database(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const pages = Number(db.pragma('page_count', { simple: true }));
    const free = Number(db.pragma('freelist_count', { simple: true }));
    return (pages - free) * Number(db.pragma('page_size', { simple: true }));
  } finally {
    db.close();
  }
}

/** Each table's bytes with its indexes (dbstat), largest first. */
export function sqliteTableSizes(file: string): { name: string; bytes: number }[] {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT coalesce(m.tbl_name, s.name) AS name, sum(s.pgsize) AS bytes FROM dbstat AS s
         LEFT JOIN sqlite_master AS m ON m.name = s.name GROUP BY 1 ORDER BY 2 DESC`,
      )
      .all() as { name: string; bytes: number }[];
    return rows.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
  } finally {
    db.close();
  }
}

/** Each table of the public schema with its indexes and TOAST, largest first. */
export async function pgTableSizes(url: string): Promise<{ name: string; bytes: number }[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query(
      `SELECT relname AS name, pg_total_relation_size(oid)::bigint AS bytes FROM pg_class
       WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY 2 DESC`,
    );
    return (r.rows as { name: string; bytes: string }[]).map((x) => ({
      name: x.name,
      bytes: Number(x.bytes),
    }));
  } finally {
    await c.end();
  }
}

/** A PostgreSQL database `name` made anew through `admin` (a URL of the server); its URL. */
export async function freshPgDatabase(admin: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
}
