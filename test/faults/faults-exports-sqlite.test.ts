// The stalled-export suite (faults-exports.ts) on SQLite, in a file of its own so that the runner runs it beside the
// other backend's.
import { onBackend } from '../helpers/harness.js';
import { stalledExportSuite } from './faults-exports.js';

await onBackend('sqlite', stalledExportSuite);
