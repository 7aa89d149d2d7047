import type { RowData } from '../client/batch-builder.js';
import type { DatasetName } from '../client/query-client.js';
import { DemoMarket, type DemoOptions, type Generator } from './demo-market.js';
import { standardizedGenerators } from './generators/standardized.js';
import { featureGenerators } from './generators/features.js';
import { etfGenerators } from './generators/etf.js';
import { stockIndexMacroGenerators } from './generators/stock-index-macro.js';
import { usGenerators } from './generators/us.js';
import { referenceGenerators } from './generators/reference.js';
import { securityMasterGenerators } from './generators/security-master.js';
import { minuteGenerators } from './generators/minute.js';

/**
 * Synthetic, realistic data for every dataset of the catalog: prices are random walks with
 * consistent OHLC, NAVs track prices, flows follow share changes, holdings are weights that
 * sum to 100, US filings and XBRL facts follow EDGAR's shapes, adjustment factors follow the
 * demo corporate actions. Deterministic for a seed and an end date. Nothing here is real
 * market data. One generator file per catalog folder (src/catalog/datasets).
 */

export type { DemoOptions };

/** One generator per dataset name: a dataset added to the catalog (and the generated client types) without one does not compile. */
export const GENERATORS = {
  ...standardizedGenerators,
  ...featureGenerators,
  ...etfGenerators,
  ...stockIndexMacroGenerators,
  ...usGenerators,
  ...referenceGenerators,
  ...securityMasterGenerators,
  ...minuteGenerators,
} satisfies Record<DatasetName, Generator>;

/** Every dataset's demo rows. */
export function generateDemo(opts: DemoOptions): Map<string, RowData[]> {
  const market = new DemoMarket(opts);
  const out = new Map<string, RowData[]>();
  for (const [name, gen] of Object.entries(GENERATORS)) out.set(name, gen(market));
  return out;
}
