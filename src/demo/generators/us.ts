import type { DatasetName } from '../../client/query-client.js';
import { type DemoMarket, type Generator, bars, stamp } from '../demo-market.js';
import { addDays, round } from '../random.js';
import { COMPANIES, FILERS } from '../universe.js';
import type { RowData } from '../../client/batch-builder.js';

// US stocks: EDGAR-shaped companies, filings, facts, insider trades and 13F holdings.

export const usGenerators = {
  us_companies: () =>
    COMPANIES.map((c) => ({
      cik: c.cik,
      name: c.name,
      ticker: c.ticker,
      exchange: c.exchange,
      sic: c.sic,
      sic_description: c.sicDescription,
      entity_type: 'operating',
      state_of_incorporation: c.state,
      fiscal_year_end: c.fye,
      ein: c.ein,
      source: 'sec-edgar-demo',
      updated_at: stamp('2024-01-02'),
    })),

  us_filings: (m) => usFilings(m).map((f) => f.row),

  us_financial_facts: (m) => {
    const rng = m.rng('facts');
    const filings = usFilings(m);
    const rows: RowData[] = [];
    for (const c of COMPANIES) {
      const periodic = filings.filter((f) => f.cik === c.cik && (f.form === '10-Q' || f.form === '10-K'));
      for (const f of periodic) {
        const end = f.period;
        const annual = f.form === '10-K';
        const start = addDays(end, annual ? -364 : -90);
        const revenue = round(c.revenue * (annual ? 1 : 0.25) * (1 + rng.normal() * 0.04), 0);
        const income = round(revenue * c.margin * (1 + rng.normal() * 0.05), 0);
        const fy = Number(end.slice(0, 4));
        const fp = annual
          ? 'FY'
          : (`Q${Math.min(3, Math.max(1, Math.ceil(Number(end.slice(5, 7)) / 3)))}` as string);
        const common = {
          cik: c.cik,
          accession_number: f.accession,
          fy,
          fp,
          form: f.form,
          filed_date: f.filed,
          source: 'sec-edgar-demo',
          updated_at: stamp(f.filed),
        };
        const frame = annual ? `CY${fy}` : `CY${fy}Q${Math.ceil(Number(end.slice(5, 7)) / 3)}`;
        rows.push(
          {
            ...common,
            taxonomy: 'us-gaap',
            concept: 'Revenues',
            unit: 'USD',
            start_date: start,
            end_date: end,
            value: revenue,
            label: 'Revenues',
            frame,
          },
          {
            ...common,
            taxonomy: 'us-gaap',
            concept: 'NetIncomeLoss',
            unit: 'USD',
            start_date: start,
            end_date: end,
            value: income,
            label: 'Net Income (Loss) Attributable to Parent',
            frame,
          },
          {
            ...common,
            taxonomy: 'us-gaap',
            concept: 'EarningsPerShareBasic',
            unit: 'USD/shares',
            start_date: start,
            end_date: end,
            value: round(income / c.shares, 2),
            label: 'Earnings Per Share, Basic',
            frame,
          },
          // Instant facts: start_date = end_date.
          {
            ...common,
            taxonomy: 'us-gaap',
            concept: 'Assets',
            unit: 'USD',
            start_date: end,
            end_date: end,
            value: round(c.revenue * 1.1 * (1 + rng.normal() * 0.02), 0),
            label: 'Assets',
            frame: `${frame}I`,
          },
          {
            ...common,
            taxonomy: 'dei',
            concept: 'EntityCommonStockSharesOutstanding',
            unit: 'shares',
            start_date: end,
            end_date: end,
            value: round(c.shares * (1 - rng.next() * 0.01), 0),
            label: 'Entity Common Stock, Shares Outstanding',
          },
        );
      }
    }
    return rows;
  },

  us_insider_trades: (m) => {
    const rng = m.rng('insider');
    const owners = [
      { name: 'Doe Jane', title: 'Chief Financial Officer', officer: 1, director: 0 },
      { name: 'Roe Richard', title: 'Director', officer: 0, director: 1 },
      { name: 'Smith Alex', title: 'Chief Executive Officer', officer: 1, director: 1 },
    ];
    return usFilings(m)
      .filter((f) => f.form === '4')
      .flatMap((f) => {
        const c = COMPANIES.find((x) => x.cik === f.cik) as (typeof COMPANIES)[number];
        const o = owners[rng.int(0, owners.length - 1)] as (typeof owners)[number];
        const price = bars(m.usBars, c.ticker).find((b) => b.date === f.period)?.close ?? c.price;
        let owned = rng.int(50_000, 2_000_000);
        const ownerCik = String(1_500_000 + rng.int(0, 400_000)).padStart(10, '0');
        return [1, 2, 3].slice(0, rng.int(1, 3)).map((line) => {
          const sell = rng.next() < 0.7;
          const shares = rng.int(1, 40) * 500;
          owned += sell ? -shares : shares;
          return {
            accession_number: f.accession,
            line_no: line,
            issuer_cik: c.cik,
            ticker: c.ticker,
            issuer_name: c.name,
            owner_cik: ownerCik,
            owner_name: o.name,
            owner_title: o.title,
            is_director: o.director,
            is_officer: o.officer,
            is_ten_percent_owner: 0,
            security_title: 'Common Stock',
            transaction_date: f.period,
            transaction_code: sell ? 'S' : 'M',
            shares,
            price_per_share: sell ? round(price * (1 + rng.normal() * 0.005), 4) : round(price * 0.3, 2),
            acquired_disposed: sell ? 'D' : 'A',
            shares_owned_after: owned,
            direct_indirect: 'D',
            filed_date: f.filed,
            source: 'sec-edgar-demo',
            updated_at: stamp(f.filed),
          };
        });
      });
  },

  us_13f_holdings: (m) => {
    const rng = m.rng('13f');
    const extra = [
      { name: 'COCA COLA CO', cusip: '191216100', ticker: 'KO', price: 62 },
      { name: 'BANK AMER CORP', cusip: '060505104', ticker: 'BAC', price: 38 },
    ];
    const issuers = [
      ...COMPANIES.map((c) => ({
        name: c.name.toUpperCase(),
        cusip: c.cusip,
        ticker: c.ticker,
        price: c.price,
      })),
      ...extra,
    ];
    return FILERS.flatMap((filer, fi) =>
      m.quarters.slice(-2).flatMap((q, qi) => {
        const filed = addDays(q, 44);
        const accession = `${filer.cik}-${filed.slice(2, 4)}-${String(100 + fi * 10 + qi).padStart(6, '0')}`;
        return issuers.map((iss, k) => {
          const shares = rng.int(1, 900) * 1_000_000;
          return {
            accession_number: accession,
            line_no: k + 1,
            filer_cik: filer.cik,
            filer_name: filer.name,
            period_of_report: q,
            filed_date: filed,
            issuer_name: iss.name,
            title_of_class: 'COM',
            cusip: iss.cusip,
            ticker: iss.ticker,
            value_usd: round(shares * iss.price * (1 + rng.normal() * 0.05), 0),
            shares,
            share_type: 'SH',
            put_call: null,
            investment_discretion: 'SOLE',
            voting_sole: shares,
            voting_shared: 0,
            voting_none: 0,
            source: 'sec-edgar-demo',
            updated_at: stamp(filed),
          };
        });
      }),
    );
  },
} satisfies Partial<Record<DatasetName, Generator>>;

