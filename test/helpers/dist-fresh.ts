import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './repo-root.js';

/** The checkout's root (repo-root.ts): src/ and dist/ are beside each other in it. */
export { ROOT };

/** When the bundle (dist/bundle/, rebuilt whole by scripts/bundle.ts) was built; 0 if it was not. */
const bundledAt = (): number =>
  fs.statSync(path.join(ROOT, 'dist', 'bundle', 'main.js'), { throwIfNoEntry: false })?.mtimeMs ?? 0;

/**
 * The first source file whose built file in dist/ is missing or older, or that is newer than the
 * bundle, if any: the tests that run built code (test/helpers/built.ts, and the threads of
 * in-process apps under the runner: scripts/run-tests.ts) must not run an older build than the
 * sources.
 */
export function staleSource(dir = path.join(ROOT, 'src'), bundle = bundledAt()): string | null {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const stale = staleSource(file, bundle);
      if (stale) return stale;
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      const built = path
        .join(ROOT, 'dist', path.relative(path.join(ROOT, 'src'), file))
        .replace(/\.ts$/, '.js');
      const builtAt = fs.statSync(built, { throwIfNoEntry: false })?.mtimeMs ?? 0;
      const changedAt = fs.statSync(file).mtimeMs;
      if (builtAt < changedAt || bundle < changedAt) return file;
    }
  }
  return null;
}
