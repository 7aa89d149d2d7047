import { MAX_FILTER_VALUES, type Catalog, type Dataset } from './catalog.js';

/** docs/endpoints.md, generated from the catalog (a test fails when the committed file drifts). */

const LAYER_TITLES: Record<Dataset['layer'], string> = {
  standardized: 'Standardized market data layer',
  features: 'Feature factor layer',
  query: 'ETF, A-share, index, macro and market',
  us: 'US stocks (SEC EDGAR)',
  reference: 'Reference data for research-grade bars',
};

function fieldList(d: Dataset): string {
  return d.rowFields
    .map((f) => {
      let type: string = f.enum && f.type !== 'flag' ? `${f.type}: ${f.enum.join(' | ')}` : f.type;
      if (f.exclusiveMinimum !== null) type += ` > ${f.exclusiveMinimum}`;
      if (f.unit) type += `, ${f.unit}`;
      return `\`${f.apiName}\` (${type}${f.required ? ', always set' : ''})`;
    })
    .join(', ');
}

/** The exact filters, each code filter marked with its market. */
function exactList(d: Dataset): string {
  const marked = d.exact.map((f) => {
    const market = d.codes.get(f);
    return market ? `${f.apiName} (${market})` : f.apiName;
  });
  return marked.join(', ') || '—';
}

/** A query parameter as docs list it: where it is taken and its words (query/query-params.ts). */
export interface ParameterDoc {
  name: string;
  rows: string;
  trail: string;
  description: string;
}

/**
 * `exportFormats`: the names of export-formats.ts's table, `parameters` the query parameters'
 * declarations (given by the caller: the catalog sits below the export and query code and does
 * not import it).
 */
