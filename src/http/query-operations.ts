import { Type } from '@sinclair/typebox';
import {
  ADJUSTS,
  adjustOf,
  INTERVALS,
  MAX_FILTER_VALUES,
  RANGE_PARAMS,
  type Catalog,
  type Dataset,
  type Field,
} from '../catalog/catalog.js';
import { envelopeSchema } from '../contract/envelope.js';
import { fieldJson, rowSchema } from '../contract/rows.js';
import { DEFAULT_LIMIT, FORMATS, MAX_LIMIT, allowedParams, takesCommaList } from '../query/parse.js';
import type { ApiOperation, ApiParameter } from './api-operations.js';
import { EXPORT_FORMAT_NAMES, EXPORT_FORMATS } from '../export/export-formats.js';
import { revisionItemSchema } from '../contract/revisions.js';
import { revisionParams, revisionsPath } from '../query/revision-query.js';
import { MINUTE_INTERVALS } from '../query/minute-query.js';

/**
 * The query endpoints as operations, one per catalog dataset. Parameters follow what the
 * parser accepts (`allowedParams`), so a parameter added there appears here; its words and
 * schema come from PARAMETER_DOCS (a parameter missing there is flagged by the contract test).
 * Filter kinds are data (`x-mds-filter`), for generated clients.
 */

type ParamDoc = (d: Dataset) => Omit<ApiParameter, 'name' | 'in'>;

/** `interval` of the daily datasets. */
const intervalDoc = (d: Dataset): Omit<ApiParameter, 'name' | 'in'> => ({
  description:
    'one row per code, source and ISO week (1w), calendar month (1M), quarter (1Q) or year (1Y), ' +
    `adjusted first: ${[...(d.daily?.aggregate ?? [])].map(([f, a]) => `${f.apiName} ${a}`).join(', ')}; ` +
    "pre_close the previous period's close, change and pct_chg recomputed; date the last bar's; " +
    'rows add period_start and bar_count',
  schema: Type.String({ enum: [...INTERVALS], default: '1d' }),
});

/** `time_from` / `time_to` of the intraday datasets: inclusive bounds on the bar's end minute. */
const timeBound = (side: 'after' | 'before'): Omit<ApiParameter, 'name' | 'in'> => ({
  description: `bars whose end minute is at or ${side} this instant (ISO 8601 with an offset or Z)`,
  schema: Type.String({ format: 'date-time' }),
});

