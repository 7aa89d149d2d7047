import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CATALOG } from '../src/catalog/catalog.js';
import { QualityService } from '../src/query/quality-service.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { DEFAULT_JUMP_PCT } from '../src/model/quality-rules.js';
import { ETF_DAILY, buildQueryDatabase, tradingDays } from './data.js';

/**
 * What the quality report's bar-by-bar checks cost (docs/bars-and-quality.md, issue 27): a page
 * of the report (100 codes, cold caches) with its checks, against the checks' statement alone,
 * over the bench's query data set (codes × days of etf_daily, in a SQLite file) with an SSE
 * calendar of its days. CPU time of this process (SQLite runs in it: no reader processes).
 *
 *   npx tsx bench/quality-checks.ts [codes] [days]
 */

const codes = Number(process.argv[2] ?? 1000);
const days = Number(process.argv[3] ?? 500);
const dir = path.join(os.tmpdir(), 'mds-bench');
const file = await buildQueryDatabase(dir, codes, days, false, () => {});
const db = new Database(file);
db.exec(`DELETE FROM trade_calendar`);
const insert = db.prepare(
  `INSERT INTO trade_calendar (exchange, date, is_open, source, created_at) VALUES ('SSE', ?, 1, 'bench', '2024-01-01T00:00:00Z')`,
);
db.transaction(() => {
  for (const d of tradingDays(days)) insert.run(d);
})();
// The rows were loaded around the batch transaction: migrate builds their summaries afresh.
db.exec(`DELETE FROM mds_quality_state; DELETE FROM mds_quality_codes`);
db.close();

const store = new SqliteStore(CATALOG, { file });
await store.migrate();
const calendar = CATALOG.calendar!;
const cpu = async <T>(f: () => Promise<T>): Promise<number> => {
  const t = process.cpuUsage();
  await f();
  const u = process.cpuUsage(t);
  return (u.user + u.system) / 1000;
};
const rounds = 5;
let page = 0;
let checks = 0;
for (let i = 0; i < rounds; i++) {
  const service = new QualityService(store, CATALOG, { today: () => '2030-01-01' });
  const report = await service.report(ETF_DAILY.name, { limit: '100', offset: String(i * 100) });
  if (report.rows.length !== 100) throw new Error(`a page of ${report.rows.length} codes`);
  page += await cpu(() =>
    new QualityService(store, CATALOG, { today: () => '2030-01-01' }).report(ETF_DAILY.name, {
      limit: '100',
      offset: String(i * 100),
    }),
  );
  const qq = { dataset: ETF_DAILY, calendar, exchange: 'SSE', code: null, dateFrom: null, dateTo: null };
  checks += await cpu(() =>
    store.datasets.qualityChecks(
      qq,
      report.rows.map((r) => r.code),
      DEFAULT_JUMP_PCT,
    ),
  );
}
// Across pages (the checks cached per code): a page of 500 codes after its five pages of 100 were
// read by the same service, against the same page cold.
const warmService = new QualityService(store, CATALOG, { today: () => '2030-01-01' });
for (let i = 0; i < 5; i++)
  await warmService.report(ETF_DAILY.name, { limit: '100', offset: String(i * 100) });
const wide = { limit: '500', offset: '0' };
const warm = await cpu(() => warmService.report(ETF_DAILY.name, wide));
const cold = await cpu(() =>
  new QualityService(store, CATALOG, { today: () => '2030-01-01' }).report(ETF_DAILY.name, wide),
);
await store.close();
console.log(
  `a page of 500 codes: ${cold.toFixed(1)} ms CPU cold, ${warm.toFixed(1)} ms after its five pages of 100 (checks cached per code)`,
);
console.log(
  `${codes} codes × ${days} days; a report page of 100 codes, cold caches: ${(page / rounds).toFixed(1)} ms CPU, ` +
    `of which the checks' statement ${(checks / rounds).toFixed(1)} ms (${((100 * checks) / page).toFixed(0)} %)`,
);
