import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { ROOT } from './repo-root.js';

/**
 * A client as a user generates it: openapi-typescript's types of `doc` (api.d.ts) beside
 * `program` (program.ts, importing them and openapi-fetch), compiled by tsc in strict mode;
 * `emit` writes program.js. Made inside node_modules so that `openapi-fetch` resolves to the
 * installed one; `use(dir)` runs before the folder is removed.
 */
export async function withGeneratedClient(
  doc: unknown,
  program: string,
  opts: { emit: boolean },
  use: (dir: string) => Promise<void> = async () => {},
): Promise<void> {
  const dir = fs.mkdtempSync(path.join(ROOT, 'node_modules', '.mds-generated-client-'));
  try {
    fs.writeFileSync(path.join(dir, 'api.d.ts'), astToString(await openapiTS(structuredClone(doc) as never)));
    fs.writeFileSync(path.join(dir, 'program.ts'), program);
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: !opts.emit,
          skipLibCheck: true,
          types: [],
        },
        files: ['program.ts'],
      }),
    );
    try {
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
        encoding: 'utf8',
      });
    } catch (err) {
      assert.fail(`tsc: ${(err as { stdout?: string }).stdout ?? String(err)}`);
    }
    await use(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
