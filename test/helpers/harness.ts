import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe } from 'node:test';
import Database from 'better-sqlite3';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createStore } from '../../src/storage/create-store.js';
import type { Db } from '../../src/storage/db.js';
import { PostgresDb } from '../../src/storage/postgres/postgres-db.js';
import { SqliteDb } from '../../src/storage/sqlite/sqlite-db.js';
import type { Store } from '../../src/storage/store.js';
import type { Limiter } from '../../src/access/limiter.js';
import { POOLER_ENV, postgresAvailable, createTestDatabase } from './postgres.js';

export const INGEST_KEY = 'test-ingest-key-0123456789';
export const QUERY_KEY = 'test-query-key-0123456789';
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export type Backend = 'sqlite' | 'postgres';

/**
 * The backends a suite runs on: SQLite always; PostgreSQL when one is reachable (CI: always,
 * since MDS_REQUIRE_POSTGRES=1 makes an unreachable server a failure rather than a skip).
 */
export async function backends(): Promise<Backend[]> {
  return (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
}

/**
 * Registers `suite` for one backend. The long fault suites are split into one test file per
 * backend (`<suite>-sqlite.test.ts`, `<suite>-postgres.test.ts`) so that the runner runs the two
 * halves side by side: they share no database, port or file. Without PostgreSQL its half is a
 * skipped suite that says so.
 */
export async function onBackend(backend: Backend, suite: (backend: Backend) => void): Promise<void> {
  if ((await backends()).includes(backend)) suite(backend);
  else describe(`(${backend})`, { skip: `${backend} unreachable` }, () => {});
}

export interface Harness {
  backend: Backend;
  app: FastifyInstance;
  store: Store;
  databaseUrl: string;
  close(): Promise<void>;
}

/**
 * A fresh database of the given backend (a temp SQLite file, or a new PostgreSQL database).
 * `migrated`: the caller migrates it at once anyway (a store it opens, a server it starts), so
 * on PostgreSQL it may be a clone of the run's migrated template (createTestDatabase). A SQLite
 * file is always empty: its migration costs 0.07 s of CPU.
 */
export async function freshDatabaseUrl(
  backend: Backend,
  opts: { migrated?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  if (backend === 'postgres') return createTestDatabase(undefined, undefined, opts);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-test-'));
  return {
    url: `sqlite:${path.join(dir, 'test.db')}`,
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A fresh database of the given backend opened as the storage layer's executor (`Db`), for
 * suites that drive storage steps directly rather than through a store or the service.
 */
export async function freshDb(backend: Backend): Promise<{ db: Db; drop(): Promise<void> }> {
  const fresh = await freshDatabaseUrl(backend);
  const db =
    backend === 'sqlite'
      ? new SqliteDb({ file: fresh.url.slice('sqlite:'.length) })
      : new PostgresDb({ connectionString: fresh.url });
  return { db, drop: fresh.drop };
}

/** The tests' configuration: their keys and token, silent logs, the given database. */
export function testConfig(databaseUrl: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    MDS_INGEST_KEYS: INGEST_KEY,
    MDS_QUERY_KEYS: QUERY_KEY,
    MDS_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    ...(databaseUrl.startsWith('postgres') ? POOLER_ENV : {}),
    ...env,
  });
}

/** Statements run on a test's database directly, outside the service (e.g. to undo a migration). */
export async function runSql(databaseUrl: string, statements: readonly string[]): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.replace(/^sqlite:/, ''));
    for (const s of statements) db.exec(s);
    db.close();
  } else {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    for (const s of statements) await c.query(s);
    await c.end();
  }
}

export async function startApp(
  backend: Backend,
  env: Record<string, string> = {},
  opts: { limiter?: Limiter; databaseUrl?: string } = {},
): Promise<Harness> {
  const db = opts.databaseUrl
    ? { url: opts.databaseUrl, drop: async () => {} }
    : await freshDatabaseUrl(backend, { migrated: true });
  const config = testConfig(db.url, env);
  const store = await createStore(config.DATABASE_URL, CATALOG, config);
  await store.migrate();
  const app = await buildApp({ config, store, ...(opts.limiter ? { limiter: opts.limiter } : {}) });
  await app.ready();
  return {
    backend,
    app,
    store,
    databaseUrl: db.url,
    async close() {
      await app.close();
      await store.close();
      await db.drop();
    },
  };
}

export type Json = Record<string, unknown>;

export async function push(
  app: FastifyInstance,
  body: unknown,
  key = INGEST_KEY,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: '/api/v1/upstream/ingest/batches',
    headers: { 'content-type': 'application/json', 'up-api-key': key },
    payload: JSON.stringify(body),
  });
}

export async function get(
  app: FastifyInstance,
  url: string,
  key: string | null = QUERY_KEY,
): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url, headers: key === null ? {} : { 'q-api-key': key } });
}

export async function batchStatus(
  app: FastifyInstance,
  id: string,
  key = INGEST_KEY,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'GET',
    url: `/api/v1/upstream/ingest/batches/${encodeURIComponent(id)}`,
    headers: { 'up-api-key': key },
  });
}

export const json = (res: LightMyRequestResponse): Json => res.json() as Json;
