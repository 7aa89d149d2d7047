import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CATALOG, type Dataset } from '../catalog/catalog.js';
import { codeFieldOf, type ChangeEvent } from '../model/changes.js';
import { baseUrl } from './http-retry.js';

/**
 * A local Parquet folder equal to the service (docs/changes.md, "A local mirror"): one file per
 * dataset and year, `<dir>/<dataset>/year=<YYYY>/part.parquet` (a dataset without a date field:
 * `<dir>/<dataset>/all/part.parquet`). The first run exports every partition; a later run reads
 * the change feed after the event id it stored and exports again the partitions the events
 * touched. Each file is written to a temporary name and renamed; the state file is written last,
 * so a run killed anywhere leaves the previous state, from which the next run ends equal.
 */

export interface MirrorOptions {
  dir: string;
  /** Required on the first run; later runs read them from the state file. */
  datasets?: readonly string[];
  /** Only these codes (the datasets' code field); absent: every code. */
  codes?: readonly string[];
  url?: string;
  key: string;
  onProgress?: (line: string) => void;
  fetch?: typeof fetch;
}

export interface MirrorState {
  url: string;
  datasets: string[];
  codes: string[] | null;
  /** The event id the folder is equal to the service at. */
  since: number;
  updated_at: string;
}

export const STATE_FILE = 'mirror-state.json';

export class MirrorError extends Error {}

interface Partition {
  dataset: Dataset;
  /** `year=2024`, or `all`. */
  name: string;
  from: string | null;
  to: string | null;
}

