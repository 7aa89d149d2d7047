import { CATALOG } from '../../src/catalog/catalog.js';
import type { DemoOptions } from '../../src/demo/generators.js';
import type { AddressInfo } from 'node:net';
import { defaultDemoOptions, seedDemo, type DatasetSeedResult } from '../../src/demo/seed.js';
import { IngestService } from '../../src/ingest/ingest-service.js';
import type { Store } from '../../src/storage/store.js';
import assert from 'node:assert/strict';
import { QUERY_KEY, startApp, type Backend, type Harness } from './harness.js';

/** The demo data of every dataset written straight into a store through the IngestService. */
export function seedDemoStore(store: Store, opts: DemoOptions): Promise<DatasetSeedResult[]> {
  const ingest = new IngestService(CATALOG, store, { maxRecords: 100_000 });
  return seedDemo(
    CATALOG,
    async (b) => {
      const { kind, record } = await ingest.ingest(b);
      const status = kind === 'duplicate' ? 'duplicate' : record.status;
      return {
        status,
        accepted: record.accepted,
        duplicate: record.duplicate,
        rejected: record.rejected,
        errors: record.errors,
      };
    },
    opts,
  );
}

/** A SQLite service seeded with the default demo data, listening on a free port: `base` is its http:// address. */
export async function listeningDemo(): Promise<{ h: Harness; base: string }> {
  const h = await startApp('sqlite');
  await seedDemoStore(h.store, defaultDemoOptions());
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  return { h, base: `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}` };
}

/**
 * A service on `backend` seeded with the demo data of `opts`, listening on a free port: `base` is
 * its http:// address, `seededAt` an instant after the seed (an `as_of` that sees it whole).
 */
export async function listeningDemoOn(
  backend: Backend,
  opts: DemoOptions,
  env: Record<string, string> = {},
): Promise<{ h: Harness; base: string; seededAt: string }> {
  const h = await startApp(backend, env);
  for (const r of await seedDemoStore(h.store, opts)) assert.equal(r.rejected, 0, r.dataset);
  const seededAt = new Date().toISOString();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  return { h, base: `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`, seededAt };
}

/** A JSON page of the query API: rows and the meta the suites read. */
export interface ApiPage {
  code: number;
  data: Record<string, unknown>[];
  meta: Record<string, unknown> & { total: number; next_cursor: string | null };
}

/**
 * GETs with the query key on a listening service (`base()`: its http:// address, once known):
 * `call` the response, `page` a 200's body (failing the test naming the path otherwise), `all`
 * every row of a query through its cursor.
 */
export function queryCalls(base: () => string) {
  const call = (path: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${base()}${path}`, { headers: { 'q-api-key': QUERY_KEY, ...headers } });
  const page = async (path: string): Promise<ApiPage> => {
    const res = await call(path);
    const text = await res.text();
    assert.equal(res.status, 200, `${path}: ${text}`);
    return JSON.parse(text) as ApiPage;
  };
  const all = async (path: string): Promise<Record<string, unknown>[]> => {
    const rows: Record<string, unknown>[] = [];
    let cursor: string | null = null;
    do {
      const p = await page(`${path}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      rows.push(...p.data);
      cursor = p.meta.next_cursor;
    } while (cursor !== null);
    return rows;
  };
  return { call, page, all };
}
