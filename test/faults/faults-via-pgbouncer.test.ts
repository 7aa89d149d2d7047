// The PostgreSQL tests of the concurrency, export, point-in-time and store-parity suites through
// PgBouncer (via-pgbouncer.ts); the crash suite's are in faults-via-pgbouncer-crash.test.ts.
import { viaPgBouncer } from './via-pgbouncer.js';

viaPgBouncer([
  'test/faults/faults-concurrency-postgres.test.ts',
  'test/faults/faults-exports-postgres.test.ts',
  'test/query/revisions.test.ts',
  'test/storage/postgres-store-parity.test.ts',
]);
