import { type Command, Option } from 'commander';
import { DEFAULT_URL, keyFrom } from '../client/http-retry.js';
import { IngestClient } from '../client/ingest-client.js';
import { DEFAULT_BATCH_SIZE, MINUTE_BATCH_SIZE, planPush, type PushOptions } from '../client/push-plan.js';
import { runBatches, type PushSummary } from '../client/push-runner.js';
import { MappingError } from '../client/row-mapping.js';

/**
 * `mds push`: the reference upstream client's flags and printing. Planning (file → batches) and
 * running (sending, retries, in-flight batches) live in the client library: src/client/push-plan.ts
 * and push-runner.ts. Prints each batch's status and every rejected record.
 */

export const PUSH_KEY_ENV = ['MDS_PUSH_KEY', 'UP_API_KEY'] as const;

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

const STD_IO: Io = {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
};

/** Runs a push; throws MappingError (or a network error) for problems before or while sending. */
export async function runPush(opts: PushOptions, io: Io = STD_IO): Promise<PushSummary> {
  const key = keyFrom(opts.key, PUSH_KEY_ENV);
  if (!key && !opts.dryRun)
    throw new MappingError('no ingest key: give --key or set MDS_PUSH_KEY (or UP_API_KEY)');
  const plan = planPush(opts);
  const { dataset: d, batches, businessDate, source } = plan;
  if (plan.dropped.length) io.err(`note: ignoring column(s) set by the server: ${plan.dropped.join(', ')}`);
  if (plan.lotsConverted.length > 0)
    io.err(`note: ${plan.lotsConverted.join(', ')} given in lots: multiplied by 100 (shares)`);
  if (plan.volumeWarning) io.err(`warning: ${plan.volumeWarning}`);
  if (plan.stamped.rows > 0)
    io.err(
      `note: updated_at absent on ${plan.stamped.rows} of ${plan.rows} rows: set to the push time ${plan.stamped.at} (give it a column, or --set updated_at=…, for a re-run to be a duplicate)`,
    );
  io.err(
    `pushing ${plan.rows} rows of ${d.name} in ${batches.length} batch(es) ` +
      `(business_date ${businessDate}, source ${source}${opts.fullSnapshot ? ', full snapshot' : ''}) to ${opts.url ?? DEFAULT_URL}`,
  );

  if (opts.dryRun) {
    const summary: PushSummary = { batches: [], accepted: 0, duplicate: 0, rejected: 0, ok: true };
    for (const b of batches) {
      summary.batches.push({
        batchId: b.meta.batch_id,
        records: b.records.length,
        httpStatus: 0,
        status: 'dry-run',
        result: null,
      });
      io.out(`${b.meta.batch_id}\t${b.records.length} records\tdry run (not sent)`);
    }
    return summary;
  }
  const client = new IngestClient({
    baseUrl: opts.url ?? DEFAULT_URL,
    key: key as string,
    maxAttempts: (opts.retries ?? 5) + 1,
    onRetry: ({ batchId, attempt, waitMs, reason }) =>
      io.err(`  ${batchId}: ${reason}; retry ${attempt} in ${(waitMs / 1000).toFixed(1)} s`),
  });
  const summary = await runBatches(client, batches, opts.concurrency, {
    note: io.err,
    batch: (i, b, result, offset) => {
      const body = result.body;
      const status = body.status ?? `error ${body.code}`;
      const counts =
        body.status === 'duplicate'
          ? 'already processed: nothing written'
          : body.status !== undefined
            ? `accepted ${body.accepted ?? 0}, duplicate ${body.duplicate ?? 0}, rejected ${body.rejected ?? 0}` +
              (body.pruned ? `, pruned ${body.pruned}` : '')
            : body.message;
      io.err(
        `[${i + 1}/${batches.length}] ${b.meta.batch_id}: ${b.records.length} records → HTTP ${result.httpStatus} ${status} (${counts})`,
      );
      io.out(
        `${b.meta.batch_id}\t${b.records.length} records\tHTTP ${result.httpStatus}\t${status}\t${counts}`,
      );
      for (const e of body.status === 'duplicate' ? [] : (body.errors ?? [])) {
        const where = e.index === null ? 'batch' : plan.lineOf(offset + e.index);
        io.out(
          `  rejected: ${where}${e.idempotency_key ? ` (${e.idempotency_key})` : ''}${e.field ? ` field ${e.field}` : ''}: ${e.reason}`,
        );
      }
    },
  });
  io.out(
    `total: ${batches.length} batch(es), ${plan.rows} records: accepted ${summary.accepted}, duplicate ${summary.duplicate}, rejected ${summary.rejected}`,
  );
  return summary;
}

