// The full-disk suite (disk-full.ts) on SQLite, in a file of its own so that the runner runs it
// beside the other backend's.
import { onBackend } from '../helpers/harness.js';
import { diskFull } from './disk-full.js';

await onBackend('sqlite', diskFull);
