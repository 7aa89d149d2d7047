import type { Dataset, Field } from '../catalog/catalog.js';
import { EXPORT_FORMATS, type ExportFormat } from '../export/export-formats.js';
import { invalid } from '../errors.js';
import { REVISION_FIELDS } from '../model/revisions.js';
import type { QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import { parseQuery, type ParsedQuery } from './parse.js';
import { endpointParamNames, readParam } from './query-params.js';
import { planQuery } from './plan.js';

/** The trail's path: the dataset's name, e.g. /api/v1/revisions/etf_daily. */
export const revisionsPath = (d: Dataset): string => `/api/v1/revisions/${d.name}`;

/**
 * GET /api/v1/revisions/{dataset}: the revision trail. The dataset endpoint's exact and
 * date-range filters (same names), `batch_id`, `since` / `until` (inclusive bounds on
 * valid_from), the paging parameters and `format` (query-params.ts, endpoint `trail`); always
 * sorted by valid_from, then the key.
 */
const OWN = ['batch_id', 'since', 'until'] as const;

export const revisionParams = (d: Dataset): string[] => endpointParamNames(d, 'trail');

export function parseRevisionQuery(
  d: Dataset,
  raw: Record<string, unknown>,
): { parsed: ParsedQuery; plan: QueryPlan } {
  const allowed = revisionParams(d);
  const rest: Record<string, unknown> = {};
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (!allowed.includes(k)) {
      throw invalid(`unknown parameter "${k}"; allowed: ${allowed.join(', ')}`, { parameter: k, allowed });
    }
    if ((OWN as readonly string[]).includes(k)) {
      if (typeof v !== 'string' || !v.isWellFormed() || v.includes('\u0000')) {
        throw invalid(`parameter ${k} must be given once, as text`, { parameter: k });
      }
      own[k] = v;
    } else rest[k] = v;
  }
  const parsed = parseQuery(d, rest);
  const plan = planQuery(d, parsed);
  const where = [...plan.where];
  const get = (name: string): string | undefined => own[name];
  const batchId = readParam('batch_id', d, get);
  if (batchId !== null) where.push({ field: REVISION_FIELDS.batchId, op: 'eq', value: batchId });
  for (const [name, op] of [
    ['since', 'gte'],
    ['until', 'lte'],
  ] as const) {
    const at = readParam(name, d, get);
    if (at !== null) where.push({ field: REVISION_FIELDS.validFrom, op, value: at });
  }
  return {
    parsed,
    plan: {
      ...plan,
      trail: true,
      where,
      select: [
        ...d.rowFields,
        REVISION_FIELDS.op,
        REVISION_FIELDS.batchId,
        REVISION_FIELDS.validFrom,
        REVISION_FIELDS.validTo,
      ],
      orderBy: [
        { field: REVISION_FIELDS.validFrom, dir: 'asc' },
        ...d.key.map((k) => ({ field: k, dir: 'asc' as const })),
      ],
    },
  };
}

export interface RevisionItem {
  op: Value;
  batch_id: Value;
  valid_from: Value;
  valid_to: Value;
  row: Record<string, Value>;
}

/** A trail row (row fields and revision columns) as the endpoint's item. */
export function revisionItem(d: Dataset, r: Record<string, Value>): RevisionItem {
  const row: Record<string, Value> = {};
  for (const f of d.rowFields) row[f.apiName] = r[f.apiName] ?? null;
  return {
    op: r[REVISION_FIELDS.op.apiName] ?? null,
    batch_id: r[REVISION_FIELDS.batchId.apiName] ?? null,
    valid_from: r[REVISION_FIELDS.validFrom.apiName] ?? null,
    valid_to: r[REVISION_FIELDS.validTo.apiName] ?? null,
    row,
  };
}

/** The revision columns under the item's names, first in a flat export. */
const EXPORT_FIELDS: readonly Field[] = [
  { ...REVISION_FIELDS.op, apiName: 'op' },
  { ...REVISION_FIELDS.batchId, apiName: 'batch_id' },
  { ...REVISION_FIELDS.validFrom, apiName: 'valid_from' },
  { ...REVISION_FIELDS.validTo, apiName: 'valid_to' },
];

/**
 * The trail as an export: NDJSON writes the items as the JSON pages hold them; CSV, Arrow and
 * Parquet a flat table, op, batch_id, valid_from and valid_to first, then the row's fields.
 */
export function revisionExport(
  d: Dataset,
  format: ExportFormat,
  rows: AsyncIterable<Record<string, Value>[]>,
): { fields: readonly Field[]; rows: AsyncIterable<Record<string, Value>[]> } {
  const fields = [...EXPORT_FIELDS, ...d.rowFields];
  async function* items(): AsyncGenerator<Record<string, Value>[]> {
    for await (const chunk of rows) {
      yield chunk.map((r) => {
        const it = revisionItem(d, r);
        if (EXPORT_FORMATS[format].trail === 'items') return it as unknown as Record<string, Value>;
        const { row, ...head } = it;
        return { ...head, ...row };
      });
    }
  }
  return { fields, rows: items() };
}
