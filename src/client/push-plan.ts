import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { CATALOG, type Dataset } from '../catalog/catalog.js';
import { LOT_SIZE, SHARES_UNIT } from '../catalog/units.js';
import type { IngestBatch } from '../contract/batch.js';
import { isDate } from '../model/values.js';
import { buildBatches, type RowData } from './batch-builder.js';
import { MappingError, mapRows } from './row-mapping.js';

/**
 * Push planning (the client library; `mds push` adds flags and printing): read a CSV / JSON /
 * NDJSON file, map its columns to the dataset's ingest fields, decide business_date and source,
 * check a full snapshot's partition, and build schema-3.0 batches with content-derived ids (a
 * re-run is a duplicate, not a second write). Nothing is sent here.
 */

export const DEFAULT_BATCH_SIZE = 10_000;
/**
 * Minute bars' default: the service's default MDS_MAX_RECORDS, about 417 codes' days of 240
 * bars. A minute batch costs the service mostly per bar, plus per batch a transaction and a
 * read of its blocks, so fewer larger batches are cheaper (docs/minute-bars.md "Ingest").
 */
export const MINUTE_BATCH_SIZE = 100_000;

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
  /** Volumes given in lots of 100: every field whose unit is shares (catalog units.ts) × 100. */
  lotsToShares?: boolean;
}

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

/** What a push will send, and how to name a record's place in the file. */
export interface PushPlan {
  dataset: Dataset;
  batches: IngestBatch[];
  rows: number;
  /** Columns dropped because the server sets them. */
  dropped: string[];
  /** Rows whose absent updated_at was set to the push time, and that time. */
  stamped: { rows: number; at: string };
  /** Fields multiplied by the lot size (`lotsToShares`). */
  lotsConverted: string[];
  /** What the volumes look like (`volumeUnits`): null when they look like shares, or cannot tell. */
  volumeWarning: string | null;
  businessDate: string;
  source: string;
  lineOf: (i: number) => string;
}

/** Plans a push; throws MappingError for anything wrong with the options or the file. */
export function planPush(opts: PushOptions): PushPlan {
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
  const size = opts.batchSize ?? (d.blocks ? MINUTE_BATCH_SIZE : DEFAULT_BATCH_SIZE);
  if (!Number.isSafeInteger(size) || size < 1)
    throw new MappingError('--batch-size must be a positive integer');
  if (opts.businessDate && !isDate(opts.businessDate)) {
    throw new MappingError('--business-date must be a real date YYYY-MM-DD');
  }
  if (!fs.existsSync(opts.file)) throw new MappingError(`no such file: ${opts.file}`);

  const file = readFileRows(opts.file, opts.format ?? formatOf(opts.file));
  if (file.rows.length === 0) throw new MappingError(`${opts.file} holds no rows`);
  // updated_at is the time the upstream last changed a row; a file without one gets the push time.
  const at = new Date().toISOString();
  const mapped = mapRows(d, file.columns, file.rows, { ...opts, stampUpdatedAt: at }, file.lineOf);
  const converted = opts.lotsToShares ? lotsToShares(d, mapped.rows) : [];
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
  return {
    dataset: d,
    batches,
    rows: mapped.rows.length,
    dropped: mapped.dropped,
    stamped: { rows: mapped.stamped, at },
    lotsConverted: converted,
    volumeWarning: volumeWarning(d, mapped.rows, converted.length > 0),
    businessDate,
    source,
    lineOf: file.lineOf,
  };
}

/** Multiplies, in place, every value of a field counted in shares by the lot size; the fields. */
function lotsToShares(d: Dataset, rows: RowData[]): string[] {
  const fields = d.fields.filter((f) => f.unit === SHARES_UNIT);
  if (fields.length === 0)
    throw new MappingError(`--lots-to-shares: dataset ${d.name} has no field in shares`);
  for (const r of rows) {
    for (const f of fields) {
      const v = r[f.name];
      if (typeof v === 'number') r[f.name] = v * LOT_SIZE;
    }
  }
  return fields.map((f) => f.name);
}

/** The median of amount ÷ (volume × close) at which volumes look like lots (about 100) or, after
 * --lots-to-shares, like shares multiplied once too often (about 1/100): docs/tools.md. */
const LOTS_RATIO = { low: 50, high: 200 } as const;

/**
 * A warning when the file's volumes look like lots of 100 (or, converted, like shares made 100×
 * too large): for bars with a close, a volume in shares and an amount in yuan, the median over
 * the rows where all three are positive of amount ÷ (volume × close). In shares that is the
 * day's average price over its close, near 1; in lots about 100.
 */
export function volumeWarning(d: Dataset, rows: readonly RowData[], converted: boolean): string | null {
  const bar = d.daily?.bar;
  const values = d.blocks?.values;
  const close = bar?.close ?? values?.[3];
  const volume = bar?.volume ?? values?.[4];
  const amount = values?.[5] ?? d.fieldByName.get('amount');
  if (!close || !volume || !amount || volume.unit !== SHARES_UNIT || amount.unit !== 'CNY') return null;
  const ratios: number[] = [];
  for (const r of rows) {
    const [c, v, a] = [r[close.name], r[volume.name], r[amount.name]];
    if (typeof c === 'number' && typeof v === 'number' && typeof a === 'number' && c > 0 && v > 0 && a > 0)
      ratios.push(a / (v * c));
  }
  if (ratios.length === 0) return null;
  ratios.sort((x, y) => x - y);
  const median = ratios[Math.floor(ratios.length / 2)] as number;
  const shown = `the median of ${amount.name} / (${volume.name} × ${close.name}) over ${ratios.length} rows is ${median.toPrecision(3)}`;
  if (!converted && median >= LOTS_RATIO.low && median <= LOTS_RATIO.high)
    return `${volume.name} looks like lots of ${LOT_SIZE}, not shares: ${shown} (about 1 in shares). Push with --lots-to-shares if the file counts lots`;
  if (converted && median >= 1 / LOTS_RATIO.high && median <= 1 / LOTS_RATIO.low)
    return `${volume.name} looks like shares already: after --lots-to-shares ${shown} (about 1 in shares). Push without --lots-to-shares`;
  return null;
}

/** A unique key that is in more than one batch (a file correcting itself further down), described. */
export function repeatedKey(batches: readonly IngestBatch[]): string | null {
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
