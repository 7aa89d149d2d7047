// The crash suites (faults-crash.ts) on SQLite, in a file of its own so that the runner runs it beside the
// other backend's.
import { onBackend } from '../helpers/harness.js';
import { crashSuites } from './faults-crash.js';

await onBackend('sqlite', crashSuites);