export function endpointDocs(
  catalog: Catalog,
  exportFormats: readonly string[],
  parameters: readonly ParameterDoc[],
): string {
  const out: string[] = [
    '# Query endpoints',
    '',
    '<!-- Generated from src/catalog by `npm run docs:endpoints`; do not edit by hand. -->',
    '',
    'Every endpoint: `GET`, header `Q-API-KEY`, the envelope `{code, message, data, meta}`, its',
    'filters and the parameters listed under [Parameters](#parameters); `format`',
    `(${['json', ...exportFormats].map((f) => `\`${f}\``).join(' | ')}; all but \`json\` stream the whole result, see`,
    '[columnar.md](columnar.md)). Ties in the sort are broken by the unique key, ascending.',
    '',
    '## Many values and code spellings',
    '',
    `Every exact filter takes several values, any of which matches: repeat the parameter`,
    `(\`code=510300&code=510500\`), or, where no value can hold a comma (codes, dates, numbers, flags,`,
    `enumerations), give a comma list (\`code=510300,510500\`); both together at most`,
    `${MAX_FILTER_VALUES} values, beyond that \`400\` / \`4001\` (\`code takes at most ${MAX_FILTER_VALUES} values\`).`,
    'Spaces around list items and a value given twice do not matter; an empty item is a `400`. Paging,',
    '`meta.total`, cursors (bound to the list given), exports, `adjust`, `interval` and `as_of`',
    'work on a list as on one value. In the OpenAPI document an exact filter is `anyOf` one value or',
    'an array, `style: form`, `explode: true` (repeated).',
    '',
    'Code filters marked **(cn)** below hold A-share, ETF and index codes, stored as their 6 digits;',
    'they also take the spellings of Tushare (`510300.SH`, `000001.SZ`, `430047.BJ`), AKShare and',
    'Sina (`sh510300`, `SH510300`, `sh.510300`), Wind/JoinQuant (`510300.XSHG`, `.XSHE`) and Yahoo',
    '(`510300.SS`), case-insensitive, and read them as the 6 digits. The exchange mark is dropped,',
    'not checked: within one dataset a 6-digit code names one instrument (`000001` is the SSE',
    'Composite in index datasets and Ping An Bank in stock datasets). Only a mark around exactly',
    '6 digits is removed, so no stored value is ever changed (`00700.HK` stays as it is). Filters',
    'marked **(us)** hold US tickers, CIKs and CUSIPs and are taken exactly as written (`BRK.B`),',
    "except that a CIK given without its leading zeros, as SEC's own JSON writes it (`cik=1640147`),",
    'is padded to its 10 digits (`0001640147`): no other valid value is so few digits.',
    "The quality report's `code` takes the same spellings. Pushed rows' codes in these fields are",
    'stored as the 6 digits too (a batch may write `sh510300` or `510300.SH`), so every spelling finds',
    'them. A **(cn)** value that is 6 digits with a mark none of these (`510300.SHH`, `xh510300`)',
    'could match no row: it is refused with `400` / `4008` naming the filter, not answered empty.',
    '',
    'Sources (`source=`, `source_priority=`) match exactly, case included. One that is not stored',
    'while a stored source differs from it only in case (`XTQUANT` for `xtquant`) is refused with',
    '`400` / `4007`, whose message and `allowed` name the stored spelling. `date_from` after `date_to`',
    "is `400` / `4006`. When a page holds rows of several sources for one key (a code's day from two",
    'sources, no `source=` or `source_priority=` given), `meta.several_sources` says so and lists them:',
    '`{"sources": ["a", "b"], "message": "rows of several sources (a, b) for one key on this page: …"}`.',
    '',
    'Every number says what it counts after its type (`close` (number, CNY), `volume` (number, shares),',
    '`pct_chg` (number, %)): CN prices and amounts in yuan, volumes in shares (not lots of 100),',
    'percent values as percent (1.5 = 1.5 %); the same units are `x-mds-unit` of each field in',
    "`/openapi.json` and `units` of the Python client's dataset schema.",
    '',
    'Every date parameter (`date_from`, `date_to`, exact date filters such as `date=` or',
    "`trade_date=`, `adjust_anchor`, the quality report's range) takes `YYYY-MM-DD` or `YYYYMMDD`",
    '(`date_from=20240101`); rows always answer `YYYY-MM-DD`.',
    '',
    '## Parameters',
    '',
    'Besides the filters of each endpoint (below), from the declarations of',
    '`src/query/query-params.ts` (`/openapi.json` gives each endpoint its own words and schema):',
    '',
    '| Parameter | Endpoints | Revision trails | Description |',
    '|---|---|---|---|',
    ...parameters.map(
      (p) => `| \`${p.name}\` | ${p.rows} | ${p.trail} | ${p.description.replaceAll('|', '\\|')} |`,
    ),
    '',
    '## Endpoints',
    '',
    '| Endpoint | Dataset | Exact filters | Like filters | Date range on | Default sort |',
    '|---|---|---|---|---|---|',
  ];
  for (const d of catalog.datasets) {
    out.push(
      `| \`${d.endpoint}\` | \`${d.name}\` | ${exactList(d)} | ${
        d.like.map((f) => f.apiName).join(', ') || '—'
      } | ${d.range?.apiName ?? '—'} | ${d.sort.field.apiName} ${d.sort.order} |`,
    );
  }
  for (const layer of Object.keys(LAYER_TITLES) as Dataset['layer'][]) {
    out.push('', `## ${LAYER_TITLES[layer]}`);
    for (const d of catalog.datasets.filter((x) => x.layer === layer)) {
      out.push(
        '',
        `### \`${d.endpoint}\` — ${d.description}`,
        '',
        `Dataset \`${d.name}\` · unique key ${d.key.map((k) => `\`${k.name}\``).join(', ')} · full-snapshot partition ${
          d.partition ? `\`${d.partition.name}\`` : 'none (one per source)'
        }${d.sourceField ? ` and \`${d.sourceField.name}\`` : ''}`,
        '',
        `Rows: ${fieldList(d)}.`,
      );
      const renames = d.fields.filter((f) => f.apiName !== f.name);
      if (renames.length) {
        out.push('', `Ingest names: ${renames.map((f) => `\`${f.name}\` → \`${f.apiName}\``).join(', ')}.`);
      }
    }
  }
  return out.join('\n') + '\n';
}
