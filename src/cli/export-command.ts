import { type Command, Option } from 'commander';
import { DEFAULT_URL, keyFrom } from '../client/http-retry.js';
import { ExportError, Exporter, type ExportProgress, type Partitioning } from '../client/exporter.js';
import { EXPORT_FORMAT_NAMES, type ExportFormat } from '../export/export-formats.js';
import { isDate } from '../model/values.js';

/** `mds export`: flags and printing; the work is the client library's Exporter (src/client). */

export const QUERY_KEY_ENV = ['MDS_QUERY_KEY', 'Q_API_KEY'] as const;

interface ExportFlags {
  dataset: string;
  format: ExportFormat;
  out: string;
  partition: Partitioning;
  dateFrom?: string;
  dateTo?: string;
  asOf?: string;
  url: string;
  key?: string;
  retries?: number;
}

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

/** One line per file when stderr is not a terminal; a redrawn bar when it is. */
function progressPrinter(stream: NodeJS.WriteStream): (p: ExportProgress) => void {
  let rows = 0;
  return (p) => {
    if (p.state !== 'downloading') rows += p.rows;
    const width = 24;
    const filled = p.total === 0 ? width : Math.round((p.done / p.total) * width);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.done}/${p.total}`;
    const what =
      p.state === 'downloading'
        ? `${p.file} ${mb(p.bytes)}`
        : `${p.file} ${p.state === 'skipped' ? 'complete, skipped' : `${p.rows} rows, ${mb(p.bytes)}`}`;
    if (stream.isTTY)
      stream.write(
        `\r\x1b[K${bar} ${rows} rows  ${what}${p.done === p.total && p.state !== 'downloading' ? '\n' : ''}`,
      );
    else if (p.state !== 'downloading') stream.write(`${bar} ${what}\n`);
  };
}

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description('write a dataset to files (one per partition) with a manifest.json, from a running service')
    .requiredOption('--dataset <name>', 'dataset to export (see docs/endpoints.md)')
    .addOption(new Option('--format <F>', 'file format').choices(EXPORT_FORMAT_NAMES).default('parquet'))
    .requiredOption('--out <DIR>', 'directory for the files and manifest.json (created if missing)')
    .addOption(
      new Option('--partition <P>', "one file per month or year of the dataset's date field, or one file")
        .choices(['month', 'year', 'none'])
        .default('month'),
    )
    .option('--date-from <D>', 'first date (inclusive) of the date field')
    .option('--date-to <D>', 'last date (inclusive) of the date field')
    .option('--as-of <T>', 'the data as it was at this time (as_of), where the service supports it')
    .option('--url <URL>', 'service base URL', DEFAULT_URL)
    .option('--key <K>', `query key (default: env ${QUERY_KEY_ENV.join(' or ')})`)
    .option('--retries <N>', 'retries per request on network errors, 5xx and rate limits', (v) => Number(v))
    .action(async (o: ExportFlags) => {
      const fail = (msg: string) => {
        console.error(`mds export: ${msg}`);
        process.exitCode = 1;
      };
      const key = keyFrom(o.key, QUERY_KEY_ENV);
      if (!key) return fail(`no query key: give --key or set ${QUERY_KEY_ENV.join(' or ')}`);
      for (const [flag, v] of [
        ['--date-from', o.dateFrom],
        ['--date-to', o.dateTo],
      ] as const) {
        if (v !== undefined && !isDate(v)) return fail(`${flag} must be a real date YYYY-MM-DD`);
      }
      try {
        const exporter = new Exporter({
          dataset: o.dataset,
          format: o.format,
          out: o.out,
          partition: o.partition,
          dateFrom: o.dateFrom,
          dateTo: o.dateTo,
          asOf: o.asOf,
          url: o.url,
          key,
          retry: {
            maxAttempts: (o.retries ?? 5) + 1,
            onRetry: ({ what, attempt, waitMs, reason }) =>
              process.stderr.write(
                `\n  ${what}: ${reason}; retry ${attempt} in ${(waitMs / 1000).toFixed(1)} s\n`,
              ),
          },
          onProgress: progressPrinter(process.stderr),
        });
        const { manifest, written, skipped } = await exporter.run();
        console.log(
          `${manifest.dataset}: ${manifest.files.length} file(s), ${manifest.rows} rows (version ${manifest.version ?? '?'}) in ${o.out}: ${written} written, ${skipped} already complete`,
        );
      } catch (err) {
        if (err instanceof ExportError) return fail(err.message);
        throw err;
      }
    });
}