interface DemoFiling {
  cik: string;
  form: string;
  accession: string;
  filed: string;
  period: string;
  row: RowData;
}

const filingCache = new WeakMap<DemoMarket, DemoFiling[]>();

/** EDGAR-shaped filings: 10-K / 10-Q per quarter end, 8-Ks and Form 4s, with accession numbers. */
function usFilings(m: DemoMarket): DemoFiling[] {
  const cached = filingCache.get(m);
  if (cached) return cached;
  const rng = m.rng('filings');
  const out: DemoFiling[] = [];
  for (const c of COMPANIES) {
    let seq = 1;
    const add = (form: string, period: string, filed: string, items: string | null): void => {
      // Nothing is filed after the demo's last day.
      if (filed > m.end) return;
      const accession = `${c.cik}-${filed.slice(2, 4)}-${String(seq++).padStart(6, '0')}`;
      const doc = `${c.ticker.toLowerCase()}-${period.replace(/-/g, '')}.htm`;
      out.push({
        cik: c.cik,
        form,
        accession,
        filed,
        period,
        row: {
          accession_number: accession,
          cik: c.cik,
          form,
          filed_date: filed,
          company_name: c.name,
          ticker: c.ticker,
          period_of_report: period,
          accepted_at: `${filed}T21:${String(rng.int(0, 59)).padStart(2, '0')}:00Z`,
          primary_document: form === '4' ? 'form4.xml' : doc,
          document_url: `https://www.sec.gov/Archives/edgar/data/${Number(c.cik)}/${accession.replace(/-/g, '')}/${form === '4' ? 'form4.xml' : doc}`,
          size: rng.int(8_000, 12_000_000),
          is_xbrl: form === '4' ? 0 : 1,
          items,
          source: 'sec-edgar-demo',
          updated_at: stamp(filed),
        },
      });
    };
    for (const q of m.quarters.slice(-4)) {
      const annual = q.endsWith('12-31');
      add(annual ? '10-K' : '10-Q', q, addDays(q, annual ? 55 : 35), null);
      add('8-K', addDays(q, 25), addDays(q, 27), '2.02,9.01');
    }
    for (const d of m.days.filter((_, i) => i % 25 === 7)) add('4', d, addDays(d, 2), null);
  }
  filingCache.set(m, out);
  return out;
}
