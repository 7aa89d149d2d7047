import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './repo-root.js';

/** test/helpers/fresh-probe.mjs run in its own process: nothing the test does can delay it. */

export interface Probed {
  path: string;
  status: number;
  code?: number | null;
  error?: string;
  ms: number;
}

/** Runs the probe process over `plan` (a fresh connection per request); each given up after `giveUpMs`. */
export function probe(
  port: number,
  plan: { path: string; headers?: Record<string, string> }[],
  giveUpMs: number,
): Promise<Probed[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        path.join(ROOT, 'test', 'helpers', 'fresh-probe.mjs'),
        String(port),
        JSON.stringify(plan),
        String(giveUpMs),
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('error', reject);
    child.once('exit', () => {
      try {
        resolve(JSON.parse(out) as Probed[]);
      } catch {
        reject(new Error(`probe printed: ${out}`));
      }
    });
  });
}
