import type { Command } from 'commander';

/** Placeholder: the `push` command is being built. */
export function registerPushCommand(_program: Command): void {}
