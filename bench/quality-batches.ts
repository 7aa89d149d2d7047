import fs from 'node:fs';
import Database from 'better-sqlite3';
import { CATALOG, type Dataset } from '../src/catalog/catalog.js';
import { createStore } from '../src/storage/create-store.js';
import type { BatchRecord } from '../src/model/batch.js';
import type { Row } from '../src/model/values.js';
import { code, codeRows, tradingDays } from './data.js';
import { acceptedRecord } from '../test/helpers/batches.js';

/**
 * What the quality summaries cost a batch (docs/performance.md, issue 17): batches applied
 * straight to the store on a COPY of a bench file (it writes), in alternating rounds with the
 * summaries kept and with their state row removed (the refresh then stops at its first
 * statement). Kinds: `append` (one new day for every code), `last` (the latest bench day of every
 * code pushed again, changed), `older` (an older day of every code changed), `new` (the ingest
 * phase's batch: 40 new codes × 250 days).
 *
 *   cp --reflink=auto /tmp/mds-bench-data/etf-1500x2000-v3.db /tmp/copy.db
 *   npx tsx bench/quality-batches.ts /tmp/copy.db append 4
 */

const [file, kind = 'append', roundsArg = '4'] = process.argv.slice(2);
if (!file || !fs.existsSync(file) || !['append', 'last', 'older', 'new'].includes(kind)) {
  throw new Error(
    'usage: npx tsx bench/quality-batches.ts <copy of a bench file> append|last|older|new [rounds]',
  );
}
const etf = CATALOG.byName.get('etf_daily') as Dataset;
const codes = 1500;
const benchDays = 2000;
const days = tradingDays(benchDays + 40);

function rowsOf(round: number): Row[] {
  if (kind === 'new') {
    return Array.from({ length: 40 }, (_, i) =>
      codeRows(code(i, String(round + 1)), days.slice(0, 250), i + 1),
    ).flat();
  }
  const day =
    kind === 'append' ? days[benchDays + round] : days[kind === 'last' ? benchDays - 1 : benchDays - 100];
  const stamp = `2030-01-01T00:00:${String(round).padStart(2, '0')}.000Z`;
  return Array.from({ length: codes }, (_, i) => ({
    ...(codeRows(code(i), [day as string], 1000 * round + i)[0] as Row),
    updated_at: stamp,
  }));
}

// Migrated first (the summaries built), so that the rounds time batches only.
const store0 = await createStore(`sqlite:${file}`, CATALOG);
await store0.migrate();
await store0.close();
const raw = new Database(file);
const state = raw
  .prepare('SELECT dataset, exchange, rule FROM mds_quality_state WHERE dataset = ?')
  .get(etf.name);
if (!state) throw new Error('no quality summaries in this file');
raw.close();

for (let round = 0; round < Number(roundsArg); round++) {
  const kept = round % 2 === 1;
  const db = new Database(file);
  db.prepare('DELETE FROM mds_quality_state WHERE dataset = ?').run(etf.name);
  if (kept)
    db.prepare(
      'INSERT INTO mds_quality_state (dataset, exchange, rule) VALUES (@dataset, @exchange, @rule)',
    ).run(state);
  db.close();
  const store = await createStore(`sqlite:${file}`, CATALOG);
  const rows = rowsOf(round);
  const id = `quality-batches-${kind}-${round}-${Date.now()}`;
  const record = (o: { written: number; unchanged: number; processedAt: string }): BatchRecord =>
    acceptedRecord(o, {
      batch_id: id,
      dataset: etf.name,
      source: 'bench',
      business_date: String(rows[0]?.date),
      source_system: 'bench',
      source_run_id: 'quality-batches',
      record_count: rows.length,
    });
  const t0 = performance.now();
  await store.batches.applyBatch(
    {
      batchId: id,
      dataset: etf,
      rows,
      prune: null,
      now: new Date().toISOString(),
    },
    record,
  );
  const ms = performance.now() - t0;
  process.stdout.write(
    `${kind}: ${rows.length} rows, summaries ${kept ? 'kept' : 'off '}: ${ms.toFixed(0)} ms\n`,
  );
  await store.close();
}
