import { Type } from '@sinclair/typebox';
import type { Catalog, Dataset } from '../catalog/catalog.js';
import { MinuteQualityAnswerSchema, QUALITY_SORT_ENUM, QualityAnswerSchema } from '../contract/quality.js';
import { MINUTE_QUALITY_LIMIT } from '../query/minute-quality.js';
import { DEFAULT_LIMIT, MAX_LIMIT, QUERY_DATE } from '../query/query-params.js';
import { DEFAULT_JUMP_PCT } from '../model/quality-rules.js';
import type { ApiOperation, ApiParameter } from './api-operations.js';

/** The data-quality report as an operation (GET /api/v1/quality/{dataset}). */

/** The report's parameters: the dataset (path) and the query string. */
export function qualityParameters(catalog?: Catalog): ApiParameter[] {
  const names = catalog?.datasets.filter((d) => d.daily).map((d) => d.name);
  return [
    {
      name: 'dataset',
      in: 'path',
      required: true,
      description: 'a daily series keyed by code and date',
      schema: names ? Type.String({ enum: names }) : Type.String(),
      example: 'etf_daily',
    },
    {
      name: 'code',
      in: 'query',
      description: 'one code only; CN codes also as 510300.SH or sh510300 (docs/endpoints.md)',
      schema: Type.String(),
    },
    {
      name: 'date_from',
      in: 'query',
      description: 'inclusive lower bound on the bar date, YYYY-MM-DD or YYYYMMDD',
      schema: QUERY_DATE,
    },
    {
      name: 'date_to',
      in: 'query',
      description: 'inclusive upper bound on the bar date, YYYY-MM-DD or YYYYMMDD',
      schema: QUERY_DATE,
    },
    {
      name: 'exchange',
      in: 'query',
      description:
        'the trading calendar (trade_calendar.exchange) to judge by; default per dataset (catalog daily.calendar)',
      schema: Type.String(),
    },
    {
      name: 'limit',
      in: 'query',
      description: `rows per page; values above ${MAX_LIMIT} are clamped`,
      schema: Type.Integer({ minimum: 1, default: DEFAULT_LIMIT }),
    },
    {
      name: 'offset',
      in: 'query',
      description: 'rows to skip',
      schema: Type.Integer({ minimum: 0, default: 0 }),
    },
    {
      name: 'sort',
      in: 'query',
      description: 'field to sort by; ties by code',
      schema: Type.String({ enum: QUALITY_SORT_ENUM, default: 'missing' }),
    },
    {
      name: 'order',
      in: 'query',
      description: 'sort direction (default desc for missing, else asc)',
      schema: Type.String({ enum: ['asc', 'desc'] }),
    },
    {
      name: 'jump_pct',
      in: 'query',
      description:
        "a close that moved more than this many percent from the previous bar's close (times the factor change) is listed in jumps",
      schema: Type.Number({ exclusiveMinimum: 0, maximum: 1000, default: DEFAULT_JUMP_PCT }),
    },
  ];
}

/** The report for query keys, and the same behind the admin token for the dashboard; the minute datasets' reports. */
export function qualityOperations(catalog: Catalog): ApiOperation[] {
  const report = qualityOperation(catalog);
  return [
    report,
    ...catalog.datasets.filter((d) => d.blocks).map(minuteQualityOperation),
    {
      ...report,
      path: '/admin/api/quality/{dataset}',
      operationId: 'admin_quality',
      tags: ['admin'],
      summary: 'Data-quality report (dashboard)',
      description: 'The report of GET /api/v1/quality/{dataset}, behind the admin token for the dashboard.',
      auth: 'admin',
    },
    ...catalog.datasets
      .filter((d) => d.blocks)
      .map((d): ApiOperation => ({
        ...minuteQualityOperation(d),
        path: `/admin/api/quality/${d.name}`,
        operationId: `admin_quality_report_${d.name}`,
        tags: ['admin'],
        summary: `Data-quality report of ${d.name} (dashboard)`,
        description: `The report of GET /api/v1/quality/${d.name}, behind the admin token for the dashboard.`,
        auth: 'admin',
      })),
  ];
}

/** A minute dataset's report: its own path (more specific than the daily report's `{dataset}`) and answer. */
function minuteQualityOperation(d: Dataset): ApiOperation {
  const [, code, dateFrom, dateTo, limit, offset, , order] = qualityParameters();
  return {
    method: 'get',
    path: `/api/v1/quality/${d.name}`,
    operationId: `quality_report_${d.name}`,
    tags: ['reference'],
    summary: `Data-quality report of ${d.name}`,
    description:
      "One row per code, paged by code: each day's minute bars resampled to 1d against the daily dataset's bar of " +
      'the same source (fields beyond meta.tolerance listed), days with minutes but no daily bar and the reverse, ' +
      'minutes missing inside a session, impossible bars. A page reads at most 6,000 code-days of blocks. ' +
      'See docs/minute-bars.md.',
    auth: 'query',
    parameters: [
      ...[code, dateFrom, dateTo].flatMap((p) => (p ? [p] : [])),
      { name: 'source', in: 'query', description: 'one source only', schema: Type.String() },
      ...(limit ? [{ ...limit, schema: Type.Integer({ minimum: 1, default: MINUTE_QUALITY_LIMIT }) }] : []),
      ...(offset ? [offset] : []),
      {
        ...(order as ApiParameter),
        description: 'order of the codes (default asc)',
        schema: Type.String({ enum: ['asc', 'desc'] }),
      },
    ],
    responses: {
      200: {
        description: 'the report in the envelope',
        content: { 'application/json': MinuteQualityAnswerSchema },
      },
    },
    errors: [4001, 4006, 4008],
  };
}

function qualityOperation(catalog: Catalog): ApiOperation {
  return {
    method: 'get',
    path: '/api/v1/quality/{dataset}',
    operationId: 'quality_report',
    tags: ['reference'],
    summary: 'Data-quality report of a daily series',
    description:
      'One row per code: bars against the open days of a trading calendar (missing days and the ' +
      'first 50 of them), stale codes, impossible bars and zero-volume days. Cached per version of ' +
      'the dataset and of the calendar. See docs/bars-and-quality.md.',
    auth: 'query',
    parameters: qualityParameters(catalog),
    responses: {
      200: {
        description: 'the report in the envelope',
        content: { 'application/json': QualityAnswerSchema },
      },
    },
    errors: [4001, 4006, 4008, 4041],
  };
}
