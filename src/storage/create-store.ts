import type { Catalog } from '../catalog/catalog.js';
import type { Store } from './store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';

/** Picks the store from DATABASE_URL: `sqlite:<path>` (default) or `postgres://…`. */
export async function createStore(databaseUrl: string, catalog: Catalog): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    return new SqliteStore(catalog, { file: databaseUrl.slice('sqlite:'.length) || './data/market-data.db' });
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    return new PostgresStore(catalog, { connectionString: databaseUrl });
  }
  throw new Error(
    `DATABASE_URL must start with sqlite: or postgres:// (got "${databaseUrl.split(':')[0]}:…")`,
  );
}

/** The backend name DATABASE_URL selects, without connecting. */
export const backendOf = (databaseUrl: string): 'sqlite' | 'postgres' =>
  databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres';
