import type { Command } from 'commander';

/** Placeholder: the `keys` command is being built. */
export function registerKeysCommands(_program: Command): void {}
