import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** PostgreSQL for tests: each caller gets a database of its own, dropped afterwards. */
export const PG_ADMIN_URL = process.env.MDS_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let available: Promise<boolean> | null = null;

export function postgresAvailable(): Promise<boolean> {
  available ??= (async () => {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch (err) {
      if (process.env.MDS_REQUIRE_POSTGRES === '1') {
        throw new Error(
          `MDS_REQUIRE_POSTGRES=1 but PostgreSQL is unreachable at ${PG_ADMIN_URL}: ${String(err)}`,
        );
      }
      console.warn(`# PostgreSQL unreachable at ${PG_ADMIN_URL}: PostgreSQL suites are SKIPPED`);
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return available;
}

export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `mds_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
