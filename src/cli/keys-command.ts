import { InvalidArgumentError, type Command } from 'commander';
import type { Store } from '../storage/store.js';
import type { Config } from '../config.js';
import { databaseLines } from './database-check.js';
import { withStore } from './with-store.js';
import type { KeyService, KeyView } from '../access/key-service.js';

/** `none` (or `unlimited`) clears a limit; otherwise a positive integer. (Commander turns a null into '', hence the word.) */
function limitArg(v: string): number | 'none' {
  if (v === 'none' || v === 'unlimited') return 'none';
  if (!/^\d+$/.test(v) || Number(v) < 1)
    throw new InvalidArgumentError('expected a positive integer or "none"');
  return Number(v);
}

const limitText = (n: number | null, unit: 'minute' | 'day'): string =>
  n !== null ? `${n}/${unit}` : unit === 'minute' ? 'no rate limit' : 'no daily quota';

/** One line, tab-separated: id, name, scope, state first (decisions.md), then the rest. */
function line(k: KeyView): string {
  return [
    k.id,
    k.name,
    k.scope,
    k.revoked_at ? 'revoked' : 'active',
    `${k.prefix}…`,
    limitText(k.rate_per_minute, 'minute'),
    limitText(k.daily_quota, 'day'),
    `created ${k.created_at}`,
    `last used ${k.last_used_at ?? 'never'}`,
  ].join('\t');
}

const out = (s: string): void => {
  process.stdout.write(`${s}\n`);
};

/** The key service is loaded when a command runs, not for `mds keys --help` (see with-store.ts). */
const withKeys = async <T>(
  fn: (keys: KeyService, store: Store, config: Config) => Promise<T>,
): Promise<T> => {
  const { KeyService, keyDefaults } = await import('../access/key-service.js');
  return withStore((store, config) => fn(new KeyService(store, keyDefaults(config)), store, config));
};

/** A full id, or a unique beginning of one (at least 4 characters), like git's short hashes. */
async function resolveId(store: Store, id: string): Promise<string> {
  const all = (await store.keys.listKeys()).filter((k) => k.scope !== 'admin');
  if (all.some((k) => k.id === id)) return id;
  const matches = id.length >= 4 ? all.filter((k) => k.id.startsWith(id)) : [];
  if (matches.length === 1) return (matches[0] as { id: string }).id;
  throw new Error(matches.length > 1 ? `key id "${id}" is ambiguous` : `unknown key id "${id}"`);
}

interface LimitOpts {
  name?: string;
  ratePerMinute?: number | 'none';
  dailyQuota?: number | 'none';
}

function limitFields(o: LimitOpts): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (o.name !== undefined) body.name = o.name;
  if (o.ratePerMinute !== undefined)
    body.rate_per_minute = o.ratePerMinute === 'none' ? null : o.ratePerMinute;
  if (o.dailyQuota !== undefined) body.daily_quota = o.dailyQuota === 'none' ? null : o.dailyQuota;
  return body;
}

/** `mds keys create|list|update|revoke` on the database of DATABASE_URL. */
export function registerKeysCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description('manage API keys (in the database of DATABASE_URL, default sqlite:./data/market-data.db)');

  keys
    .command('create')
    .description('create a key; prints it alone on the last line (it is shown only this once)')
    .requiredOption('--scope <scope>', 'query or ingest')
    .option('--name <name>', 'a name to recognise the key by')
    .option(
      '--rate-per-minute <n>',
      'requests per minute, or "none" (default MDS_DEFAULT_RATE_PER_MINUTE)',
      limitArg,
    )
    .option(
      '--daily-quota <n>',
      'requests per UTC day, or "none" (default MDS_DEFAULT_DAILY_QUOTA)',
      limitArg,
    )
    .action(async (o: LimitOpts & { scope: string }) => {
      const { key, secret, where } = await withKeys(async (s, store, config) => ({
        ...(await s.create({ scope: o.scope, ...limitFields(o) })),
        where: await databaseLines(config),
      }));
      out(`Created ${key.scope} key "${key.name}", id ${key.id}`);
      for (const l of where) out(l);
      out(`Limits: ${limitText(key.rate_per_minute, 'minute')}, ${limitText(key.daily_quota, 'day')}`);
      out(
        `Header: ${key.scope === 'query' ? 'Q-API-KEY' : 'UP-API-KEY'}. Store the key now; it is not shown again:`,
      );
      out(secret);
    });

  keys
    .command('list')
    .description('one line per key: id, name, scope, state, prefix, limits, times (never a secret)')
    .option('--json', 'a JSON array instead')
    .action(async (o: { json?: boolean }) => {
      const list = await withKeys((s) => s.list());
      if (o.json) out(JSON.stringify(list, null, 2));
      else if (list.length === 0)
        process.stderr.write('no keys yet: mds keys create --scope query --name me\n');
      else for (const k of list) out(line(k));
    });

  keys
    .command('update <id>')
    .description('change the name or limits of a key ("none" removes a limit)')
    .option('--name <name>', 'a new name')
    .option('--rate-per-minute <n>', 'requests per minute, or "none"', limitArg)
    .option('--daily-quota <n>', 'requests per UTC day, or "none"', limitArg)
    .action(async (id: string, o: LimitOpts) => {
      const body = limitFields(o);
      if (Object.keys(body).length === 0)
        throw new Error('nothing to change: give --name, --rate-per-minute or --daily-quota');
      const key = await withKeys(async (s, store) => s.update(await resolveId(store, id), body));
      out(line(key));
    });

  keys
    .command('revoke <id>')
    .description('revoke a key (refused everywhere within 2 seconds)')
    .action(async (id: string) => {
      const key = await withKeys(async (s, store) => s.revoke(await resolveId(store, id)));
      out(line(key));
    });
}
