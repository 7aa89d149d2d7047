#!/usr/bin/env node
import { Command } from 'commander';
import { VERSION } from '../version.js';

/** How a command file adds its command(s) to the program. */
type Register = (program: Command) => void;

/**
 * `mds`: the operator's and the upstream platform's command line. Each command lives in its own
 * file, loaded only when that command is named: importing all of them loaded the store, the ingest,
 * the export encoders and the demo generators at every call (about 0.4 s of CPU, docs/testing.md).
 * In the order `mds --help` lists them.
 */
const COMMANDS = {
  keys: async () => (await import('./keys-command.js')).registerKeysCommands,
  'admin-token': async () => (await import('./admin-token-command.js')).registerAdminTokenCommand,
  push: async () => (await import('./push-command.js')).registerPushCommand,
  export: async () => (await import('./export-command.js')).registerExportCommand,
  mirror: async () => (await import('./mirror-command.js')).registerMirrorCommand,
  seed: async () => (await import('./seed-command.js')).registerSeedCommand,
} satisfies Record<string, () => Promise<Register>>;

const isCommand = (name: string | undefined): name is keyof typeof COMMANDS =>
  name !== undefined && Object.hasOwn(COMMANDS, name);

const program = new Command('mds').description('market-data-service command line').version(VERSION);
// The program's own options are flags only, so the first other argument names the command; with
// none (`mds --help`), `mds help <command>` or an unknown name, every command is registered.
const named = process.argv.slice(2).find((a) => !a.startsWith('-'));
const loads = isCommand(named) ? [COMMANDS[named]] : Object.values(COMMANDS);
for (const register of await Promise.all(loads.map((load) => load()))) register(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`mds: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
