// Issue 14 item 14: `npm ci` warns EBADENGINE on no supported Node version. Every package the
// lockfile installs (dependencies of dependencies and dev tools included) accepts every Node
// version our `engines.node` declares.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { ROOT } from '../helpers/repo-root.js';

const readJson = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));

interface LockEntry {
  version?: string;
  engines?: Record<string, string> | string[];
}

it("every installed package's engines.node accepts the Node versions we declare", () => {
  const ours = (readJson('package.json') as { engines: { node: string } }).engines.node;
  assert.ok(semver.validRange(ours), ours);
  const lock = readJson('package-lock.json') as { packages: Record<string, LockEntry> };
  const narrower: string[] = [];
  for (const [where, entry] of Object.entries(lock.packages)) {
    const theirs = where !== '' && !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
    if (theirs === undefined) continue;
    if (!semver.subset(ours, theirs, { includePrerelease: false })) {
      narrower.push(`${where}@${entry.version ?? '?'} wants node ${theirs}`);
    }
  }
  assert.deepEqual(narrower, [], `our engines.node is ${ours}`);
});
