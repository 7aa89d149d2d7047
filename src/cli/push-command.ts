import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { type Command, Option } from 'commander';
import { parse } from 'csv-parse/sync';
import { CATALOG, type Dataset } from '../catalog/catalog.js';
import { buildBatches, type IngestBatch, type RowData } from '../client/batch-builder.js';
import { IngestClient, type PushResult } from '../client/ingest-client.js';
import { MappingError, mapRows } from '../client/row-mapping.js';
import { isDate } from '../ingest/values.js';

/**
 * `mds push`: the reference upstream client. Reads a CSV / JSON / NDJSON file, maps its
 * columns to the dataset's ingest fields, builds schema-3.0 batches with content-derived ids
 * (a re-run is a duplicate, not a second write), pushes them with retries, and prints each
 * batch's status and every rejected record.
 */

export const DEFAULT_URL = 'http://127.0.0.1:8080';
export const DEFAULT_BATCH_SIZE = 10_000;
export const DEFAULT_CONCURRENCY = 2;

export interface PushOptions {
  dataset: string;
  file: string;
  source?: string;
  businessDate?: string;
  fullSnapshot?: boolean;
  batchSize?: number;
  url?: string;
  key?: string;
  map?: Record<string, string>;
  set?: Record<string, string>;
  ignore?: string[];
  rowNumber?: string;
  format?: 'csv' | 'json' | 'ndjson';
  retries?: number;
  /** Batches in flight at once (default 2); 1 when a key appears in more than one batch. */
  concurrency?: number;
  dryRun?: boolean;
}

export interface PushSummary {
  batches: {
    batchId: string;
    records: number;
    httpStatus: number;
    status: string;
    result: PushResult | null;
  }[];
  accepted: number;
  duplicate: number;
  rejected: number;
  /** True when every batch was accepted or duplicate. */
  ok: boolean;
}

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

const STD_IO: Io = {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
};

interface FileRows {
  columns: string[];
  rows: Record<string, unknown>[];
  lineOf: (i: number) => string;
}

function readFileRows(file: string, format: 'csv' | 'json' | 'ndjson'): FileRows {
  const text = fs.readFileSync(file, 'utf8');
  const name = path.basename(file);
  if (format === 'csv') {
    const parsed = parse(text, {
      columns: true,
      bom: true,
      skip_empty_lines: true,
      info: true,
      relax_column_count: false,
    }) as { record: Record<string, string>; info: { lines: number } }[];
    const header = (parse(text, { bom: true, to_line: 1 }) as string[][])[0] ?? [];
    return {
      columns: header,
      rows: parsed.map((p) => p.record),
      lineOf: (i) => `${name} line ${parsed[i]?.info.lines ?? '?'}`,
    };
  }
  let rows: unknown[];
  let lineNumbers: number[] | null = null;
  if (format === 'ndjson') {
    rows = [];
    lineNumbers = [];
    text.split(/\r?\n/).forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        rows.push(JSON.parse(line));
      } catch {
        throw new MappingError(`${name} line ${i + 1}: not valid JSON`);
      }
      lineNumbers?.push(i + 1);
    });
  } else {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new MappingError(`${name}: not valid JSON (${(err as Error).message})`);
    }
    // An array of rows, or an object with `data` (a query response) or `records` of rows.
    const obj = doc as Record<string, unknown>;
    rows = Array.isArray(doc)
      ? doc
      : Array.isArray(obj.data)
        ? obj.data
        : Array.isArray(obj.records)
          ? obj.records
          : [];
    if (!Array.isArray(doc) && rows.length === 0 && !Array.isArray(obj.data) && !Array.isArray(obj.records)) {
      throw new MappingError(`${name}: expected a JSON array of rows`);
    }
  }
  const columns = new Set<string>();
  rows.forEach((r, i) => {
    if (typeof r !== 'object' || r === null || Array.isArray(r)) {
      throw new MappingError(`${name} row ${i + 1}: each row must be a JSON object`);
    }
    for (const k of Object.keys(r)) columns.add(k);
  });
  return {
    columns: [...columns],
    rows: rows as Record<string, unknown>[],
    lineOf: (i) => (lineNumbers ? `${name} line ${lineNumbers[i] ?? '?'}` : `${name} row ${i + 1}`),
  };
}

