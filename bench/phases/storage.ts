import { CFG } from '../context.js';
import { buildMinimalSqlite, pgTableBytes, sqliteTableBytes } from '../minimal.js';
import type { Row } from '../table.js';
import { log } from '../context.js';

/**
 * Bytes on disk per etf_daily row: the service's table with its indexes and stored row JSON
 * against the minimal table (fields, unique key as primary key), after a checkpoint.
 */
export function storagePhase(rows: Row[], file: string): void {
  const n = CFG.codes * CFG.days;
  const minimal = buildMinimalSqlite(file, log);
  const svc = sqliteTableBytes(file, 'etf_daily') / n;
  const min = sqliteTableBytes(minimal, 'etf_daily') / n;
  pushStorage(rows, 'SQLite', svc, min);
}

export async function pgStoragePhase(rows: Row[], url: string, minimalUrl: string): Promise<void> {
  const n = CFG.codes * CFG.days;
  const svc = (await pgTableBytes(url, 'public.etf_daily')) / n;
  const min = (await pgTableBytes(minimalUrl, 'minimal.etf_daily')) / n;
  pushStorage(rows, 'PostgreSQL', svc, min);
}

function pushStorage(rows: Row[], backend: string, svc: number, min: number): void {
  const phase = `storage per etf_daily row (${backend})`;
  log(`${phase}: service ${svc.toFixed(0)} B, minimal ${min.toFixed(0)} B`);
  rows.push({ phase, server: `minimal table: ${min.toFixed(0)} bytes/row`, rate: null });
  rows.push({
    phase,
    server: `service (table, indexes, row JSON): ${svc.toFixed(0)} bytes/row`,
    rate: null,
    ratio: svc / min,
    vs: 'minimal',
    goal: '≤ 2.5× minimal',
    met: svc <= 2.5 * min,
  });
}
