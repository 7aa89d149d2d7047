import { loadConfig, type Config } from '../config.js';
import { CATALOG } from '../catalog/catalog.js';
import { createStore } from '../storage/create-store.js';
import type { Store } from '../storage/store.js';

/** Opens the store of DATABASE_URL (the server's default when unset), migrated, for one command. */
export async function withStore<T>(fn: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await createStore(config.DATABASE_URL, CATALOG);
  try {
    await store.migrate();
    return await fn(store, config);
  } finally {
    await store.close();
  }
}
