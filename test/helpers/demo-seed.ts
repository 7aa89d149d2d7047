import { CATALOG } from '../../src/catalog/catalog.js';
import type { DemoOptions } from '../../src/demo/generators.js';
import { seedDemo, type DatasetSeedResult } from '../../src/demo/seed.js';
import { IngestService } from '../../src/ingest/ingest-service.js';
import type { Store } from '../../src/storage/store.js';

/** The demo data of every dataset written straight into a store through the IngestService. */
export function seedDemoStore(store: Store, opts: DemoOptions): Promise<DatasetSeedResult[]> {
  const ingest = new IngestService(CATALOG, store, { maxRecords: 100_000 });
  return seedDemo(
    CATALOG,
    async (b) => {
      const { kind, record } = await ingest.ingest(b);
      const status = kind === 'duplicate' ? 'duplicate' : record.status;
      return {
        status,
        accepted: record.accepted,
        duplicate: record.duplicate,
        rejected: record.rejected,
        errors: record.errors,
      };
    },
    opts,
  );
}
