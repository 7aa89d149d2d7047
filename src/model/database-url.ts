/**
 * Which backend DATABASE_URL names, decided once (create-store.ts opens it; the cluster and the
 * ingest threads ask whether its batches need one writer). Kept apart from create-store.ts so
 * that the cluster's primary, which never opens a store, loads only this.
 */

/** Whether DATABASE_URL is a SQLite file (`sqlite:<path>`, the default). */
export function sqliteUrl(url: string): boolean {
  return url.startsWith('sqlite:');
}
