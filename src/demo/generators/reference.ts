import type { DatasetName } from '../../client/query-client.js';
import { type DemoMarket, type Generator, SOURCE, stamp, dailyRow } from '../demo-market.js';
import { addDays, isDemoTradingDay } from '../random.js';
import { ETFS } from '../universe.js';
import { ALL_STOCKS } from '../security-master.js';

// Reference data for research-grade bars: the factors and actions behind the demo ETF and
// stock prices (demo-market.ts), and SSE/SZSE calendars with the demo holidays.

const codes = (): string[] => [...ETFS.map((e) => e.code), ...ALL_STOCKS.map((s) => s.code)];

export const referenceGenerators = {
  adj_factor: (m) =>
    codes().flatMap((code) =>
      (m.factors.get(code) ?? []).map((f) => dailyRow(code, f.date, { adj_factor: f.factor })),
    ),

  corporate_actions: (m) =>
    codes().flatMap((code) =>
      (m.actions.get(code) ?? []).map((a) => ({
        symbol: code,
        ex_date: a.date,
        action: a.action,
        cash_per_share: a.cash,
        share_ratio: a.ratio,
        record_date: addDays(a.date, -1),
        pay_date: a.action === 'dividend' ? addDays(a.date, 1) : null,
        announce_date: addDays(a.date, -14),
        description:
          a.action === 'split' ? `${a.ratio} new shares per share` : `cash dividend ${a.cash} per share`,
        source: SOURCE,
        updated_at: stamp(addDays(a.date, -14)),
      })),
    ),

  trade_calendar: (m) => calendar(m),
} satisfies Partial<Record<DatasetName, Generator>>;

/** Every day from the first demo day to the end of the last demo year, per exchange. */
function calendar(m: DemoMarket): Record<string, string | number | null>[] {
  const first = m.days[0] as string;
  const last = `${m.end.slice(0, 4)}-12-31`;
  const rows: Record<string, string | number | null>[] = [];
  for (const exchange of ['SSE', 'SZSE']) {
    let pretrade: string | null = null;
    for (let d = first; d <= last; d = addDays(d, 1)) {
      const open = isDemoTradingDay(d);
      rows.push({
        exchange,
        date: d,
        is_open: open ? 1 : 0,
        source: SOURCE,
        pretrade_date: pretrade,
        updated_at: stamp(first),
      });
      if (open) pretrade = d;
    }
  }
  return rows;
}
