import type { Dataset, Field } from '../catalog/catalog.js';
import type { FieldType } from '../catalog/types.js';

/**
 * JSON Schemas derived from the catalog: one source for response serialisation
 * (fast-json-stringify) and for the OpenAPI document.
 */
type JsonSchema = Record<string, unknown>;

const BASE: Record<FieldType, JsonSchema> = {
  string: { type: 'string' },
  number: { type: 'number' },
  integer: { type: 'integer' },
  date: { type: 'string', format: 'date' },
  timestamp: { type: 'string', format: 'date-time' },
  flag: { type: 'integer', enum: [0, 1] },
};

export function fieldSchema(f: Field): JsonSchema {
  const s: JsonSchema = { ...BASE[f.type] };
  const base = s.type as string;
  if (f.enum && f.type !== 'flag') s.enum = [...f.enum];
  if (f.pattern) s.pattern = f.pattern.source;
  if (f.description) s.description = f.description;
  if (f.required || f.serverSet) return s;
  s.type = [base, 'null'];
  if (Array.isArray(s.enum)) s.enum = [...(s.enum as unknown[]), null];
  return s;
}

export function rowSchema(d: Dataset): JsonSchema {
  return {
    type: 'object',
    properties: Object.fromEntries(d.rowFields.map((f) => [f.apiName, fieldSchema(f)])),
  };
}

export const metaSchema: JsonSchema = {
  type: 'object',
  required: ['total', 'limit', 'offset', 'has_more'],
  properties: {
    total: { type: 'integer', description: 'total matching rows, ignoring pagination' },
    limit: { type: 'integer', description: 'page size applied (1..1000)' },
    offset: { type: 'integer' },
    has_more: { type: 'boolean', description: 'offset + data.length < total' },
    next_cursor: {
      type: ['string', 'null'],
      description: 'opaque keyset cursor of the next page (pass as cursor=); null on the last page',
    },
  },
};

export function envelopeSchema(data: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['code', 'message', 'data', 'meta'],
    properties: {
      code: { type: 'integer', description: '0 on success' },
      message: { type: 'string' },
      data: { type: 'array', items: data },
      meta: metaSchema,
    },
  };
}

export const recordErrorSchema: JsonSchema = {
  type: 'object',
  properties: {
    index: { type: ['integer', 'null'] },
    idempotency_key: { type: ['string', 'null'] },
    field: { type: ['string', 'null'] },
    reason: { type: 'string' },
  },
};

export const batchStatusSchema: JsonSchema = {
  type: 'object',
  properties: {
    code: { type: 'integer', description: '0, 2070 (partial) or 4221 (all rejected)' },
    message: { type: 'string' },
    batch_id: { type: 'string' },
    dataset: { type: 'string' },
    source: { type: 'string' },
    operation: { type: 'string' },
    snapshot_type: { type: 'string' },
    business_date: { type: 'string', format: 'date' },
    source_system: { type: 'string' },
    source_run_id: { type: 'string' },
    record_count: { type: 'integer' },
    checksum: { type: 'string' },
    status: { type: 'string', enum: ['accepted', 'duplicate', 'partial', 'rejected'] },
    accepted: { type: 'integer' },
    rejected: { type: 'integer' },
    duplicate: { type: 'integer' },
    pruned: { type: 'integer', description: 'rows deleted by a full snapshot' },
    errors: { type: 'array', items: recordErrorSchema },
    created_at: { type: 'string', format: 'date-time' },
    processed_at: { type: 'string', format: 'date-time' },
  },
};
