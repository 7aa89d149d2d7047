import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { CATALOG } from '../src/catalog/catalog.js';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { PostgresStore } from '../src/storage/postgres/postgres-store.js';
import { copyChunks } from '../src/storage/postgres/copy-text.js';
import { binaryCopyChunks, stagingType } from '../src/storage/postgres/copy-binary.js';
import { q } from '../src/storage/sql.js';
import type { Row } from '../src/model/values.js';
import { ETF_COLUMNS, ingestBatches, type IngestBatch } from './data.js';
import { createTestDatabase } from '../test/helpers/postgres.js';

/**
 * PostgreSQL ingest: 10,000-record etf_daily batches through the whole service (HTTP inject:
 * JSON parse, checksum, validation, registry, COPY + upsert) against a raw ceiling on the same
 * server and schema: COPY into a temporary staging table + one INSERT … ON CONFLICT DO UPDATE
 * per batch, nothing else. Each side gets a fresh database, dropped afterwards.
 *
 *   npx tsx bench/pg-ingest.ts [batches=5] [size=10000] [rounds=3]
 *   (MDS_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 */

const ADMIN_URL = process.env.MDS_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const INGEST_KEY = 'bench-ingest-key-0123456789';

const freshDatabase = (adminUrl: string): ReturnType<typeof createTestDatabase> =>
  createTestDatabase(adminUrl, 'mds_pgbench');

/** The service's schema and indexes, created by the store itself. */
async function migrated(url: string): Promise<void> {
  const store = new PostgresStore(CATALOG, { connectionString: url });
  await store.migrate();
  await store.close();
}

/**
 * Raw ceiling, records/s: per batch one transaction of CREATE TEMP staging, COPY, INSERT …
 * ON CONFLICT DO UPDATE. Used by bench/run.ts (bench/postgres.ts) too.
 */
export async function pgRawUpsertCeiling(
  url: string,
  batches: readonly IngestBatch[],
  format: 'binary' | 'text' = 'binary',
): Promise<number> {
  await migrated(url);
  const d = CATALOG.byName.get('etf_daily');
  if (!d) throw new Error('etf_daily missing');
  const cols = [...ETF_COLUMNS];
  const types = cols.map((c) => d.fieldByName.get(c)?.type ?? 'string');
  const keys = d.key.map((k) => q(k.name));
  const stage = `CREATE TEMPORARY TABLE raw_stage (${cols.map((c, i) => `${q(c)} ${stagingType(types[i] ?? 'string')}`).join(', ')}) ON COMMIT DROP`;
  const upsert =
    `INSERT INTO etf_daily (${cols.map(q).join(', ')}, created_at) SELECT ${cols.map(q).join(', ')}, $1::text FROM raw_stage ` +
    `ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${cols
      .filter((c) => !['symbol', 'date', 'source'].includes(c))
      .map((c) => `${q(c)} = excluded.${q(c)}`)
      .join(', ')}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let records = 0;
    const t0 = process.hrtime.bigint();
    for (const b of batches) {
      await client.query('BEGIN');
      await client.query(stage);
      const rows = b.rows as unknown as Row[];
      const chunks = format === 'binary' ? binaryCopyChunks(rows, cols, types) : copyChunks(rows, cols);
      await pipeline(
        Readable.from(chunks),
        client.query(
          copyFrom(
            `COPY raw_stage (${cols.map(q).join(', ')}) FROM STDIN${format === 'binary' ? ' (FORMAT binary)' : ''}`,
          ),
        ),
      );
      await client.query(upsert, [new Date().toISOString()]);
      await client.query('COMMIT');
      records += b.rows.length;
    }
    return records / (Number(process.hrtime.bigint() - t0) / 1e9);
  } finally {
    await client.end();
  }
}

/**
 * The whole service, records/s: every batch POSTed through Fastify's inject, `inFlight` at a
 * time (1: strictly one after another).
 */
export async function pgServiceIngest(
  url: string,
  batches: readonly IngestBatch[],
  inFlight = 1,
): Promise<number> {
  const config = loadConfig({ DATABASE_URL: url, MDS_INGEST_KEYS: INGEST_KEY, LOG_LEVEL: 'silent' });
  const store = new PostgresStore(CATALOG, { connectionString: url });
  await store.migrate();
  const app = await buildApp({ config, store });
  await app.ready();
  try {
    let records = 0;
    let next = 0;
    const t0 = process.hrtime.bigint();
    const worker = async (): Promise<void> => {
      for (let b = batches[next++]; b; b = batches[next++]) {
        const r = await app.inject({
          method: 'POST',
          url: '/api/v1/upstream/ingest/batches',
          headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
          payload: b.body,
        });
        if (r.statusCode !== 200) throw new Error(`push answered ${r.statusCode}: ${r.body.slice(0, 300)}`);
        records += b.rows.length;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    return records / (Number(process.hrtime.bigint() - t0) / 1e9);
  } finally {
    await app.close();
    await store.close();
  }
}

async function measure(
  fn: (url: string, batches: readonly IngestBatch[]) => Promise<number>,
  warmup: readonly IngestBatch[],
  batches: readonly IngestBatch[],
): Promise<number> {
  const db = await freshDatabase(ADMIN_URL);
  try {
    await fn(db.url, warmup);
    return await fn(db.url, batches);
  } finally {
    await db.drop();
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)] as number;
};

/**
 * `rounds` rounds, each measuring the raw ceiling and then the service back to back, so a
 * machine whose load drifts (shared CI) skews both sides of a round alike; the medians are the
 * figures to quote.
 */
async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 5);
  const size = Number(process.argv[3] ?? 10_000);
  const rounds = Number(process.argv[4] ?? 3);
  const warmup = ingestBatches('7', 1, 2000);
  const batches = ingestBatches('5', count, size);
  const cols = { raw: [] as number[], text: [] as number[], one: [] as number[], two: [] as number[] };
  console.log(`PostgreSQL ingest, ${count} × ${size}-record etf_daily batches (new rows), records/s:`);
  console.log('  round  raw-binary  raw-text  service-1  service-2  service-1/raw-binary');
  for (let r = 1; r <= rounds; r++) {
    const raw = await measure(pgRawUpsertCeiling, warmup, batches);
    const text = await measure((u, b) => pgRawUpsertCeiling(u, b, 'text'), warmup, batches);
    const one = await measure(pgServiceIngest, warmup, batches);
    const two = await measure((u, b) => pgServiceIngest(u, b, 2), warmup, batches);
    cols.raw.push(raw);
    cols.text.push(text);
    cols.one.push(one);
    cols.two.push(two);
    const row = [raw, text, one, two].map((x) => x.toFixed(0).padStart(9)).join('  ');
    console.log(`  ${String(r).padStart(5)}  ${row}  ${((one / raw) * 100).toFixed(0)}%`);
  }
  const ratios = cols.one.map((x, i) => x / (cols.raw[i] as number));
  const med = [cols.raw, cols.text, cols.one, cols.two].map((c) => median(c).toFixed(0).padStart(9));
  console.log(`  median ${med.join('  ')}  ${(median(ratios) * 100).toFixed(0)}%`);
  console.log('  (service-1: one batch at a time over HTTP inject; service-2: two in flight)');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