export class Mirror {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: MirrorOptions) {
    this.base = baseUrl(opts.url);
    this.fetchImpl = opts.fetch ?? fetch;
  }

  private say(line: string): void {
    this.opts.onProgress?.(line);
  }

  private async json(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await this.fetchImpl(url, { headers: { 'q-api-key': this.opts.key } });
    const body = (await res.json()) as Record<string, unknown>;
    if (!res.ok && res.status !== 410) throw new MirrorError(`HTTP ${res.status}: ${String(body.message)}`);
    return { status: res.status, body };
  }

  private dataset(name: string): Dataset {
    const d = CATALOG.byName.get(name);
    if (!d) throw new MirrorError(`unknown dataset "${name}"`);
    return d;
  }

  private params(d: Dataset, codes: readonly string[] | null, extra: Record<string, string>): string {
    const p = new URLSearchParams();
    const code = codeFieldOf(d);
    if (codes && code) p.set(code.apiName, codes.join(','));
    for (const [k, v] of Object.entries(extra)) p.set(k, v);
    return `${this.base}${d.endpoint}?${p.toString()}`;
  }

  private statePath(): string {
    return path.join(this.opts.dir, STATE_FILE);
  }

  readState(): MirrorState | null {
    try {
      return JSON.parse(fs.readFileSync(this.statePath(), 'utf8')) as MirrorState;
    } catch {
      return null;
    }
  }

  private writeAtomic(file: string, bytes: Uint8Array | string): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, bytes);
    fs.renameSync(tmp, file);
  }

  private fileOf(p: Partition): string {
    return path.join(this.opts.dir, p.dataset.name, p.name, 'part.parquet');
  }

  /** The dataset's partitions with rows now (their years from its first and last date). */
  private async partitions(d: Dataset, codes: readonly string[] | null): Promise<Partition[]> {
    if (!d.range) return [{ dataset: d, name: 'all', from: null, to: null }];
    const date = d.range.apiName;
    const edge = async (order: string): Promise<string | null> => {
      const { body } = await this.json(
        this.params(d, codes, { fields: date, sort: date, order, limit: '1' }),
      );
      const row = (body.data as Record<string, unknown>[])[0];
      return row ? String(row[date]) : null;
    };
    const [first, last] = [await edge('asc'), await edge('desc')];
    if (first === null || last === null) return [];
    return years(d, Number(first.slice(0, 4)), Number(last.slice(0, 4)));
  }

  /** The export of a partition, or null when it holds no rows. */
  private async exportOf(p: Partition, codes: readonly string[] | null): Promise<Uint8Array | null> {
    const range: Record<string, string> = p.from && p.to ? { date_from: p.from, date_to: p.to } : {};
    const { body } = await this.json(this.params(p.dataset, codes, { ...range, limit: '1' }));
    if (Number((body.meta as { total: number }).total) === 0) return null;
    const res = await this.fetchImpl(this.params(p.dataset, codes, { ...range, format: 'parquet' }), {
      headers: { 'q-api-key': this.opts.key },
    });
    if (!res.ok) throw new MirrorError(`HTTP ${res.status} exporting ${p.dataset.name} ${p.name}`);
    return new Uint8Array(await res.arrayBuffer());
  }

  private async refresh(p: Partition, codes: readonly string[] | null): Promise<void> {
    const bytes = await this.exportOf(p, codes);
    const file = this.fileOf(p);
    if (bytes) this.writeAtomic(file, bytes);
    else fs.rmSync(path.dirname(file), { recursive: true, force: true });
    this.say(`${p.dataset.name}/${p.name}: ${bytes ? `${bytes.length} bytes` : 'no rows'}`);
  }

  private async latestId(): Promise<number> {
    return Number(
      ((await this.json(`${this.base}/api/v1/changes?limit=1`)).body.meta as { latest_id: number }).latest_id,
    );
  }

  /** Exports every partition of the datasets, from scratch. */
  private async full(datasets: readonly string[], codes: readonly string[] | null): Promise<number> {
    // The position first: a change during the export is applied again by the next run.
    const since = await this.latestId();
    for (const name of datasets) {
      const d = this.dataset(name);
      fs.rmSync(path.join(this.opts.dir, d.name), { recursive: true, force: true });
      for (const p of await this.partitions(d, codes)) await this.refresh(p, codes);
    }
    return since;
  }

  /** One run: the first exports, later ones apply the changes since the stored event id. */
  async run(): Promise<{ since: number; applied: number; full: boolean }> {
    const prior = this.readState();
    const datasets = prior?.datasets ?? [...(this.opts.datasets ?? [])];
    const codes = prior ? prior.codes : this.opts.codes ? [...this.opts.codes] : null;
    if (datasets.length === 0) throw new MirrorError('name the datasets to mirror (--datasets)');
    for (const name of datasets) this.dataset(name);
    let since: number;
    let applied = 0;
    let full = prior === null;
    if (prior === null) since = await this.full(datasets, codes);
    else {
      since = prior.since;
      const touched = new Map<string, Partition>();
      for (;;) {
        const url = `${this.base}/api/v1/changes?datasets=${datasets.join(',')}&since=${since}&limit=1000`;
        const { status, body } = await this.json(url);
        if (status === 410) {
          this.say('the feed no longer holds the changes since the last run: exporting again');
          since = await this.full(datasets, codes);
          full = true;
          touched.clear();
          break;
        }
        const events = body.data as ChangeEvent[];
        for (const e of events) {
          applied += 1;
          for (const p of touchedBy(this.dataset(e.dataset), e, codes))
            touched.set(`${p.dataset.name}/${p.name}`, p);
        }
        const meta = body.meta as { next_since: number; has_more: boolean };
        since = meta.next_since;
        if (!meta.has_more) break;
      }
      for (const p of touched.values()) await this.refresh(p, codes);
    }
    const state: MirrorState = {
      url: this.base,
      datasets,
      codes,
      since,
      updated_at: new Date().toISOString(),
    };
    this.writeAtomic(this.statePath(), `${JSON.stringify(state, null, 2)}\n`);
    this.say(`equal to the service at event ${since}`);
    return { since, applied, full };
  }

  /**
   * Compares the folder with a fresh export, partition by partition, by SHA-256: the files that
   * differ, are missing or are extra (empty: equal).
   */
  async verify(): Promise<string[]> {
    const state = this.readState();
    if (!state) throw new MirrorError(`no mirror in ${this.opts.dir} (${STATE_FILE} missing)`);
    const wrong: string[] = [];
    for (const name of state.datasets) {
      const d = this.dataset(name);
      const expected = new Set<string>();
      for (const p of await this.partitions(d, state.codes)) {
        const bytes = await this.exportOf(p, state.codes);
        if (!bytes) continue;
        const rel = `${d.name}/${p.name}`;
        expected.add(p.name);
        const file = this.fileOf(p);
        if (!fs.existsSync(file)) wrong.push(`${rel}: missing`);
        else if (sha256(fs.readFileSync(file)) !== sha256(bytes)) wrong.push(`${rel}: differs`);
      }
      const dir = path.join(this.opts.dir, d.name);
      const local = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
      for (const p of local) if (!expected.has(p)) wrong.push(`${d.name}/${p}: extra`);
    }
    return wrong;
  }
}

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

function years(d: Dataset, from: number, to: number): Partition[] {
  const out: Partition[] = [];
  for (let y = from; y <= to; y++)
    out.push({ dataset: d, name: `year=${y}`, from: `${y}-01-01`, to: `${y}-12-31` });
  return out;
}

/** The partitions an event may have changed among the mirrored codes (none: it touched none of them). */
function touchedBy(d: Dataset, e: ChangeEvent, codes: readonly string[] | null): Partition[] {
  if (codes && e.code_field) {
    const hit = e.codes
      ? codes.some((c) => e.codes?.includes(c))
      : codes.some((c) => c >= (e.code_from ?? '') && c <= (e.code_to ?? ''));
    if (!hit) return [];
  }
  if (!d.range) return [{ dataset: d, name: 'all', from: null, to: null }];
  if (e.date_from === null || e.date_to === null) return [];
  return years(d, Number(e.date_from.slice(0, 4)), Number(e.date_to.slice(0, 4)));
}
