import fs from 'node:fs';
import { batch, etfBar, uniqueId } from '../test/helpers/batches.js';
import { freshDatabaseUrl } from '../test/helpers/harness.js';
import { startServer } from '../test/helpers/server-process.js';
import { pushBatch } from '../test/helpers/server-calls.js';

/**
 * Issue 24 item 6, by hand: 24 batches of about 60 MiB (100,000 records each) pushed at once to
 * one server process on SQLite; its peak RSS and the answers. The argument is
 * MDS_INGEST_MEMORY_BUDGET (unset: the default; 0: no budget, as before).
 *   npx tsx bench/ingest-memory.ts [budget-bytes]
 */

const budget = process.argv[2];
const db = await freshDatabaseUrl('sqlite');
const server = await startServer({
  databaseUrl: db.url,
  env: { LOG_LEVEL: 'warn', ...(budget !== undefined ? { MDS_INGEST_MEMORY_BUDGET: budget } : {}) },
});
const pid = server.child.pid as number;
const pad = 'x'.repeat(110);
const bodies = [0, 1].map((b) => {
  const rows = Array.from({ length: 100_000 }, (_, i) =>
    etfBar(
      String(500000 + (i % 1000)),
      `2020-01-${String((Math.floor(i / 1000) % 28) + 1).padStart(2, '0')}`,
      {
        source: `s${b}${pad}${Math.floor(i / 28_000)}`,
      },
    ),
  );
  return Buffer.from(JSON.stringify(batch('etf_daily', rows, { batchId: uniqueId('m') })));
});
console.log(`body ${((bodies[0] as Buffer).length / 2 ** 20).toFixed(1)} MiB`);
const status = (): string => fs.readFileSync(`/proc/${pid}/status`, 'utf8');
const started = Date.now();
const answers = await Promise.all(
  Array.from({ length: 24 }, async (_, i) => {
    const r = await pushBatch(server.port, bodies[i % 2] as Buffer);
    const body = JSON.parse(r.body) as { code?: number };
    return `${r.status} / ${body.code ?? 0}`;
  }),
);
const counts: Record<string, number> = {};
for (const a of answers) counts[a] = (counts[a] ?? 0) + 1;
const hwm = Number(/VmHWM:\s+(\d+)/.exec(status())?.[1] ?? 0) / 1024;
console.log(
  `${JSON.stringify(counts)} in ${((Date.now() - started) / 1000).toFixed(1)} s; peak RSS ${hwm.toFixed(0)} MB`,
);
await server.kill('SIGKILL');
await db.drop();