function formatOf(file: string): 'csv' | 'json' | 'ndjson' {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.csv' || ext === '.txt') return 'csv';
  if (ext === '.json') return 'json';
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  throw new MappingError(
    `cannot tell the format of ${file} from its extension; give --format csv|json|ndjson`,
  );
}

const todayUtc = () => new Date().toISOString().slice(0, 10);

/** meta.business_date: given, or the partition value of the rows (one value, or the latest). */
function businessDateOf(d: Dataset, rows: RowData[], opts: PushOptions): string {
  if (opts.businessDate) return opts.businessDate;
  if (!d.partition) return todayUtc();
  const values = new Set(rows.map((r) => r[d.partition?.name ?? ''] as string));
  if (opts.fullSnapshot && values.size > 1) {
    throw new MappingError(
      `a full snapshot replaces one partition (${d.partition.name} = business_date) but the file holds ${values.size} values of ${d.partition.name}; give --business-date and push only that ${d.partition.name}`,
    );
  }
  return [...values].sort().at(-1) ?? todayUtc();
}

/** meta.source: --source, or the rows' single source value. */
function sourceOf(d: Dataset, rows: RowData[], opts: PushOptions): string {
  if (opts.source) return opts.source;
  const name = d.sourceField?.name;
  const values = new Set(name ? rows.map((r) => r[name]).filter((v) => v !== undefined && v !== null) : []);
  if (values.size === 1) return String([...values][0]);
  if (opts.fullSnapshot) {
    throw new MappingError('a full snapshot replaces the rows of one source: give --source');
  }
  return values.size > 1 ? 'mixed' : 'mds-push';
}

function checkSnapshot(
  d: Dataset,
  rows: RowData[],
  businessDate: string,
  source: string,
  lineOf: (i: number) => string,
): void {
  rows.forEach((r, i) => {
    if (d.partition && r[d.partition.name] !== businessDate) {
      throw new MappingError(
        `${lineOf(i)}: ${d.partition.name} ${String(r[d.partition.name])} is outside the snapshot's partition (business_date ${businessDate})`,
      );
    }
    if (d.sourceField && r[d.sourceField.name] !== undefined && r[d.sourceField.name] !== source) {
      throw new MappingError(
        `${lineOf(i)}: source ${String(r[d.sourceField.name])} differs from the snapshot's source ${source}`,
      );
    }
  });
}

