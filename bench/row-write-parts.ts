import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CATALOG } from '../src/catalog/catalog.js';
import { ROW_JSON_COLUMN, rowJson } from '../src/model/row-json.js';
import type { Row, Value } from '../src/model/values.js';
import { keyIndexOrder } from '../src/storage/schema.js';
import { SQLITE, q, upsertConflictClause, upsertWriteColumns } from '../src/storage/sql.js';
import { SqlStore } from '../src/storage/sql-store.js';
import { SqliteDb } from '../src/storage/sqlite/sqlite-db.js';
import { ETF_COLUMNS, ETF_DAILY, shapeBatches, type EtfRow } from './data.js';
import { MIN_COLUMNS, minimalDdl, sqliteTableBytes } from './minimal.js';

/**
 * The parts of one row's write on SQLite (issue 31): the backfill shape's rows (bench/data.ts)
 * written in process into fresh files, one transaction per 10,000-row batch, WAL and
 * synchronous = FULL as the service opens its file, every row new. Variants:
 *
 * - the service's own write (`Tx.writeRows`: key order, 64 rows a statement, row JSON, stamp,
 *   the table with its three secondary indexes);
 * - the same table written by one generic statement (also 64 rows, key order), then without the
 *   row JSON (NULL), without the secondary indexes, without both;
 * - the minimal table by the same generic statement, and by the raw reference's one row a
 *   statement (bench/minimal.ts);
 * - building the row JSON alone, no write.
 *
 * Each variant's µs per row (wall: the thread does nothing else; CPU beside it) and bytes per row
 * of the table with its indexes; rounds alternate the variants so drift hits them alike.
 *
 *   npx tsx bench/row-write-parts.ts [batches=6] [rounds=2]
 */
const BATCHES = Number(process.argv[2] ?? 6);
const ROUNDS = Number(process.argv[3] ?? 2);
const PER_STATEMENT = 64;
const d = ETF_DAILY;
const batches = shapeBatches('backfill', '3', BATCHES).map((b) => b.rows);
const rows = batches.reduce((n, b) => n + b.length, 0);
const order = keyIndexOrder(d);
const inKeyOrder = (b: EtfRow[]): EtfRow[] =>
  [...b].sort((x, y) => {
    for (const k of order) {
      const a = x[k.name as keyof EtfRow];
      const c = y[k.name as keyof EtfRow];
      if (a !== c) return (a < c ? -1 : 1) * (k.desc ? -1 : 1);
    }
    return 0;
  });

interface Result {
  wallUs: number;
  cpuUs: number;
  bytes: number;
}

/** Runs `write` over every batch, each in one transaction of `db`; µs per row. */
function timed(write: (b: EtfRow[]) => void): { wallUs: number; cpuUs: number } {
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (const b of batches) write(b);
  const wall = performance.now() - t;
  const used = process.cpuUsage(cpu);
  return { wallUs: (wall * 1000) / rows, cpuUs: (used.user + used.system) / rows };
}

function freshFile(dir: string, name: string): string {
  const file = path.join(dir, `${name}.db`);
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  return file;
}

function open(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('cache_size = -32000');
  return db;
}

/** The service's table, made by its own migrate(), and the names of its secondary indexes. */
async function serviceFile(file: string): Promise<string[]> {
  const db = new SqliteDb({ file, checkpoints: 'none' });
  await new SqlStore(CATALOG, db).migrate();
  await db.close();
  const raw = new Database(file);
  const names = raw
    .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name LIKE 'ix_%'")
    .pluck()
    .all(d.name) as string[];
  raw.close();
  return names;
}

async function serviceWrite(dir: string): Promise<Result> {
  const file = freshFile(dir, 'service');
  await serviceFile(file);
  const db = new SqliteDb({ file, checkpoints: 'none' });
  const at = new Date().toISOString();
  let n = 0;
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (const b of batches) {
    const batch = {
      batchId: `parts-${n}`,
      dataset: d,
      rows: b as unknown as Row[],
      prune: null,
      now: at,
    };
    n += await db.transaction((tx) => tx.writeRows(batch, at));
  }
  const wall = performance.now() - t;
  const used = process.cpuUsage(cpu);
  await db.close();
  if (n !== rows) throw new Error(`service wrote ${n} of ${rows}`);
  return {
    wallUs: (wall * 1000) / rows,
    cpuUs: (used.user + used.system) / rows,
    bytes: sqliteTableBytes(file, d.name) / rows,
  };
}

