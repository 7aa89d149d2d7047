import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { RecordBatchReader } from 'apache-arrow';
import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet';
import { CATALOG, type Dataset, type Field } from '../catalog/catalog.js';
import { EXPORT_FORMATS, type ExportFormat, type ExportTraits } from '../export/export-formats.js';
import { baseUrl, isTransient, retryAfterMs, withRetries, type RetryPolicy } from './http-retry.js';

/**
 * Bulk files of one dataset from a running service, over HTTP with a query key (`mds export`):
 * one file per partition (month or year of the dataset's date field, or one file), each the
 * endpoint's `format=` answer for that date range, and a `manifest.json` (dataset, version, row
 * count and SHA-256 per file, schema). Resumable: a file already listed in the manifest with a
 * matching SHA-256 is kept; a download goes to `<file>.part` and is renamed when complete, and
 * the manifest is rewritten after every file.
 */

export type Partitioning = 'month' | 'year' | 'none';

export interface ExportOptions {
  dataset: string;
  format: ExportFormat;
  out: string;
  partition?: Partitioning;
  dateFrom?: string;
  dateTo?: string;
  asOf?: string;
  url?: string;
  key: string;
  retry?: RetryPolicy;
  onProgress?: (p: ExportProgress) => void;
  fetch?: typeof fetch;
}

export interface ManifestFile {
  path: string;
  partition: string;
  date_from: string | null;
  date_to: string | null;
  rows: number;
  bytes: number;
  sha256: string;
  /** The dataset's version when the file was written (from the answer's ETag). */
  version: number | null;
}

export interface Manifest {
  dataset: string;
  endpoint: string;
  format: ExportFormat;
  media_type: string;
  partition: Partitioning;
  filters: { date_from: string | null; date_to: string | null; as_of: string | null };
  /** The dataset's version when the export finished (the latest file's). */
  version: number | null;
  rows: number;
  schema: { name: string; type: Field['type']; nullable: boolean }[];
  files: ManifestFile[];
  created_at: string;
}

export interface ExportProgress {
  done: number;
  total: number;
  file: string;
  state: 'downloading' | 'written' | 'skipped';
  bytes: number;
  rows: number;
}

export class ExportError extends Error {
  constructor(
    message: string,
    readonly code: number | null = null,
  ) {
    super(message);
  }
}

interface Period {
  name: string;
  from: string | null;
  to: string | null;
}

const lastDayOfMonth = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

/** The periods between two dates (inclusive), clipped to them. */
export function periods(first: string, last: string, by: 'month' | 'year'): Period[] {
  const out: Period[] = [];
  let y = Number(first.slice(0, 4));
  let m = by === 'month' ? Number(first.slice(5, 7)) : 1;
  for (;;) {
    const name =
      by === 'month'
        ? `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}`
        : String(y).padStart(4, '0');
    const start = by === 'month' ? `${name}-01` : `${name}-01-01`;
    if (start > last) break;
    const end = by === 'month' ? `${name}-${String(lastDayOfMonth(y, m)).padStart(2, '0')}` : `${name}-12-31`;
    out.push({ name, from: start < first ? first : start, to: end > last ? last : end });
    if (by === 'year' || m === 12) {
      y++;
      m = 1;
    } else m++;
  }
  return out;
}

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Records in a file of each container, read back with its own reader (which also checks it is whole). */
const RECORD_COUNTERS: Record<ExportTraits['container'], (file: string) => Promise<number>> = {
  parquet: async (file) => Number((await parquetMetadataAsync(await asyncBufferFromFile(file))).num_rows),
  arrow: async (file) => {
    let n = 0;
    for await (const batch of await RecordBatchReader.from(fs.createReadStream(file))) n += batch.numRows;
    return n;
  },
  lines: async (file) => {
    let lines = 0;
    for await (const chunk of fs.createReadStream(file))
      for (const b of chunk as Buffer) if (b === 10) lines++;
    return lines;
  },
};

/** Rows in a written file: its records but its header lines. */
async function countRows(file: string, format: ExportFormat): Promise<number> {
  const { container, headerLines } = EXPORT_FORMATS[format];
  return Math.max(0, (await RECORD_COUNTERS[container](file)) - headerLines);
}

