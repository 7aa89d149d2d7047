import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The built entry points (dist/, what `npm start` and the `mds` bin run). Tests that start the
 * server or the CLI as a process start these: `node --import tsx src/…` compiled the sources
 * again in every child, which cost the CLI and fault suites most of their time (docs/testing.md).
 * `npm test` builds first; a stale dist/ fails here rather than testing old code.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const SERVER_MAIN = path.join(ROOT, 'dist', 'main.js');
export const CLI_MAIN = path.join(ROOT, 'dist', 'cli', 'main.js');

/** The first source file whose built file is missing or older, if any. */
function staleSource(dir: string): string | null {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const stale = staleSource(file);
      if (stale) return stale;
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      const built = path
        .join(ROOT, 'dist', path.relative(path.join(ROOT, 'src'), file))
        .replace(/\.ts$/, '.js');
      const builtAt = fs.statSync(built, { throwIfNoEntry: false })?.mtimeMs ?? 0;
      if (builtAt < fs.statSync(file).mtimeMs) return file;
    }
  }
  return null;
}

const stale = staleSource(path.join(ROOT, 'src'));
if (stale) {
  throw new Error(
    `dist/ is older than ${path.relative(ROOT, stale)}: run \`npm run build\` first (\`npm test\` does)`,
  );
}
