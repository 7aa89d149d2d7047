// The crash suite's PostgreSQL tests through PgBouncer (via-pgbouncer.ts), in a file of its
// own: the longest of them, run beside the others.
import { viaPgBouncer } from './via-pgbouncer.js';

viaPgBouncer(['test/faults/faults-crash-postgres.test.ts']);
