import type { Command } from 'commander';
import { DEFAULT_URL, keyFrom } from '../client/http-retry.js';
import { Mirror, MirrorError } from '../client/mirror.js';
import { QUERY_KEY_ENV } from './export-command.js';

/** `mds mirror` and `mds mirror verify`: flags and printing; the work is src/client/mirror.ts. */

interface MirrorFlags {
  datasets?: string;
  codes?: string;
  url: string;
  key?: string;
  verify?: boolean;
}

const list = (v: string | undefined): string[] | undefined =>
  v === undefined ? undefined : v.split(',').filter((x) => x !== '');

export function registerMirrorCommand(program: Command): void {
  program
    .command('mirror')
    .description('keep a local Parquet folder (dataset/year) equal to the service, from its change feed')
    .argument('<dir>', 'the folder (created on the first run; its mirror-state.json says what it holds)')
    .option('--datasets <a,b>', 'datasets to mirror (first run; later runs keep them)')
    .option('--codes <x,y>', 'only these codes (first run; later runs keep them)')
    .option('--verify', 'compare the folder with a fresh export by SHA-256 instead of updating it')
    .option('--url <URL>', 'service base URL', DEFAULT_URL)
    .option('--key <K>', `query key (default: env ${QUERY_KEY_ENV.join(' or ')})`)
    .action(async (dir: string, o: MirrorFlags) => {
      const fail = (msg: string) => {
        console.error(`mds mirror: ${msg}`);
        process.exitCode = 1;
      };
      const key = keyFrom(o.key, QUERY_KEY_ENV);
      if (!key) return fail(`no query key: give --key or set ${QUERY_KEY_ENV.join(' or ')}`);
      const datasets = list(o.datasets);
      const codes = list(o.codes);
      const mirror = new Mirror({
        dir,
        key,
        url: o.url,
        ...(datasets ? { datasets } : {}),
        ...(codes ? { codes } : {}),
        onProgress: (line) => process.stderr.write(`${line}\n`),
      });
      try {
        if (o.verify) {
          const wrong = await mirror.verify();
          for (const w of wrong) console.log(w);
          if (wrong.length > 0) return fail(`${wrong.length} partition(s) differ from the service`);
          console.log(`${dir}: equal to a fresh export`);
          return;
        }
        const r = await mirror.run();
        console.log(
          `${dir}: ${r.full ? 'exported' : `${r.applied} change(s) applied`}; equal to the service at event ${r.since}`,
        );
      } catch (err) {
        if (err instanceof MirrorError) return fail(err.message);
        throw err;
      }
    });
}
