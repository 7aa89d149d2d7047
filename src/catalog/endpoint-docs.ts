import type { Catalog, Dataset } from './catalog.js';

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
      return `\`${f.apiName}\` (${type}${f.required ? ', always set' : ''})`;
    })
    .join(', ');
}

export function endpointDocs(catalog: Catalog): string {
  const out: string[] = [
    '# Query endpoints',
    '',
    '<!-- Generated from src/catalog by `npm run docs:endpoints`; do not edit by hand. -->',
    '',
    'Every endpoint: `GET`, header `Q-API-KEY`, the envelope `{code, message, data, meta}`, and the',
    'common parameters `limit` (1..1000, default 100; larger is clamped), `offset`, `sort` (any row',
    'field), `order` (`asc` | `desc`), `fields` (comma-separated row fields), `format`',
    '(`json` | `csv` | `ndjson` | `arrow` | `parquet`; all but `json` stream the whole result, see',
    '[columnar.md](columnar.md)). Ties in the sort are broken by the unique key, ascending.',
    '',
    '| Endpoint | Dataset | Exact filters | Like filters | Date range on | Default sort |',
    '|---|---|---|---|---|---|',
  ];
  for (const d of catalog.datasets) {
    out.push(
      `| \`${d.endpoint}\` | \`${d.name}\` | ${d.exact.map((f) => f.apiName).join(', ') || '—'} | ${
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