/** Words and schema of the parameters every endpoint shares. */
export const PARAMETER_DOCS: Record<string, ParamDoc> = {
  limit: () => ({
    description: `rows per page; values above ${MAX_LIMIT} are clamped to ${MAX_LIMIT}`,
    schema: Type.Integer({ minimum: 1, default: DEFAULT_LIMIT }),
  }),
  offset: () => ({ description: 'rows to skip', schema: Type.Integer({ minimum: 0, default: 0 }) }),
  sort: (d) => ({
    description:
      'field to sort by; ties are broken by the unique key' +
      (adjustOf(d) ? '. Under adjust, a price field sorts by its adjusted value' : ''),
    schema: Type.String({ enum: answerNames(d), default: d.sort.field.apiName }),
  }),
  order: (d) => ({
    description: 'sort direction',
    schema: Type.String({ enum: ['asc', 'desc'], default: d.sort.order }),
  }),
  fields: (d) => ({
    description:
      `comma-separated subset of: ${answerNames(d).join(', ')}. ` +
      'Rows then hold only these fields (the row schema describes whole rows).',
    schema: Type.String(),
  }),
  format: () => ({
    description: `${EXPORT_FORMAT_NAMES.join(', ')} export the whole result (no pagination)`,
    schema: Type.String({ enum: [...FORMATS], default: 'json' }),
  }),
  cursor: () => ({
    description: 'keyset pagination: meta.next_cursor of the previous page of the same query',
    schema: Type.String(),
  }),
  adjust: (d) => ({
    description:
      `adjusted prices (${adjustOf(d)
        ?.prices.map((f) => f.apiName)
        .join(', ')}): hfq = price × the ` +
      `${adjustOf(d)?.factors} in force on the bar's date; qfq = that ÷ the anchor's factor; change ` +
      'recomputed, pct_chg and volume as stored, no rounding (docs/bars-and-quality.md)',
    schema: Type.String({ enum: [...ADJUSTS], default: 'none' }),
  }),
  adjust_anchor: () => ({
    description:
      "qfq only: divide by the factor in force on this date, or `end`: at each code's last bar in the " +
      "answer's window (that bar equals its raw price); default: each code's latest factor. " +
      'meta.adjust.factors names the anchor date used per code',
    schema: {
      ...QUERY_DATE,
      pattern: '^(end|\\d{4}-\\d{2}-\\d{2}|\\d{8})$',
      description: 'end, or a date YYYY-MM-DD or YYYYMMDD',
      examples: ['end', '2024-01-02', '20240102'],
    },
  }),
  adjust_source: () => ({
    description:
      "the factors' source for every bar (400 naming the sources there are when it has none); default: " +
      "each bar's own source when it has factors for the code, else the code's only factor source",
    schema: Type.String(),
  }),
  interval: (d) =>
    d.blocks
      ? {
          description:
            'bars of 1, 5, 15, 30 or 60 minutes by session, or 1d (the day): labelled by their end ' +
            'minute, never across the lunch break or the day; open first, high max, low min, close ' +
            'last, volume and amount summed (docs/minute-bars.md)',
          schema: Type.String({ enum: [...MINUTE_INTERVALS], default: '1m' }),
        }
      : intervalDoc(d),
  time_from: () => timeBound('after'),
  time_to: () => timeBound('before'),
  source_priority: () => ({
    description:
      'sources in order of precedence, comma-separated: one row per key without its source, the first ' +
      "listed source's (its `source` shows which); rows of unlisted sources are left out. Default: the " +
      "server's MDS_SOURCE_PRIORITY for this dataset, when set and no source= is given",
    schema: Type.String(),
  }),
  as_of: () => ({
    description:
      'point in time, ISO 8601 with Z or an offset: the answer this request had at that instant ' +
      '(docs/point-in-time.md); 400 / 4005 before the revision retention horizon',
    schema: Type.String({ format: 'date-time' }),
  }),
  batch_id: () => ({
    description: 'only the revisions of this batch (revert:<batch_id> for a revert)',
    schema: Type.String(),
  }),
  since: () => ({
    description: 'valid_from ≥ since (ISO 8601)',
    schema: Type.String({ format: 'date-time' }),
  }),
  until: () => ({
    description: 'valid_from ≤ until (ISO 8601)',
    schema: Type.String({ format: 'date-time' }),
  }),
};

/** Row fields of any answer of the endpoint (resampled rows add period_start and bar_count). */
const answerNames = (d: Dataset): string[] => (d.daily?.resampledFields ?? d.rowFields).map((f) => f.apiName);

/** A date parameter: YYYY-MM-DD, or YYYYMMDD as Tushare writes it (parse.ts `queryDate`). */
export const QUERY_DATE = {
  type: 'string',
  pattern: '^(\\d{4}-\\d{2}-\\d{2}|\\d{8})$',
  description: 'a date, YYYY-MM-DD or YYYYMMDD',
  examples: ['2024-01-02', '20240102'],
};

/** An exact filter: one value, or several repeated (explode) or as a comma list where taken. */
function exactParameter(d: Dataset, f: Field): ApiParameter {
  const item = f.type === 'date' ? QUERY_DATE : fieldJson(f, 'request', false);
  const market = d.codes.get(f);
  const words = [
    `exact match; several values (any of them matches, at most ${MAX_FILTER_VALUES}) by repeating the parameter`,
    takesCommaList(d, f) ? ' or as a comma list' : '',
    market === 'cn' ? '. A code also as 510300.SH, sh510300 or SH510300 (stored as 510300)' : '',
  ];
  return {
    name: f.apiName,
    in: 'query',
    description: words.join(''),
    schema: { anyOf: [item, { type: 'array', items: item, minItems: 1, maxItems: MAX_FILTER_VALUES }] },
    style: 'form',
    explode: true,
    'x-mds-filter': 'exact',
    ...(market ? { 'x-mds-code': market } : {}),
  };
}

