import { type Command, InvalidArgumentError } from 'commander';
import { CATALOG } from '../catalog/catalog.js';
import { loadConfig } from '../config.js';
import { IngestService } from '../ingest/ingest-service.js';
import { createStore } from '../storage/create-store.js';
import { IngestClient } from '../client/ingest-client.js';
import { defaultDemoOptions, seedDemo, type DatasetSeedResult, type Sender } from '../demo/seed.js';
import { isDate } from '../model/values.js';
import { DEFAULT_URL } from '../client/http-retry.js';

/**
 * `mds seed --demo`: synthetic data for every dataset, so a fresh install answers its first
 * query with rows. By default it writes straight into DATABASE_URL through the IngestService
 * (the same validation as the API, no server needed); with --url it pushes over HTTP instead.
 */

interface SeedFlags {
  demo?: boolean;
  url?: string;
  key?: string;
  databaseUrl?: string;
  days?: number;
  end?: string;
  seed?: number;
}

const int = (flag: string, min: number) => (v: string) => {
  if (!/^\d+$/.test(v) || Number(v) < min)
    throw new InvalidArgumentError(`${flag} must be an integer ≥ ${min}`);
  return Number(v);
};

function report(r: DatasetSeedResult): void {
  process.stderr.write(
    `${r.dataset.padEnd(26)} ${String(r.rows).padStart(6)} rows  ${r.status.padEnd(9)} ` +
      `accepted ${r.accepted}, duplicate ${r.duplicate}, rejected ${r.rejected}\n`,
  );
  for (const e of r.errors.slice(0, 5)) {
    process.stderr.write(`    rejected record ${e.index ?? '-'} field ${e.field ?? '-'}: ${e.reason}\n`);
  }
}

export function registerSeedCommand(program: Command): void {
  program
    .command('seed')
    .description('load synthetic demo data into every dataset (nothing in it is real market data)')
    .option('--demo', 'generate and load the demo data set (required: the only kind of seed)')
    .option('--database-url <url>', 'write directly into this database (default: env DATABASE_URL)')
    .option('--url <URL>', `push through a running service instead (e.g. ${DEFAULT_URL})`)
    .option('--key <K>', 'ingest key for --url (default: env MDS_PUSH_KEY or UP_API_KEY)')
    .option('--days <N>', 'trading days of daily history (default 250)', int('--days', 1))
    .option('--end <YYYY-MM-DD>', 'last trading day (default: the latest weekday)')
    .option(
      '--seed <N>',
      'random seed: the same seed and end give the same data (default 42)',
      int('--seed', 0),
    )
    .action(async (flags: SeedFlags) => {
      if (!flags.demo) throw new Error('seed: give --demo (synthetic data for every dataset)');
      if (flags.end !== undefined && !isDate(flags.end)) throw new Error('--end must be a date YYYY-MM-DD');
      if (flags.url && flags.databaseUrl) throw new Error('give either --url or --database-url, not both');
      const opts = defaultDemoOptions({
        ...(flags.end ? { end: flags.end } : {}),
        ...(flags.days ? { days: flags.days } : {}),
        ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
      });
      const started = Date.now();
      let results: DatasetSeedResult[];
      // Where the data can be read next: the service pushed to, or a server on the configured port.
      let next: string;
      if (flags.url) {
        const key = flags.key ?? process.env.MDS_PUSH_KEY ?? process.env.UP_API_KEY;
        if (!key) throw new Error('--url needs an ingest key: --key or env MDS_PUSH_KEY / UP_API_KEY');
        const client = new IngestClient({ baseUrl: flags.url, key });
        const send: Sender = async (b) => {
          const { body, httpStatus } = await client.push(b);
          if (body.status === undefined)
            throw new Error(`push failed: HTTP ${httpStatus} ${body.code} ${body.message}`);
          return {
            status: body.status,
            accepted: body.accepted ?? 0,
            duplicate: body.duplicate ?? 0,
            rejected: body.rejected ?? 0,
            errors: body.errors ?? [],
          };
        };
        next = `then curl -H 'Q-API-KEY: <a query key>' '${flags.url.replace(/\/+$/, '')}`;
        process.stderr.write(`seeding demo data through ${flags.url} (end ${opts.end}, ${opts.days} days)\n`);
        results = await seedDemo(CATALOG, send, opts, report);
      } else {
        const config = loadConfig({
          ...process.env,
          ...(flags.databaseUrl ? { DATABASE_URL: flags.databaseUrl } : {}),
        });
        next = `npm start, then curl -H 'Q-API-KEY: <a query key>' 'http://127.0.0.1:${config.PORT}`;
        const store = await createStore(config.DATABASE_URL, CATALOG);
        try {
          await store.migrate();
          const ingest = new IngestService(CATALOG, store, { maxRecords: config.MDS_MAX_RECORDS });
          const send: Sender = async (b) => {
            const o = await ingest.ingest(b);
            const r = o.record;
            return o.kind === 'duplicate'
              ? { status: 'duplicate', accepted: 0, duplicate: r.record_count, rejected: 0, errors: [] }
              : {
                  status: r.status,
                  accepted: r.accepted,
                  duplicate: r.duplicate,
                  rejected: r.rejected,
                  errors: r.errors,
                };
          };
          process.stderr.write(
            `seeding demo data into ${store.backend} (${config.DATABASE_URL.replace(/\/\/[^@/]*@/, '//…@')}; end ${opts.end}, ${opts.days} days)\n`,
          );
          results = await seedDemo(CATALOG, send, opts, report);
        } finally {
          await store.close();
        }
      }
      const rows = results.reduce((a, r) => a + r.rows, 0);
      const rejected = results.reduce((a, r) => a + r.rejected, 0);
      process.stdout.write(
        `seeded ${rows} demo rows into ${results.length} datasets in ${((Date.now() - started) / 1000).toFixed(1)} s` +
          `${rejected ? ` (${rejected} rejected!)` : ''}\n`,
      );
      process.stdout.write(`next: ${next}/api/v1/etf/kline?code=510300&limit=5'\n`);
      if (rejected > 0) process.exitCode = 2;
    });
}
