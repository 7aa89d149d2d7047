import { execFile } from 'node:child_process';
import { CLI_MAIN } from './built.js';
import { ROOT } from './repo-root.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `mds …` as a user runs it: a separate process on the database of DATABASE_URL. */
export function mds(databaseUrl: string, ...args: string[]): Promise<CliRun> {
  return mdsWithEnv({ DATABASE_URL: databaseUrl }, ...args);
}

/** `mds …` with these environment variables (over PATH and HOME only). */
export function mdsWithEnv(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_MAIN, ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
