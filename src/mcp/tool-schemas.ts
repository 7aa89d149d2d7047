import { ADJUSTS, INTERVALS, type Catalog, type Dataset } from '../catalog/catalog.js';
import { allowedParams } from '../query/parse.js';
import { QUALITY_PARAMS } from '../query/quality-service.js';
import { QUALITY_SORTS } from '../model/quality-rules.js';
import { revisionParams } from '../query/revision-query.js';
import { MINUTE_INTERVALS } from '../query/minute-query.js';

/**
 * The tools' input and output schemas (JSON Schema), derived from the catalog and from the
 * parameter lists the HTTP routes accept (allowedParams, revisionParams, QUALITY_PARAMS): a
 * parameter added there appears here without a change. Rules the schema cannot say per dataset
 * (which filters, which sort fields, real dates) are left to query/parse.ts, whose 4001 messages
 * come back as tool errors naming what is allowed.
 */

export type JsonSchema = { [k: string]: unknown };

/** Rows of one answer: the most a tool returns, and its default. */
export const MAX_ROWS = 200;
export const DEFAULT_ROWS = 50;
/** Trading days are one short row each: a year and more in one answer. */
export const MAX_DAYS = 1000;
export const DEFAULT_DAYS = 500;
/** Bytes of row JSON in one answer: fewer rows are returned (with a cursor) rather than more. */
export const MAX_ROW_BYTES = 64 * 1024;

