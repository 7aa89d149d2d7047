#!/usr/bin/env node
import { Command } from 'commander';
import { VERSION } from '../version.js';
import { registerAdminTokenCommand } from './admin-token-command.js';
import { registerExportCommand } from './export-command.js';
import { registerKeysCommands } from './keys-command.js';
import { registerPushCommand } from './push-command.js';
import { registerSeedCommand } from './seed-command.js';

/** `mds`: the operator's and the upstream platform's command line. Each command lives in its own file. */
const program = new Command('mds').description('market-data-service command line').version(VERSION);
registerKeysCommands(program);
registerAdminTokenCommand(program);
registerPushCommand(program);
registerExportCommand(program);
registerSeedCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`mds: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