function parameter(d: Dataset, name: string): ApiParameter {
  const exact = d.exact.find((f) => f.apiName === name);
  if (exact) return exactParameter(d, exact);
  if (d.like.some((f) => f.apiName === name)) {
    return {
      name,
      in: 'query',
      description: 'contains, case-insensitive (% and _ are literal)',
      schema: Type.String(),
      'x-mds-filter': 'like',
    };
  }
  if ((RANGE_PARAMS as readonly string[]).includes(name) && d.range) {
    return {
      name,
      in: 'query',
      description: `inclusive ${name === 'date_from' ? 'lower' : 'upper'} bound on ${d.range.apiName}, YYYY-MM-DD or YYYYMMDD`,
      schema: QUERY_DATE,
      'x-mds-filter': 'range',
      'x-mds-field': d.range.apiName,
    };
  }
  const doc = PARAMETER_DOCS[name];
  return doc
    ? { name, in: 'query', ...doc(d) }
    : { name, in: 'query', description: 'UNDOCUMENTED: add it to PARAMETER_DOCS', schema: Type.String() };
}

/**
 * The exports' media types, as the operation's `x-mds-exports` (format → media type), not as
 * further media types of the 200 answer: generated clients (openapi-fetch) type a 200 by all
 * of its media types, so listing them would make every JSON page a union with text and bytes.
 */
const exports = {
  'x-mds-exports': Object.fromEntries(
    Object.entries(EXPORT_FORMATS).map(([format, f]) => [format, f.mediaType]),
  ),
};

/** Every query endpoint's operation, and the revision trail of each dataset. */
export function queryOperations(catalog: Catalog): ApiOperation[] {
  return [
    ...catalog.datasets.map(datasetOperation),
    ...catalog.datasets.map((d) => revisionsOperation(d.blocks?.stored ?? d)),
  ];
}

/** GET /api/v1/revisions/{dataset} (docs/point-in-time.md). */
function revisionsOperation(d: Dataset): ApiOperation {
  return {
    method: 'get',
    path: revisionsPath(d),
    operationId: `revisions_${d.name}`,
    tags: ['revisions'],
    summary: `Revision trail of ${d.name}`,
    description:
      `Every kept revision of \`${d.name}\` (each change a batch made: insert, update, delete), sorted by ` +
      'valid_from then the unique key; the filters of its endpoint, batch_id and since/until on valid_from. ' +
      'Exports: NDJSON writes the items; CSV, Arrow and Parquet a flat table (op, batch_id, valid_from, ' +
      'valid_to, then the row).',
    auth: 'query',
    parameters: revisionParams(d).map((n) => parameter(d, n)),
    extensions: exports,
    responses: {
      200: {
        description:
          'revisions in the envelope (format=json), or all of them as an export in the media type x-mds-exports names',
        headers: {
          ETag: {
            description: 'changes when the dataset or its history changes',
            schema: { type: 'string' },
          },
        },
        content: {
          'application/json': envelopeSchema(revisionItemSchema(d, { required: true })),
        },
      },
      304: { description: 'not modified (If-None-Match)' },
    },
    errors: [4001],
  };
}

function datasetOperation(d: Dataset): ApiOperation {
  return {
    method: 'get',
    path: d.endpoint,
    operationId: `query_${d.name}`,
    tags: [d.layer],
    summary: d.description,
    description:
      `Dataset \`${d.name}\`. Default sort ${d.sort.field.apiName} ${d.sort.order}; ties broken by the ` +
      `unique key (${d.key.map((k) => k.apiName).join(', ')}).` +
      (d.range ? ` date_from/date_to apply to ${d.range.apiName}.` : ''),
    auth: 'query',
    parameters: allowedParams(d).map((n) => parameter(d, n)),
    // Row name → ingest name where they differ (code → symbol): a client pushes what it pulled.
    extensions: {
      ...exports,
      'x-mds-ingest-names': Object.fromEntries(
        d.fields.filter((f) => f.apiName !== f.name).map((f) => [f.apiName, f.name]),
      ),
    },
    responses: {
      200: {
        description:
          'rows in the envelope (format=json), or the whole result as an export in the media type x-mds-exports names',
        headers: {
          ETag: { description: 'changes when a batch changes the dataset', schema: { type: 'string' } },
        },
        content: { 'application/json': envelopeSchema(rowSchema(d, { required: true })) },
      },
      304: { description: 'not modified (If-None-Match)' },
    },
    errors: [4001, 4005],
  };
}
