// The concurrency suites (faults-concurrency.ts) on PostgreSQL, in a file of its own so that the runner runs it beside the
// other backend's.
import { onBackend } from '../helpers/harness.js';
import { concurrencySuites } from './faults-concurrency.js';

await onBackend('postgres', concurrencySuites);
