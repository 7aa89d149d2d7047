import type { Config } from '../config.js';
import { databaseId, databaseIdentity } from '../model/database-url.js';

/** How long the server on the configured port may take to answer /health: a CLI must not hang. */
const HEALTH_TIMEOUT_MS = 1500;

/**
 * After a command wrote a key or token to the database of DATABASE_URL: the lines that say which
 * database (no credentials) and whether the server on the configured port (`PORT`, default 8080)
 * uses it, compared by the `database_id` its /health answers (docs/tools.md, "Which database").
 * A server that uses another database is a warning on stderr: the new key would not work there.
 */
export async function databaseLines(config: Config): Promise<string[]> {
  const mine = databaseIdentity(config.DATABASE_URL);
  const lines = [`Database: ${mine} (DATABASE_URL)`];
  const url = `http://127.0.0.1:${config.PORT}/health`;
  let theirs: string | null | undefined;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    const body = (await res.json()) as { database_id?: unknown };
    theirs = typeof body.database_id === 'string' ? body.database_id : null;
  } catch {
    theirs = undefined;
  }
  if (theirs === undefined) {
    lines.push(`No server answers on port ${config.PORT}: start one with this DATABASE_URL to use it.`);
  } else if (theirs === databaseId(config.DATABASE_URL)) {
    lines.push(
      `The server on port ${config.PORT} uses this database: it accepts the new key or token at once.`,
    );
  } else if (theirs !== null) {
    process.stderr.write(
      `warning: the server on port ${config.PORT} uses another database than ${mine}: it will not ` +
        "accept the new key or token. Run the command with that server's DATABASE_URL (and, for a " +
        'relative sqlite: path, from its directory).\n',
    );
  }
  return lines;
}
