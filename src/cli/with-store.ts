import type { Config } from '../config.js';
import type { Store } from '../storage/store.js';

/**
 * Opens the store of DATABASE_URL (the server's default when unset), migrated, for one command.
 * The configuration, catalog and storage are loaded here, when a command runs: a command's help
 * or a refused flag does not load them (the CLI's start-up, docs/testing.md).
 */
export async function withStore<T>(fn: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const [{ loadConfig }, { CATALOG }, { createStore }] = await Promise.all([
    import('../config.js'),
    import('../catalog/catalog.js'),
    import('../storage/create-store.js'),
  ]);
  const config = loadConfig();
  const store = await createStore(config.DATABASE_URL, CATALOG);
  try {
    await store.migrate();
    return await fn(store, config);
  } finally {
    await store.close();
  }
}
