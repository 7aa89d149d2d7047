import { universeToolDefinition } from './universe-tool.js';
import type { Catalog, Dataset } from '../catalog/catalog.js';
import { QUALITY_PARAMS } from '../query/quality-service.js';
import { MINUTE_QUALITY_PARAMS } from '../query/minute-quality.js';
import { QUALITY_SORTS } from '../model/quality-rules.js';
import {
  endpointParameters,
  endpointParamNames,
  QUERY_PARAMETERS,
  RANGE_SUMMARIES,
  type EndpointParam,
  type QueryEndpoint,
  type QueryParameter,
} from '../query/query-params.js';

/**
 * The tools' input and output schemas (JSON Schema), derived from the catalog and from the
 * parameters the HTTP endpoints declare (query/query-params.ts: which endpoint takes each, its
 * words and schema; QUALITY_PARAMS): a parameter added there appears here without a change.
 * Rules the schema cannot say per dataset (which filters, which sort fields, real dates) are left
 * to query/parse.ts, whose 4001 messages come back as tool errors naming what is allowed.
 */

export type JsonSchema = { [k: string]: unknown };

/** Rows of one answer: the most a tool returns, and its default. */
export const MAX_ROWS = 200;
export const DEFAULT_ROWS = 50;
/** Trading days are one short row each: a year and more in one answer. */
export const MAX_DAYS = 1000;
export const DEFAULT_DAYS = 500;
/** Events in one `changes` answer (each lists up to 1,000 codes, so fewer than rows). */
export const MAX_CHANGES = 100;
export const DEFAULT_CHANGES = 20;
/** Bytes of row JSON in one answer: fewer rows are returned (with a cursor) rather than more. */
export const MAX_ROW_BYTES = 64 * 1024;