function versionOf(etag: string | null): number | null {
  const m = etag ? /"(\d+)-/.exec(etag) : null;
  return m ? Number(m[1]) : null;
}

export class Exporter {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;
  readonly dataset: Dataset;

  constructor(private readonly opts: ExportOptions) {
    const d = CATALOG.byName.get(opts.dataset);
    if (!d)
      throw new ExportError(
        `unknown dataset "${opts.dataset}"; datasets: ${[...CATALOG.byName.keys()].join(', ')}`,
      );
    this.dataset = d;
    this.base = baseUrl(opts.url);
    this.fetchImpl = opts.fetch ?? fetch;
  }

  private params(extra: Record<string, string | null | undefined>): string {
    const p = new URLSearchParams();
    const all = { as_of: this.opts.asOf, ...extra };
    for (const [k, v] of Object.entries(all)) if (v !== undefined && v !== null) p.set(k, v);
    return `${this.base}${this.dataset.endpoint}?${p.toString()}`;
  }

  /** GET with the shared retries; a final error answer becomes an ExportError naming its code. */
  private async get(url: string): Promise<Response> {
    let outcome: { res: Response; err: ExportError | null };
    try {
      ({ value: outcome } = await withRetries<{ res: Response; err: ExportError | null }>(
        this.opts.retry ?? {},
        url,
        async () => {
          const res = await this.fetchImpl(url, { headers: { 'q-api-key': this.opts.key } });
          if (res.ok) return { done: true, value: { res, err: null } };
          const text = await res.text();
          let body: { code?: number; message?: string } = {};
          try {
            body = JSON.parse(text) as typeof body;
          } catch {
            body = { message: text.slice(0, 300) };
          }
          const err = new ExportError(
            `HTTP ${res.status}${body.code ? ` code ${body.code}` : ''}: ${body.message ?? ''}`,
            body.code ?? null,
          );
          if (!isTransient(res.status, body.code)) return { done: true, value: { res, err } };
          const waitMs = retryAfterMs(res.headers.get('retry-after'));
          return { done: false, value: { res, err }, reason: err.message, waitMs };
        },
      ));
    } catch (e) {
      throw new ExportError(`cannot reach ${this.base}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (outcome.err) throw outcome.err;
    return outcome.res;
  }

  /** The first or last value of the date field within the filters; null when nothing matches. */
  private async bound(field: Field, order: 'asc' | 'desc'): Promise<string | null> {
    const res = await this.get(
      this.params({
        fields: field.apiName,
        sort: field.apiName,
        order,
        limit: '1',
        date_from: this.opts.dateFrom,
        date_to: this.opts.dateTo,
      }),
    );
    const body = (await res.json()) as { data: Record<string, string | null>[] };
    return body.data[0]?.[field.apiName] ?? null;
  }

  private async plan(): Promise<Period[]> {
    const by = this.opts.partition ?? 'month';
    const range = this.dataset.range;
    if (by === 'none' || !range)
      return [{ name: '', from: this.opts.dateFrom ?? null, to: this.opts.dateTo ?? null }];
    const first = await this.bound(range, 'asc');
    const last = await this.bound(range, 'desc');
    if (first === null || last === null) return [];
    return periods(first, last, by);
  }

  private fileName(p: Period): string {
    const ext = EXPORT_FORMATS[this.opts.format].extension;
    return p.name ? `${this.dataset.name}-${p.name}.${ext}` : `${this.dataset.name}.${ext}`;
  }

  /** Downloads one partition to `<file>.part` (hashing as it goes), then renames it. */
  private async download(p: Period, file: string, onBytes: (n: number) => void): Promise<ManifestFile> {
    const target = path.join(this.opts.out, file);
    const part = `${target}.part`;
    // A connection lost mid-file is retried from the start of the file; an error answer is final.
    const { value } = await withRetries<ExportError | Pick<ManifestFile, 'bytes' | 'sha256' | 'version'>>(
      this.opts.retry ?? {},
      file,
      async () => {
        let res: Response;
        try {
          res = await this.get(this.params({ format: this.opts.format, date_from: p.from, date_to: p.to }));
        } catch (e) {
          if (e instanceof ExportError) return { done: true, value: e };
          throw e;
        }
        const hash = createHash('sha256');
        let bytes = 0;
        const outStream = fs.createWriteStream(part);
        try {
          for await (const chunk of Readable.fromWeb(res.body as WebReadableStream<Uint8Array>)) {
            const buf = chunk as Buffer;
            hash.update(buf);
            bytes += buf.length;
            onBytes(bytes);
            if (!outStream.write(buf)) await new Promise<void>((r) => outStream.once('drain', () => r()));
          }
        } finally {
          await new Promise<void>((resolve, reject) =>
            outStream.end((e?: Error | null) => (e ? reject(e) : resolve())),
          );
        }
        return {
          done: true,
          value: { bytes, sha256: hash.digest('hex'), version: versionOf(res.headers.get('etag')) },
        };
      },
    );
    if (value instanceof ExportError) throw value;
    // A stream cut short fails here (no Arrow end marker / Parquet footer), before the rename.
    const rows = await countRows(part, this.opts.format);
    fs.renameSync(part, target);
    return { path: file, partition: p.name || 'all', date_from: p.from, date_to: p.to, rows, ...value };
  }

  private readManifest(file: string): Manifest | null {
    try {
      const m = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
      return m.dataset === this.dataset.name && m.format === this.opts.format ? m : null;
    } catch {
      return null;
    }
  }

  private writeManifest(file: string, m: Manifest): void {
    fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(m, null, 2)}\n`);
    fs.renameSync(`${file}.tmp`, file);
  }

  async run(): Promise<{ manifest: Manifest; written: number; skipped: number }> {
    fs.mkdirSync(this.opts.out, { recursive: true });
    const manifestFile = path.join(this.opts.out, 'manifest.json');
    const previous = new Map((this.readManifest(manifestFile)?.files ?? []).map((f) => [f.path, f]));
    const plan = await this.plan();
    const manifest: Manifest = {
      dataset: this.dataset.name,
      endpoint: this.dataset.endpoint,
      format: this.opts.format,
      media_type: EXPORT_FORMATS[this.opts.format].mediaType,
      partition: this.dataset.range ? (this.opts.partition ?? 'month') : 'none',
      filters: {
        date_from: this.opts.dateFrom ?? null,
        date_to: this.opts.dateTo ?? null,
        as_of: this.opts.asOf ?? null,
      },
      version: null,
      rows: 0,
      schema: this.dataset.rowFields.map((f) => ({
        name: f.apiName,
        type: f.type,
        nullable: !f.required && !f.serverSet,
      })),
      files: [],
      created_at: new Date().toISOString(),
    };
    let written = 0;
    let skipped = 0;
    for (const [i, p] of plan.entries()) {
      const file = this.fileName(p);
      const known = previous.get(file);
      const target = path.join(this.opts.out, file);
      let entry: ManifestFile;
      if (known && fs.existsSync(target) && (await sha256File(target)) === known.sha256) {
        entry = known;
        skipped++;
        this.opts.onProgress?.({
          done: i + 1,
          total: plan.length,
          file,
          state: 'skipped',
          bytes: known.bytes,
          rows: known.rows,
        });
      } else {
        entry = await this.download(p, file, (bytes) =>
          this.opts.onProgress?.({ done: i, total: plan.length, file, state: 'downloading', bytes, rows: 0 }),
        );
        written++;
        this.opts.onProgress?.({
          done: i + 1,
          total: plan.length,
          file,
          state: 'written',
          bytes: entry.bytes,
          rows: entry.rows,
        });
      }
      manifest.files.push(entry);
      manifest.rows += entry.rows;
      manifest.version = Math.max(manifest.version ?? 0, entry.version ?? 0) || null;
      this.writeManifest(manifestFile, manifest);
    }
    this.writeManifest(manifestFile, manifest);
    return { manifest, written, skipped };
  }
}
