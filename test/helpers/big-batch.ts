import { batch, days, etfBar } from './batches.js';

/**
 * A large etf_daily batch (symbols × days) serialised once, for fault tests: `source` names the
 * scenario, so each scenario's rows can be counted apart with `?source=`.
 */
export function bigEtfBatch(
  rows: number,
  source: string,
  batchId: string,
  opts: { snapshotType?: 'incremental' | 'full_snapshot'; close?: number } = {},
): { body: Buffer; rows: number } {
  const perSymbol = 100;
  const symbols = Math.ceil(rows / perSymbol);
  const dates = days('2020-01-01', perSymbol);
  const data = [];
  for (let s = 0; s < symbols && data.length < rows; s++) {
    const symbol = String(510000 + s);
    for (const date of dates) {
      if (data.length >= rows) break;
      data.push(etfBar(symbol, date, { source, ...(opts.close !== undefined ? { close: opts.close } : {}) }));
    }
  }
  const b = batch('etf_daily', data, {
    batchId,
    source,
    ...(opts.snapshotType ? { snapshotType: opts.snapshotType } : {}),
  });
  return { body: Buffer.from(JSON.stringify(b)), rows: data.length };
}