/** `--map a=b --map c=d` → {a: 'b', c: 'd'}. */
function pairs(flag: string) {
  return (value: string, prev: Record<string, string> = {}): Record<string, string> => {
    const eq = value.indexOf('=');
    if (eq <= 0) throw new MappingError(`${flag} expects name=value (got "${value}")`);
    return { ...prev, [value.slice(0, eq)]: value.slice(eq + 1) };
  };
}

const positiveInt = (flag: string) => (v: string) => {
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new MappingError(`${flag} must be a positive integer`);
  return Number(v);
};

export function registerPushCommand(program: Command): void {
  program
    .command('push')
    .description('push a CSV, JSON or NDJSON file to the ingest API as schema-3.0 batches')
    .argument('<file>', 'file.csv, file.json (array of rows) or file.ndjson (one row per line)')
    .requiredOption('--dataset <name>', 'target dataset (see docs/tools.md or /openapi.json)')
    .option('--source <S>', 'meta.source; also fills the source field when the file has no such column')
    .option('--business-date <D>', 'meta.business_date YYYY-MM-DD (default: the partition date of the rows)')
    .option(
      '--lots-to-shares',
      'the file counts volumes in lots of 100: multiply every field in shares by 100',
    )
    .option('--full-snapshot', 'replace the partition (business_date, source) with the file: one batch')
    .option(
      '--batch-size <N>',
      `records per batch (default ${DEFAULT_BATCH_SIZE}; minute bars ${MINUTE_BATCH_SIZE}, whole blocks)`,
      positiveInt('--batch-size'),
    )
    .option('--url <URL>', 'service base URL', DEFAULT_URL)
    .option('--key <K>', 'ingest key (default: env MDS_PUSH_KEY or UP_API_KEY)')
    .option('--map <column=field>', 'read a column as a field (repeatable)', pairs('--map'))
    .option('--set <field=value>', 'give a field one value on every row (repeatable)', pairs('--set'))
    .option('--ignore <column>', 'drop a column (repeatable)', (v: string, prev: string[] = []) => [
      ...prev,
      v,
    ])
    .option(
      '--row-number <field>',
      "fill a field with each row's 1-based position in the file (e.g. line_no)",
    )
    .addOption(
      new Option('--format <F>', 'file format (default: from the extension)').choices([
        'csv',
        'json',
        'ndjson',
      ]),
    )
    .option(
      '--retries <N>',
      'retries per batch on network errors, 5xx and 409/4091',
      positiveInt('--retries'),
    )
    .option(
      '--concurrency <N>',
      'batches in flight at once (default 2; 1 when a key is in more than one batch)',
      positiveInt('--concurrency'),
    )
    .option('--dry-run', 'map and build the batches, print their ids, send nothing')
    .action(async (file: string, o: Omit<PushOptions, 'file'>) => {
      try {
        const summary = await runPush({ ...o, file });
        process.exitCode = summary.ok ? 0 : 2;
      } catch (err) {
        if (err instanceof MappingError) {
          console.error(`mds push: ${err.message}`);
          process.exitCode = 1;
          return;
        }
        throw err;
      }
    });
}
