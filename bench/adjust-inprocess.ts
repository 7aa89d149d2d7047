import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CATALOG, type Dataset } from '../src/catalog/catalog.js';
import { buildBatches } from '../src/client/batch-builder.js';
import { IngestService } from '../src/ingest/ingest-service.js';
import { QueryService } from '../src/query/query-service.js';
import { createStore } from '../src/storage/create-store.js';
import { CFG, DATA_DIR, log } from './context.js';
import { buildQueryDatabase } from './data.js';
import { randomPaths } from './measure.js';
import { referenceFactors } from './phases/bars.js';

/**
 * CPU per page of adjusted pages in the process (QueryService over SQLite: no HTTP, no reader
 * processes), against raw pages of the same run: the bars phase's random pages raw, `adjust=qfq`,
 * `adjust=hfq` and qfq sorted by close (adjusted in SQL), on a copy of the bench's query data
 * with the bars phase's factors. Compare builds by running it in each checkout, alternating (a
 * loaded machine moves every figure); under `valgrind --tool=callgrind` it gives instruction
 * counts (`KIND=qfq` for one kind).
 *
 *   BENCH_QUICK=1 npx tsx bench/adjust-inprocess.ts <pages per kind> <rounds, the first a warm-up>
 */
const pages = Number(process.argv[2] ?? 300);
const rounds = Number(process.argv[3] ?? 6);
const file = await buildQueryDatabase(DATA_DIR, CFG.codes, CFG.days, false, log);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-adjust-'));
const copy = path.join(dir, 'service.db');
fs.copyFileSync(file, copy);
const store = await createStore(`sqlite:${copy}`, CATALOG);
try {
  await store.migrate();
  const factors = CATALOG.byName.get('adj_factor') as Dataset;
  const ingest = new IngestService(CATALOG, store, { maxRecords: 200_000 });
  const opts = {
    source: 'bench',
    businessDate: '2016-01-04',
    snapshotType: 'incremental' as const,
    runId: 'a',
  };
  for (const b of buildBatches(factors, referenceFactors(), 10_000, opts)) await ingest.ingest(b);
  const qs = new QueryService(store, CATALOG);
  const d = CATALOG.datasets.find((x) => x.endpoint === '/api/v1/etf/kline') as Dataset;
  const base = randomPaths(pages, 17).map((p) => Object.fromEntries(new URL(p, 'http://x').searchParams));
  const kinds: Record<string, Record<string, string>> = {
    raw: {},
    qfq: { adjust: 'qfq' },
    hfq: { adjust: 'hfq' },
    'qfq-sql': { adjust: 'qfq', sort: 'close' },
  };
  const ms = new Map<string, number>();
  for (let round = 0; round < rounds; round++) {
    for (const [kind, extra] of Object.entries(kinds)) {
      if (process.env.KIND !== undefined && process.env.KIND !== kind) continue;
      const t0 = process.cpuUsage();
      for (const q of base) {
        const { plan } = qs.parse(d, { ...q, ...extra });
        const v = await qs.answerVersion(d, plan.bars?.adjust?.factors ?? null);
        await qs.page(plan, v.own, v.factors);
      }
      const c = process.cpuUsage(t0);
      if (round > 0) ms.set(kind, (ms.get(kind) ?? 0) + (c.user + c.system) / 1000 / pages / (rounds - 1));
    }
  }
  const raw = ms.get('raw');
  for (const [kind, v] of ms) {
    console.log(
      `${kind}: ${v.toFixed(3)} ms CPU a page${raw && kind !== 'raw' ? `, ${(v / raw).toFixed(2)}× raw` : ''}`,
    );
  }
} finally {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
