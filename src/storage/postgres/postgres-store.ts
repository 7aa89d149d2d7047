import type { Catalog } from '../../catalog/catalog.js';

/** Placeholder until the PostgreSQL store lands (issue 5). */
export class PostgresStore {
  constructor(_catalog: Catalog, _opts: { connectionString: string }) {
    throw new Error('PostgreSQL support is not implemented yet');
  }
}
