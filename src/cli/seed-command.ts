import type { Command } from 'commander';

/** Placeholder: the `seed` command is being built. */
export function registerSeedCommand(_program: Command): void {}
