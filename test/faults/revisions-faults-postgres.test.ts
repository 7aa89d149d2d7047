// The point-in-time fault suite (revisions-faults.ts) on PostgreSQL, in a file of its own so that the runner
// runs it beside the other backend's.
import { onBackend } from '../helpers/harness.js';
import { revisionFaults } from './revisions-faults.js';

await onBackend('postgres', revisionFaults);
