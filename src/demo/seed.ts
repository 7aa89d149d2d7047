import type { Catalog, Dataset } from '../catalog/catalog.js';
import { buildBatches, type IngestBatch, type RowData } from '../client/batch-builder.js';
import { generateDemo, type DemoOptions } from './generators.js';
import { lastWeekday } from './random.js';

/**
 * Loads the demo data: every dataset's rows as schema-3.0 batches with content-derived ids,
 * handed to a sender (the in-process IngestService, or the push client over HTTP). Either
 * way every record passes the service's own validation, and a second run is all duplicates.
 */

export const DEMO_SOURCE = 'demo';
const BATCH_SIZE = 10_000;

export interface SendOutcome {
  status: string;
  accepted: number;
  duplicate: number;
  rejected: number;
  errors: { index: number | null; field: string | null; reason: string }[];
}

export type Sender = (batch: IngestBatch) => Promise<SendOutcome>;

export interface DatasetSeedResult extends SendOutcome {
  dataset: string;
  rows: number;
  batches: number;
}

export function defaultDemoOptions(partial: Partial<DemoOptions> = {}): DemoOptions {
  return {
    end: partial.end ?? lastWeekday(new Date().toISOString().slice(0, 10)),
    days: partial.days ?? 250,
    seed: partial.seed ?? 42,
  };
}

/** The batches of one dataset's demo rows (business_date: the latest partition value). */
export function demoBatches(d: Dataset, rows: RowData[], end: string): IngestBatch[] {
  const part = d.partition?.name;
  const dates = part ? rows.map((r) => r[part]).filter((v): v is string => typeof v === 'string') : [];
  const businessDate = dates.length ? dates.reduce((a, b) => (b > a ? b : a)) : end;
  return buildBatches(d, rows, BATCH_SIZE, {
    source: DEMO_SOURCE,
    businessDate,
    snapshotType: 'incremental',
    runId: `mds-seed-demo-${end}`,
    idPrefix: 'demo',
    sendTime: new Date(`${end}T09:00:00Z`),
  });
}

export async function seedDemo(
  catalog: Catalog,
  send: Sender,
  opts: DemoOptions,
  progress: (r: DatasetSeedResult) => void = () => {},
): Promise<DatasetSeedResult[]> {
  const data = generateDemo(opts);
  const results: DatasetSeedResult[] = [];
  for (const d of catalog.datasets) {
    const rows = data.get(d.name);
    if (!rows || rows.length === 0) throw new Error(`no demo generator for dataset ${d.name}`);
    const r: DatasetSeedResult = {
      dataset: d.name,
      rows: rows.length,
      batches: 0,
      status: 'accepted',
      accepted: 0,
      duplicate: 0,
      rejected: 0,
      errors: [],
    };
    for (const b of demoBatches(d, rows, opts.end)) {
      const o = await send(b);
      r.batches++;
      if (o.status === 'duplicate') r.duplicate += b.records.length;
      else {
        r.accepted += o.accepted;
        r.duplicate += o.duplicate;
        r.rejected += o.rejected;
      }
      r.errors.push(...o.errors);
      if (o.status !== 'accepted' && r.status === 'accepted') r.status = o.status;
    }
    progress(r);
    results.push(r);
  }
  return results;
}