/** Runs a push; throws MappingError (or a network error) for problems before or while sending. */
export async function runPush(opts: PushOptions, io: Io = STD_IO): Promise<PushSummary> {
  const d = CATALOG.byName.get(opts.dataset);
  if (!d)
    throw new MappingError(
      `unknown dataset "${opts.dataset}"; datasets: ${[...CATALOG.byName.keys()].join(', ')}`,
    );
  if (opts.fullSnapshot && opts.batchSize !== undefined) {
    throw new MappingError(
      '--batch-size cannot split a full snapshot: the service deletes every row of the partition that the batch does not contain, so each part would delete the rows of the others. Push the snapshot as one batch (the service accepts up to MDS_MAX_RECORDS records, default 100,000), or push incrementally.',
    );
  }
  const size = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isSafeInteger(size) || size < 1)
    throw new MappingError('--batch-size must be a positive integer');
  const key = opts.key ?? process.env.MDS_PUSH_KEY ?? process.env.UP_API_KEY;
  if (!key && !opts.dryRun)
    throw new MappingError('no ingest key: give --key or set MDS_PUSH_KEY (or UP_API_KEY)');
  if (opts.businessDate && !isDate(opts.businessDate)) {
    throw new MappingError('--business-date must be a real date YYYY-MM-DD');
  }
  if (!fs.existsSync(opts.file)) throw new MappingError(`no such file: ${opts.file}`);

  const file = readFileRows(opts.file, opts.format ?? formatOf(opts.file));
  if (file.rows.length === 0) throw new MappingError(`${opts.file} holds no rows`);
  const mapped = mapRows(d, file.columns, file.rows, opts, file.lineOf);
  if (mapped.dropped.length)
    io.err(`note: ignoring column(s) set by the server: ${mapped.dropped.join(', ')}`);
  const businessDate = businessDateOf(d, mapped.rows, opts);
  const source = sourceOf(d, mapped.rows, opts);
  if (opts.fullSnapshot) checkSnapshot(d, mapped.rows, businessDate, source, file.lineOf);

  const digest = createHash('sha256').update(fs.readFileSync(opts.file)).digest('hex').slice(0, 12);
  const batches = buildBatches(d, mapped.rows, opts.fullSnapshot ? Math.max(mapped.rows.length, 1) : size, {
    source,
    businessDate,
    snapshotType: opts.fullSnapshot ? 'full_snapshot' : 'incremental',
    runId: `mds-push-${digest}`,
  });
  io.err(
    `pushing ${mapped.rows.length} rows of ${d.name} in ${batches.length} batch(es) ` +
      `(business_date ${businessDate}, source ${source}${opts.fullSnapshot ? ', full snapshot' : ''}) to ${opts.url ?? DEFAULT_URL}`,
  );

  const summary: PushSummary = { batches: [], accepted: 0, duplicate: 0, rejected: 0, ok: true };
  if (opts.dryRun) {
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
  // Several batches in flight overlap one batch's parsing and validation with another's write
  // (PostgreSQL: 0.61× the raw ingest ceiling with two against 0.49× with one, bench/pg-ingest.ts).
  // Only when no key is in two batches: their order decides which value is kept.
  const repeated = repeatedKey(batches);
  if (repeated) io.err(`one batch at a time: ${repeated}, so the order of the batches matters`);
  const inFlight = repeated ? 1 : (opts.concurrency ?? DEFAULT_CONCURRENCY);
  const sent: Promise<{ ok: PushResult } | { err: unknown }>[] = [];
  const send = (): void => {
    const b = batches[sent.length];
    if (b)
      sent.push(
        client.push(b).then(
          (ok) => ({ ok }),
          (err: unknown) => ({ err }),
        ),
      );
  };
  while (sent.length < Math.min(inFlight, batches.length)) send();
  let offset = 0;
  for (const [i, b] of batches.entries()) {
    const outcome = await (sent[i] as (typeof sent)[number]);
    if ('err' in outcome) throw outcome.err;
    send();
    const result = outcome.ok;
    const body = result.body;
    const status = body.status ?? `error ${body.code}`;
    summary.batches.push({
      batchId: b.meta.batch_id,
      records: b.records.length,
      httpStatus: result.httpStatus,
      status,
      result,
    });
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
    if (body.status === 'duplicate') {
      // The answer repeats the original batch's counts; this push wrote nothing.
      summary.duplicate += b.records.length;
    } else {
      summary.accepted += body.accepted ?? 0;
      summary.duplicate += body.duplicate ?? 0;
      summary.rejected += body.rejected ?? 0;
    }
    if (body.status !== 'accepted' && body.status !== 'duplicate') summary.ok = false;
    for (const e of body.status === 'duplicate' ? [] : (body.errors ?? [])) {
      const where = e.index === null ? 'batch' : file.lineOf(offset + e.index);
      io.out(
        `  rejected: ${where}${e.idempotency_key ? ` (${e.idempotency_key})` : ''}${e.field ? ` field ${e.field}` : ''}: ${e.reason}`,
      );
    }
    offset += b.records.length;
  }
  io.out(
    `total: ${batches.length} batch(es), ${mapped.rows.length} records: accepted ${summary.accepted}, duplicate ${summary.duplicate}, rejected ${summary.rejected}`,
  );
  return summary;
}

/** A unique key that is in more than one batch (a file correcting itself further down), described. */
function repeatedKey(batches: readonly IngestBatch[]): string | null {
  if (batches.length < 2) return null;
  const seenIn = new Map<string, number>();
  for (const [i, b] of batches.entries()) {
    for (const r of b.records) {
      const k = JSON.stringify(r.unique_key);
      const at = seenIn.get(k);
      if (at !== undefined && at !== i) return `key ${k} is in batches ${at + 1} and ${i + 1}`;
      seenIn.set(k, i);
    }
  }
  return null;
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
    .option('--full-snapshot', 'replace the partition (business_date, source) with the file: one batch')
    .option(
      '--batch-size <N>',
      `records per batch (default ${DEFAULT_BATCH_SIZE})`,
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