export const TOOL_NAMES = [
  'list_datasets',
  'query',
  'quality_report',
  'revision_trail',
  'trading_days',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface ToolDefinition {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  annotations: { readOnlyHint: true; openWorldHint: false; idempotentHint: true };
  /** Why a dataset of the catalog outside the tool's `dataset` enum is refused (the error says it). */
  refusal?: string;
}

const str = (description: string): JsonSchema => ({ type: 'string', description });
const nullableStr = { type: ['string', 'null'] };
const ROWS = { type: 'array', items: { type: 'object' } };

const limit = (max: number, dflt: number): JsonSchema => ({
  type: 'integer',
  minimum: 1,
  maximum: max,
  description: `rows in this answer, 1..${max} (default ${dflt}); an answer also stops at ${MAX_ROW_BYTES / 1024} KiB of rows and gives next_cursor`,
});

/** Datasets whose declaration allows a parameter, for its description. */
const withParam = (datasets: readonly Dataset[], name: string): string =>
  datasets
    .filter((d) => allowedParams(d).includes(name))
    .map((d) => d.name)
    .join(', ');

const withDaily = (datasets: readonly Dataset[]): string =>
  datasets
    .filter((d) => d.daily?.aggregate)
    .map((d) => d.name)
    .join(', ');
const withBlocks = (datasets: readonly Dataset[]): string =>
  datasets
    .filter((d) => d.blocks)
    .map((d) => d.name)
    .join(', ');

/** What is known about a parameter's type; any other parameter of the routes is a string. */
function knownParams(datasets: readonly Dataset[], max: number, dflt: number): Record<string, JsonSchema> {
  return {
    date_from: str(
      'first date, inclusive, YYYY-MM-DD, on the dataset’s date field (list_datasets: date_field)',
    ),
    date_to: str('last date, inclusive, YYYY-MM-DD'),
    limit: limit(max, dflt),
    offset: { type: 'integer', minimum: 0, description: 'rows to skip (prefer cursor for the next page)' },
    cursor: str('next_cursor of the previous answer, with otherwise the same arguments'),
    sort: str('a row field to sort by (default: the dataset’s sort); ties broken by the unique key'),
    order: { type: 'string', enum: ['asc', 'desc'] },
    fields: {
      type: 'array',
      items: { type: 'string' },
      minItems: 1,
      description: 'row fields to return (default: every field)',
    },
    as_of: str(
      'point in time: the data as it stood at this instant (ISO 8601 with Z or an offset, e.g. 2024-06-30T00:00:00Z)',
    ),
    adjust: {
      type: 'string',
      enum: [...ADJUSTS],
      description: `price adjustment of daily bars: qfq (forward), hfq (backward), none; datasets: ${withParam(datasets, 'adjust')}`,
    },
    adjust_anchor: str(
      'with adjust=qfq: the date whose prices stay as traded (default: each code’s latest factor)',
    ),
    adjust_source: str('the source of the adjustment factors, when several are stored'),
    interval: {
      type: 'string',
      // One enum for both kinds: the dataset's parse refuses the other kind's values (4001).
      enum: [...new Set([...INTERVALS, ...MINUTE_INTERVALS])],
      description:
        `bar period. Daily datasets (${withDaily(datasets)}): 1d as stored, 1w, 1M, 1Q, 1Y. ` +
        `Minute datasets (${withBlocks(datasets)}): 1m as stored, 5m, 15m, 30m, 60m by session (never across the lunch break), 1d the day`,
    },
    time_from: str(
      'minute datasets: bars whose end minute is at or after this instant (ISO 8601 with an offset or Z, e.g. 2024-03-01T10:00:00+08:00)',
    ),
    time_to: str('minute datasets: bars whose end minute is at or before this instant (ISO 8601)'),
    batch_id: str('only the changes made by this batch'),
    since: str('only revisions that took effect at or after this instant (ISO 8601)'),
    until: str('only revisions that took effect at or before this instant (ISO 8601)'),
  };
}

/** The HTTP parameters a tool leaves out: JSON answers only. */
const NOT_OFFERED = new Set(['format']);

/** Exact and like filters of a dataset: they go in `filters`, the rest are the tool's own arguments. */
export const filterNames = (d: Dataset): string[] => [...d.exact, ...d.like].map((f) => f.apiName);

/** `dataset`, `filters`, then every other parameter any dataset's route accepts. */
function datasetTool(
  datasets: readonly Dataset[],
  paramsOf: (d: Dataset) => string[],
  filtersOf: (d: Dataset) => string[],
  filtersDescription: string,
): JsonSchema & { type: 'object' } {
  const known = knownParams(datasets, MAX_ROWS, DEFAULT_ROWS);
  const filters = new Set(datasets.flatMap(filtersOf));
  const properties: Record<string, JsonSchema> = {
    dataset: {
      type: 'string',
      enum: datasets.map((d) => d.name),
      description: 'the dataset (list_datasets describes each)',
    },
    filters: {
      type: 'object',
      additionalProperties: {
        anyOf: [
          { type: ['string', 'number', 'boolean'] },
          { type: 'array', items: { type: ['string', 'number'] }, minItems: 1 },
        ],
      },
      description: filtersDescription,
    },
  };
  for (const d of datasets) {
    for (const p of paramsOf(d)) {
      if (filters.has(p) || NOT_OFFERED.has(p) || properties[p]) continue;
      properties[p] = known[p] ?? str(`the ${p} parameter of the HTTP endpoint (docs/endpoints.md)`);
    }
  }
  return { type: 'object', properties, required: ['dataset'], additionalProperties: false };
}

const pageOutput = (items: string): JsonSchema & { type: 'object' } => ({
  type: 'object',
  properties: {
    dataset: { type: 'string' },
    [items]: ROWS,
    returned: { type: 'integer' },
    total: { type: 'integer' },
    has_more: { type: 'boolean' },
    next_cursor: nullableStr,
  },
  required: ['dataset', items, 'returned', 'total', 'has_more', 'next_cursor'],
});

const ANNOTATIONS = { readOnlyHint: true, openWorldHint: false, idempotentHint: true } as const;

/** The five tools, for one catalog. */
export function toolDefinitions(catalog: Catalog): ToolDefinition[] {
  const all = catalog.datasets;
  const daily = all.filter((d) => d.daily);
  const cal = catalog.calendar?.calendar ?? null;
  const tools: ToolDefinition[] = [
    {
      name: 'list_datasets',
      title: 'List datasets',
      description:
        'The datasets this service holds: name, description, filters, the date range and row count of the stored data. ' +
        'Give `dataset` for one dataset in full: every field with its type and description, its key, sort and parameters.',
      inputSchema: {
        type: 'object',
        properties: {
          dataset: {
            type: 'string',
            enum: all.map((d) => d.name),
            description: 'one dataset, described in full',
          },
        },
        additionalProperties: false,
      },
      outputSchema: {
        type: 'object',
        properties: { datasets: ROWS },
        required: ['datasets'],
      },
      annotations: ANNOTATIONS,
    },
    {
      name: 'query',
      title: 'Query a dataset',
      description:
        `Rows of one dataset, filtered, sorted and paged like GET on its endpoint: at most ${MAX_ROWS} rows and ` +
        `${MAX_ROW_BYTES / 1024} KiB per answer; when has_more, call again with the same arguments and cursor = next_cursor. ` +
        'as_of answers as the data stood at an instant; adjust and interval give adjusted or weekly/monthly bars of daily datasets, ' +
        'interval and time_from/time_to 5- to 60-minute or daily bars of minute datasets.',
      inputSchema: datasetTool(
        all,
        allowedParams,
        filterNames,
        'exact filters (equal; a list matches any of its values) and text filters (contains, case-insensitive) by row field name, e.g. {"code": ["510300", "510500"]}; list_datasets names each dataset’s filters',
      ),
      outputSchema: {
        ...pageOutput('rows'),
        properties: {
          ...(pageOutput('rows').properties as JsonSchema),
          adjust: { type: 'object', description: 'adjust method, anchor and codes without factors' },
        },
      },
      annotations: ANNOTATIONS,
    },
    {
      name: 'quality_report',
      title: 'Data-quality report',
      description:
        'Per code of a daily dataset: bars against the trading calendar (missing days), stale codes, impossible OHLC bars, ' +
        'zero-volume and off-calendar dates, price jumps no factor change explains (beyond jump_pct %), runs of identical bars ' +
        `and pre_close values inconsistent with the previous close and factors. At most ${MAX_ROWS} codes per answer; next_offset pages on.`,
      inputSchema: {
        type: 'object',
        properties: {
          dataset: {
            type: 'string',
            enum: daily.map((d) => d.name),
            description: 'a daily dataset (list_datasets: quality_report true); the others have no report',
          },
          ...Object.fromEntries(
            QUALITY_PARAMS.map((p): [string, JsonSchema] => {
              const known = knownParams(daily, MAX_ROWS, DEFAULT_ROWS);
              if (p === 'sort') return [p, { type: 'string', enum: [...QUALITY_SORTS] }];
              if (p === 'code') return [p, str('one code only')];
              if (p === 'exchange') return [p, str('the calendar to judge by (default: the dataset’s own)')];
              if (p === 'jump_pct')
                return [
                  p,
                  {
                    type: 'number',
                    exclusiveMinimum: 0,
                    maximum: 1000,
                    description: 'jump threshold, % (default 20)',
                  },
                ];
              return [p, known[p] ?? str(p)];
            }),
          ),
        },
        required: ['dataset'],
        additionalProperties: false,
      },
      outputSchema: {
        type: 'object',
        properties: {
          dataset: { type: 'string' },
          exchange: { type: 'string' },
          rows: ROWS,
          returned: { type: 'integer' },
          total: { type: 'integer' },
          offset: { type: 'integer' },
          next_offset: { type: ['integer', 'null'] },
          calendar: {
            type: ['object', 'null'],
            properties: { from: { type: 'string' }, to: { type: 'string' } },
            description:
              "the first and last day of the exchange's stored calendar (null: none); days outside it are not judged (each row's unjudged)",
          },
        },
        required: ['dataset', 'exchange', 'rows', 'returned', 'total', 'offset', 'next_offset', 'calendar'],
      },
      annotations: ANNOTATIONS,
      refusal:
        'has no quality report: only daily datasets are judged against the trading calendar (list_datasets: quality_report)',
    },
    {
      name: 'revision_trail',
      title: 'Revision trail',
      description:
        'Every stored version of the rows that match (inserts, updates, deletions), oldest first, with the batch that made it ' +
        'and when it was in force (valid_from, valid_to). Filter by the key fields to see one row’s history.',
      inputSchema: datasetTool(
        all,
        // A minute dataset's trail is its stored blocks' (one per code, day and source).
        (d) => revisionParams(d.blocks?.stored ?? d),
        (d) => (d.blocks?.stored ?? d).exact.map((f) => f.apiName),
        'exact filters by row field name (a list matches any of its values), e.g. {"code": "510300", "date": "2024-03-01"}',
      ),
      outputSchema: pageOutput('items'),
      annotations: ANNOTATIONS,
    },
  ];
  if (catalog.calendar && cal) {
    tools.push({
      name: 'trading_days',
      title: 'Trading days',
      description: `Open (or all) days of an exchange's trading calendar (dataset ${catalog.calendar.name}), ascending.`,
      inputSchema: {
        type: 'object',
        properties: {
          [cal.exchange.apiName]: str(`the exchange: ${cal.exchange.description ?? 'its code'}`),
          date_from: knownParams(all, MAX_DAYS, DEFAULT_DAYS).date_from,
          date_to: knownParams(all, MAX_DAYS, DEFAULT_DAYS).date_to,
          open_only: {
            type: 'boolean',
            description: 'only trading days (default true); false: closed days too',
          },
          source: str('one source’s calendar, when several are stored'),
          limit: limit(MAX_DAYS, DEFAULT_DAYS),
          cursor: str('next_cursor of the previous answer, with otherwise the same arguments'),
        },
        required: [cal.exchange.apiName],
        additionalProperties: false,
      },
      outputSchema: {
        ...pageOutput('days'),
        properties: { ...(pageOutput('days').properties as JsonSchema), exchange: { type: 'string' } },
      },
      annotations: ANNOTATIONS,
    });
  }
  return tools;
}
