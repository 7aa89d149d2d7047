// The crash suites (faults-crash.ts) on PostgreSQL, in a file of its own so that the runner runs it beside the
// other backend's.
import { onBackend } from '../helpers/harness.js';
import { crashSuites } from './faults-crash.js';

await onBackend('postgres', crashSuites);
