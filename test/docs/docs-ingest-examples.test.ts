// docs/ingest.md "hash what you send": its Python and JavaScript examples, run as a reader would
// run them, against a listening server. The Python one needs python3 (skipped, saying so, when
// it is absent).
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { INGEST_KEY, startApp, type Harness } from '../helpers/harness.js';
import { ROOT } from '../helpers/repo-root.js';

const doc = readFileSync(path.join(ROOT, 'docs', 'ingest.md'), 'utf8');
const section = doc.slice(
  doc.indexOf('## The checksum: hash what you send'),
  doc.indexOf('### The two other'),
);
const example = (lang: string): string => {
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(section);
  assert.ok(m, `docs/ingest.md has a ${lang} example under "hash what you send"`);
  return m[1] as string;
};
const python = spawnSync('python3', ['--version']).status === 0;

function run(cmd: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} failed: ${err.message}\n${stderr}`)) : resolve(stdout.trim()),
    );
  });
}

describe('docs/ingest.md examples, run', () => {
  let h: Harness;
  let env: Record<string, string>;
  before(async () => {
    h = await startApp('sqlite');
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = h.app.server.address() as AddressInfo;
    env = { MDS_URL: `http://127.0.0.1:${port}`, MDS_INGEST_KEY: INGEST_KEY };
  });
  after(async () => h.close());

  it(
    'the Python example is accepted, then a duplicate',
    { skip: python ? false : 'python3 not found' },
    async () => {
      const code = example('python');
      assert.equal(await run('python3', ['-c', code], env), '200 accepted');
      assert.equal(await run('python3', ['-c', code], env), '200 duplicate');
    },
  );

  it('the JavaScript example is accepted, then a duplicate', async () => {
    const code = example('js');
    const args = ['--input-type=module', '-e', code];
    assert.equal(await run(process.execPath, args, env), '200 accepted');
    assert.equal(await run(process.execPath, args, env), '200 duplicate');
  });
});
