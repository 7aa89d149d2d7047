import path from 'node:path';
import { ROOT, staleSource } from './dist-fresh.js';

/**
 * The bundled entry points (dist/bundle/, what `npm start` and the `mds` bin run:
 * scripts/bundle.ts). Tests that start the server or the CLI as a process start these:
 * `node --import tsx src/…` compiled the sources again in every child, which cost the CLI and fault suites most of their time (docs/testing.md).
 * `npm test` builds first; a stale dist/ fails here rather than testing old code.
 */

export const SERVER_MAIN = path.join(ROOT, 'dist', 'bundle', 'main.js');
export const CLI_MAIN = path.join(ROOT, 'dist', 'bundle', 'cli', 'main.js');

const stale = staleSource();
if (stale) {
  throw new Error(
    `dist/ is older than ${path.relative(ROOT, stale)}: run \`npm run build\` first (\`npm test\` does)`,
  );
}
