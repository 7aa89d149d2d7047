// The shutdown suite (faults-shutdown.ts) on PostgreSQL, in a file of its own so that the runner runs it beside the
// other backend's.
import { onBackend } from '../helpers/harness.js';
import { shutdownSuite } from './faults-shutdown.js';

await onBackend('postgres', shutdownSuite);
