import type { Command } from 'commander';
import { AdminTokens } from '../access/admin-tokens.js';
import { databaseLines } from './database-check.js';
import { withStore } from './with-store.js';

/**
 * `mds admin-token`: the way into the dashboard on a first run (or when the token is lost).
 * Prints a new admin token once, alone on the last line, to this terminal only: never in a URL,
 * never logged. Earlier admin tokens are revoked unless --keep. A running server on the same
 * database accepts it at once; the output says which database it went to (database-check.ts).
 */
export function registerAdminTokenCommand(program: Command): void {
  program
    .command('admin-token')
    .description(
      'create an admin token for the dashboard and admin API (revokes earlier ones unless --keep); prints it once',
    )
    .option('--name <name>', 'a name to recognise the token by', 'admin token')
    .option('--keep', 'keep earlier admin tokens valid (one per operator)')
    .action(async (o: { name: string; keep?: boolean }) => {
      const made = await withStore(async (store, config) => ({
        ...(await new AdminTokens(store).create({ name: o.name, ...(o.keep ? { keep: true } : {}) })),
        where: await databaseLines(config),
        port: config.PORT,
      }));
      const out = (s: string): boolean => process.stdout.write(`${s}\n`);
      out(`Created admin token "${o.name}", id ${made.id}`);
      for (const l of made.where) out(l);
      if (made.revoked > 0) out(`Revoked ${made.revoked} earlier admin token(s): they no longer sign in.`);
      out(
        `Sign in to the dashboard (http://localhost:${made.port}/dashboard) with it. Store it now; it is not shown again:`,
      );
      out(made.token);
    });
}