export const TOOL_NAMES = [
  'list_datasets',
  'query',
  'quality_report',
  'revision_trail',
  'trading_days',
  'universe',
  'changes',
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

const CURSOR = str('next_cursor of the previous answer, with otherwise the same arguments');

const limit = (max: number, dflt: number): JsonSchema => ({
  type: 'integer',
  minimum: 1,
  maximum: max,
  description: `rows in this answer, 1..${max} (default ${dflt}); an answer also stops at ${MAX_ROW_BYTES / 1024} KiB of rows and gives next_cursor`,
});

/** Schema keys a tool keeps from a declared parameter: parse.ts checks the rest (patterns,
 * formats) with its 4001 naming what is allowed, and a tool's defaults are its own (limit). */
const KEPT_KEYS = ['type', 'enum', 'minimum', 'maximum'] as const;
/** An enum that differs by dataset is listed whole up to this many values (interval's two kinds);
 * a longer one (a dataset's field names) is left to the description and the 4001. */
const MAX_UNION_ENUM = 16;

/**
 * A query parameter as one schema for all `datasets` whose `endpoint` takes it, from its
 * declaration (query/query-params.ts): its words when every dataset has the same, else its
 * summary; its type, enum and bounds where the datasets agree. Undefined: none takes it.
 */
function declaredParam(
  datasets: readonly Dataset[],
  endpoint: QueryEndpoint,
  name: string,
): JsonSchema | undefined {
  const taking: { dataset: string; doc: EndpointParam }[] = datasets.flatMap((d) =>
    endpointParameters(d, endpoint)
      .filter((p) => p.name === name)
      .map((doc) => ({ dataset: d.name, doc })),
  );
  const docs = taking.map((t) => t.doc);
  const [first] = docs;
  if (!first) return undefined;
  const words = [...new Set(docs.map((p) => p.description))];
  const declared = (QUERY_PARAMETERS as Record<string, QueryParameter<unknown>>)[name];
  const summary = name === 'date_from' || name === 'date_to' ? RANGE_SUMMARIES[name] : declared?.summary;
  const schema: JsonSchema = {};
  for (const key of KEPT_KEYS) {
    const values = docs.map((p) => (p.schema as Record<string, unknown>)[key]);
    if (values.every((v) => v === undefined)) continue;
    if (key === 'enum') {
      const union = [...new Set(values.flatMap((v) => (Array.isArray(v) ? (v as unknown[]) : [])))];
      const same = values.every((v) => JSON.stringify(v) === JSON.stringify(values[0]));
      if (same || union.length <= MAX_UNION_ENUM) schema.enum = union;
    } else if (values.every((v) => JSON.stringify(v) === JSON.stringify(values[0]))) {
      schema[key] = values[0];
    }
  }
  const description = words.length === 1 ? first.description : (summary ?? words.join(' / '));
  // Which datasets take it, when few do: a tool has one schema for them all.
  const few = taking.length * 2 < datasets.length;
  const names = taking.map((t) => t.dataset).join(', ');
  return { ...schema, description: few ? `${description}. Datasets: ${names}` : description };
}

/**
 * A tool's argument for a query parameter: the declared one, except where the tool's argument
 * differs from the HTTP parameter's form — a tool's page size and cursor are its own answer's,
 * and `fields` is a list rather than comma-separated text.
 */
function toolParam(
  datasets: readonly Dataset[],
  endpoint: QueryEndpoint,
  max: number,
  dflt: number,
  name: string,
): JsonSchema | undefined {
  const declared = declaredParam(datasets, endpoint, name);
  if (!declared) return undefined;
  if (name === 'limit') return limit(max, dflt);
  if (name === 'cursor') return CURSOR;
  if (name === 'fields')
    return { type: 'array', items: { type: 'string' }, minItems: 1, description: declared.description };
  return declared;
}

/** The HTTP parameters a tool leaves out: JSON answers only. */
const NOT_OFFERED = new Set(['format']);

/** Exact and like filters of a dataset: they go in `filters`, the rest are the tool's own arguments. */
export const filterNames = (d: Dataset): string[] => [...d.exact, ...d.like].map((f) => f.apiName);

/**
 * `dataset`, `filters`, then every other parameter any dataset's `endpoint` accepts, as declared
 * for the dataset `read` reads (a minute dataset's trail is its stored blocks').
 */
function datasetTool(
  datasets: readonly Dataset[],
  endpoint: QueryEndpoint,
  read: (d: Dataset) => Dataset,
  filtersOf: (d: Dataset) => string[],
  filtersDescription: string,
): JsonSchema & { type: 'object' } {
  const read_ = datasets.map(read);
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
  for (const d of read_) {
    for (const p of endpointParamNames(d, endpoint)) {
      if (filters.has(p) || NOT_OFFERED.has(p) || properties[p]) continue;
      const schema = toolParam(read_, endpoint, MAX_ROWS, DEFAULT_ROWS, p);
      if (schema) properties[p] = schema;
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

/** The tools, for one catalog. */
export function toolDefinitions(catalog: Catalog): ToolDefinition[] {
  const all = catalog.datasets;
  const daily = all.filter((d) => d.daily);
  // The minute datasets' report compares them with their daily dataset (docs/minute-bars.md).
  const minute = all.filter((d) => d.blocks);
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
        'rows',
        (d) => d,
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
        'and pre_close values inconsistent with the previous close and factors. ' +
        'Per code of a minute dataset: each day resampled to 1d against the daily dataset of the same source (mismatches beyond tolerance), ' +
        'days with minutes but no daily bar and the reverse, minutes missing inside a session (gaps), impossible bars; ' +
        'it takes code, source, date_from, date_to, limit, offset and order. ' +
        `At most ${MAX_ROWS} codes per answer; next_offset pages on.`,
      inputSchema: {
        type: 'object',
        properties: {
          dataset: {
            type: 'string',
            enum: [...daily, ...minute].map((d) => d.name),
            description:
              'a daily or minute dataset (list_datasets: quality_report true); the others have no report',
          },
          ...Object.fromEntries(
            [...new Set([...QUALITY_PARAMS, ...MINUTE_QUALITY_PARAMS])].map((p): [string, JsonSchema] => {
              if (p === 'source') return [p, str('minute datasets: one source only')];
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
              return [p, toolParam(daily, 'rows', MAX_ROWS, DEFAULT_ROWS, p) ?? str(p)];
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
          exchange: { type: 'string', description: 'daily datasets: the calendar judged by' },
          daily: {
            type: ['string', 'null'],
            description: 'minute datasets: the daily dataset compared with (null: none)',
          },
          tolerance: {
            type: 'object',
            description: 'minute datasets: the largest differences taken as equal (price, volume, amount)',
          },
          rows: ROWS,
          returned: { type: 'integer' },
          total: { type: 'integer' },
          offset: { type: 'integer' },
          next_offset: { type: ['integer', 'null'] },
          calendar: {
            type: ['object', 'null'],
            properties: { from: { type: 'string' }, to: { type: 'string' } },
            description:
              "daily datasets: the first and last day of the exchange's stored calendar (null: none); days outside it are not judged (each row's unjudged)",
          },
        },
        required: ['dataset', 'rows', 'returned', 'total', 'offset', 'next_offset'],
      },
      annotations: ANNOTATIONS,
      refusal:
        'has no quality report: only daily datasets (against the trading calendar) and minute datasets (against their daily bars) are judged (list_datasets: quality_report)',
    },
    {
      name: 'revision_trail',
      title: 'Revision trail',
      description:
        'Every stored version of the rows that match (inserts, updates, deletions), oldest first, with the batch that made it ' +
        'and when it was in force (valid_from, valid_to). Filter by the key fields to see one row’s history.',
      inputSchema: datasetTool(
        all,
        'trail',
        // A minute dataset's trail is its stored blocks' (one per code, day and source).
        (d) => d.blocks?.stored ?? d,
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
          date_from: toolParam([catalog.calendar], 'rows', MAX_DAYS, DEFAULT_DAYS, 'date_from'),
          date_to: toolParam([catalog.calendar], 'rows', MAX_DAYS, DEFAULT_DAYS, 'date_to'),
          open_only: {
            type: 'boolean',
            description: 'only trading days (default true); false: closed days too',
          },
          source: str('one source’s calendar, when several are stored'),
          limit: limit(MAX_DAYS, DEFAULT_DAYS),
          cursor: CURSOR,
        },
        required: [cal.exchange.apiName],
        additionalProperties: false,
      },
      outputSchema: {
        ...pageOutput('days'),
        properties: {
          ...(pageOutput('days').properties as JsonSchema),
          exchange: { type: 'string' },
          calendar: {
            type: ['object', 'null'],
            properties: { from: { type: 'string' }, to: { type: 'string' } },
            description:
              "the first and last day of the exchange's stored calendar (null: none); days outside it are unknown, and the summary says when the range asked reaches beyond it",
          },
        },
      },
      annotations: ANNOTATIONS,
    });
  }
  tools.push(universeToolDefinition());
  tools.push({
    name: 'changes',
    title: 'Changes',
    description:
      'The change feed: every committed change of the datasets after an event id, oldest first — its kind (batch, revert, ' +
      'snapshot_prune, factor_change, calendar_change), batch, instant, counts by op, and the codes and dates it touched ' +
      '(a factor_change names the datasets whose adjusted prices of those codes changed). Pass next_since back as since.',
    inputSchema: {
      type: 'object',
      properties: {
        datasets: {
          type: 'array',
          items: { type: 'string', enum: all.map((d) => d.name) },
          description: 'only these datasets',
        },
        since: {
          type: 'integer',
          minimum: 0,
          description: 'events after this id (the last one seen); absent: from the oldest kept',
        },
        limit: limit(MAX_CHANGES, DEFAULT_CHANGES),
      },
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        events: ROWS,
        returned: { type: 'integer' },
        next_since: { type: 'integer' },
        latest_id: { type: 'integer' },
        has_more: { type: 'boolean' },
      },
      required: ['events', 'returned', 'next_since', 'latest_id', 'has_more'],
    },
    annotations: ANNOTATIONS,
  });
  return tools;
}
