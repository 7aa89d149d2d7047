// The heavy-read suite (faults-heavy-reads.ts) on SQLite, in a file of its own so that the runner runs it beside the
// other backend's.
import { onBackend } from '../helpers/harness.js';
import { heavyReadSuite } from './faults-heavy-reads.js';

await onBackend('sqlite', heavyReadSuite);
