import { createRequire } from 'node:module';
import Database from 'better-sqlite3';

/**
 * better-sqlite3's addon, located once per process or thread. Left to find it itself, better-sqlite3
 * asks the `bindings` package, which tries a dozen candidate paths with fs calls: 7–10 ms of CPU
 * in each process and thread that opens a database (docs/performance.md "Start-up, round two").
 * Where npm puts it (build/Release, downloaded or built); where it is not there (a debug build
 * from source), better-sqlite3's own lookup.
 */
const ADDON = ((): string | undefined => {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
  } catch {
    return undefined;
  }
})();

/** A better-sqlite3 connection to `file`, its addon loaded from where npm put it. */
export function openDatabase(file: string): Database.Database {
  return new Database(file, ADDON === undefined ? {} : { nativeBinding: ADDON });
}