/** The service's table written by one generic multi-row upsert; `json` false: the JSON NULL. */
async function genericWrite(dir: string, name: string, json: boolean, secondary: boolean): Promise<Result> {
  const file = freshFile(dir, name);
  const ix = await serviceFile(file);
  const db = open(file);
  if (!secondary) for (const i of ix) db.exec(`DROP INDEX ${q(i)}`);
  const cols = upsertWriteColumns(d);
  const width = cols.length;
  const one = `(${cols.map(() => '?').join(', ')})`;
  const stmt = (k: number): Database.Statement =>
    db.prepare(
      `INSERT INTO ${q(d.name)} AS t (${cols.map(q).join(', ')}) VALUES ${new Array<string>(k).fill(one).join(', ')} ` +
        upsertConflictClause(d, SQLITE, 't'),
    );
  const full = stmt(PER_STATEMENT);
  const build = rowJson(d);
  const at = new Date().toISOString();
  // upsertWriteColumns: the fields, the row JSON, created_at, op, batch, instant.
  const fields = d.fields.map((f) => f.name);
  const write = db.transaction((b: EtfRow[]) => {
    const sorted = inKeyOrder(b);
    for (let s = 0; s < sorted.length; s += PER_STATEMENT) {
      const k = Math.min(PER_STATEMENT, sorted.length - s);
      const values: Value[] = new Array<Value>(k * width);
      for (let r = 0; r < k; r++) {
        const row = sorted[s + r] as unknown as Row;
        let o = r * width;
        for (const f of fields) values[o++] = row[f] ?? null;
        values[o++] = json ? build(row) : null;
        values[o++] = at;
        values[o++] = 'insert';
        values[o++] = 'parts';
        values[o++] = at;
      }
      (k === PER_STATEMENT ? full : stmt(k)).run(values);
    }
  });
  const time = timed(write);
  db.close();
  return { ...time, bytes: sqliteTableBytes(file, d.name) / rows };
}

/** The minimal table: 64 rows a statement, or the raw reference's one a statement. */
function minimalWrite(dir: string, name: string, perStatement: number): Result {
  const file = freshFile(dir, name);
  const db = open(file);
  db.exec(minimalDdl('sqlite'));
  const key = d.key.map((k) => k.name);
  const tail =
    `ON CONFLICT (${key.map(q).join(', ')}) DO UPDATE SET ` +
    ETF_COLUMNS.filter((c) => !key.includes(c))
      .map((c) => `${q(c)} = excluded.${q(c)}`)
      .join(', ');
  const one = `(${MIN_COLUMNS.map(() => '?').join(', ')})`;
  const stmt = (k: number): Database.Statement =>
    db.prepare(
      `INSERT INTO etf_daily (${MIN_COLUMNS.map(q).join(', ')}) VALUES ${new Array<string>(k).fill(one).join(', ')} ${tail}`,
    );
  const full = stmt(perStatement);
  const at = new Date().toISOString();
  const width = MIN_COLUMNS.length;
  const write = db.transaction((b: EtfRow[]) => {
    // The batch's rows come in the minimal key's own order (symbol, date ascending).
    const sorted = b;
    for (let s = 0; s < sorted.length; s += perStatement) {
      const k = Math.min(perStatement, sorted.length - s);
      const values: (string | number)[] = new Array<string | number>(k * width);
      for (let r = 0; r < k; r++) {
        const row = sorted[s + r] as EtfRow;
        let o = r * width;
        for (const c of ETF_COLUMNS) values[o++] = row[c];
        values[o++] = at;
      }
      (k === perStatement ? full : stmt(k)).run(values);
    }
  });
  const time = timed(write);
  db.close();
  return { ...time, bytes: sqliteTableBytes(file, 'etf_daily') / rows };
}

function jsonOnly(): Result {
  const build = rowJson(d);
  let length = 0;
  const time = timed((b) => {
    for (const r of b) length += build(r as unknown as Row).length;
  });
  return { ...time, bytes: length / rows };
}

const variants: [string, (dir: string) => Result | Promise<Result>][] = [
  ['service: Tx.writeRows (JSON, stamp, 3 secondary indexes)', serviceWrite],
  ['service table, generic statement', (dir) => genericWrite(dir, 'generic', true, true)],
  ['  without row JSON', (dir) => genericWrite(dir, 'no-json', false, true)],
  ['  without secondary indexes', (dir) => genericWrite(dir, 'no-ix', true, false)],
  ['  without both', (dir) => genericWrite(dir, 'bare', false, false)],
  ['minimal table, 64 rows a statement', (dir) => minimalWrite(dir, 'min64', PER_STATEMENT)],
  ['minimal table, raw: one row a statement', (dir) => minimalWrite(dir, 'min1', 1)],
  ['row JSON built alone (bytes: its length)', () => jsonOnly()],
];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-row-parts-'));
const results = new Map<string, Result[]>();
try {
  console.log(`${rows} rows (${BATCHES} backfill batches of 5 codes × 2,000 days), ${ROUNDS} rounds`);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, run] of variants) {
      const res = await run(dir);
      results.set(name, [...(results.get(name) ?? []), res]);
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
const best = (xs: Result[], k: keyof Result): number => Math.min(...xs.map((x) => x[k]));
console.log('variant | wall µs/row (best of rounds) | CPU µs/row | bytes/row');
for (const [name, xs] of results) {
  console.log(
    `${name} | ${best(xs, 'wallUs').toFixed(1)} | ${best(xs, 'cpuUs').toFixed(1)} | ${(xs[0]?.bytes ?? 0).toFixed(0)}`,
  );
}
// The JSON column's name, so a reader of the output knows which column the variants drop.
console.log(`(row JSON column: ${ROW_JSON_COLUMN})`);
