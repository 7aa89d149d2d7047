import type { DatasetDeclaration, FieldDetail, FieldSpec, FieldType } from './types.js';
import { etfDaily, fx, indexDaily, industrySw, qdiiNav, stockDaily } from './datasets/standardized.js';
import {
  etfCrossBorderFeatures,
  etfDailyFeatures,
  etfRiskFeatures,
  indexDailyFeatures,
} from './datasets/features.js';
import {
  etfBasic,
  etfCrossBorder,
  etfDividend,
  etfFlow,
  etfHolders,
  etfHoldings,
  etfNav,
  etfPcf,
  etfPrice,
  etfSize,
} from './datasets/etf.js';
import {
  hsgtFlow,
  indexConstituents,
  indexMeta,
  macroIndicator,
  marginTrading,
  stockFinancials,
  stockSpot,
} from './datasets/stock-index-macro.js';
import { us13fHoldings, usCompanies, usFilings, usFinancialFacts, usInsiderTrades } from './datasets/us.js';

/** Every declaration, in the order the docs list them. */
export const DECLARATIONS: readonly DatasetDeclaration[] = [
  etfDaily,
  indexDaily,
  fx,
  qdiiNav,
  industrySw,
  stockDaily,
  etfDailyFeatures,
  etfRiskFeatures,
  etfCrossBorderFeatures,
  indexDailyFeatures,
  etfBasic,
  etfNav,
  etfPrice,
  etfSize,
  etfFlow,
  etfHoldings,
  etfPcf,
  etfHolders,
  etfDividend,
  etfCrossBorder,
  stockSpot,
  stockFinancials,
  indexConstituents,
  indexMeta,
  macroIndicator,
  marginTrading,
  hsgtFlow,
  usCompanies,
  usFilings,
  usFinancialFacts,
  usInsiderTrades,
  us13fHoldings,
];

/** Query parameters every endpoint owns; no filter may take these names. */
export const COMMON_QUERY_PARAMS = [
  'limit',
  'offset',
  'sort',
  'order',
  'fields',
  'format',
  'cursor',
] as const;
export const RANGE_PARAMS = ['date_from', 'date_to'] as const;

export interface Field {
  /** Ingest name; also the storage column. */
  readonly name: string;
  /** Name in returned rows and query parameters. */
  readonly apiName: string;
  readonly type: FieldType;
  readonly required: boolean;
  readonly enum: readonly (string | number)[] | null;
  readonly pattern: RegExp | null;
  readonly description: string | null;
  /** Set by the server (created_at), never ingested. */
  readonly serverSet: boolean;
}

export interface Dataset {
  readonly name: string;
  readonly layer: DatasetDeclaration['layer'];
  readonly description: string;
  readonly endpoint: string;
  /** Ingestible fields, in row order. */
  readonly fields: readonly Field[];
  /** Returned row fields: the ingestible ones plus created_at. */
  readonly rowFields: readonly Field[];
  readonly fieldByName: ReadonlyMap<string, Field>;
  readonly fieldByApiName: ReadonlyMap<string, Field>;
  readonly key: readonly Field[];
  readonly partition: Field | null;
  readonly range: Field | null;
  readonly sort: { readonly field: Field; readonly order: 'asc' | 'desc' };
  readonly exact: readonly Field[];
  readonly like: readonly Field[];
  readonly sourceField: Field | null;
}

export class CatalogError extends Error {}

const IDENT = /^[a-z][a-z0-9_]*$/;
const FIELD_TYPES: readonly FieldType[] = ['string', 'number', 'integer', 'date', 'timestamp', 'flag'];

function detail(spec: FieldSpec): FieldDetail {
  if (typeof spec !== 'string') return spec;
  const required = spec.endsWith('!');
  return { type: (required ? spec.slice(0, -1) : spec) as FieldType, required };
}

function compileField(decl: DatasetDeclaration, name: string, spec: FieldSpec): Field {
  const d = detail(spec);
  const where = `${decl.name}.${name}`;
  if (!IDENT.test(name)) throw new CatalogError(`${where}: field name must match ${IDENT}`);
  if (!FIELD_TYPES.includes(d.type)) throw new CatalogError(`${where}: unknown type ${String(d.type)}`);
  return {
    name,
    apiName: decl.rename?.[name] ?? name,
    type: d.type,
    required: d.required ?? false,
    enum: d.enum ?? null,
    pattern: d.pattern ? new RegExp(d.pattern) : null,
    description: d.description ?? null,
    serverSet: false,
  };
}

/** Compiles one declaration and checks it is consistent; throws CatalogError otherwise. */
export function compileDataset(decl: DatasetDeclaration): Dataset {
  const fail = (msg: string): never => {
    throw new CatalogError(`${decl.name}: ${msg}`);
  };
  if (!IDENT.test(decl.name)) fail(`dataset name must match ${IDENT}`);
  if (!/^\/api\/v1\/[a-z0-9/-]+$/.test(decl.endpoint))
    fail(`endpoint ${decl.endpoint} must be under /api/v1/`);
  const fields = Object.entries(decl.fields).map(([n, s]) => compileField(decl, n, s));
  if ('created_at' in decl.fields) fail('created_at is set by the server and cannot be declared');
  const createdAt: Field = {
    name: 'created_at',
    apiName: 'created_at',
    type: 'timestamp',
    required: false,
    enum: null,
    pattern: null,
    description: 'when the row was first stored (set by the server)',
    serverSet: true,
  };
  const rowFields = [...fields, createdAt];
  const fieldByName = new Map(fields.map((f) => [f.name, f]));
  const fieldByApiName = new Map<string, Field>();
  for (const f of rowFields) {
    if (fieldByApiName.has(f.apiName)) fail(`two fields are returned as ${f.apiName}`);
    if (!IDENT.test(f.apiName)) fail(`row name ${f.apiName} must match ${IDENT}`);
    fieldByApiName.set(f.apiName, f);
  }
  for (const from of Object.keys(decl.rename ?? {})) {
    if (!fieldByName.has(from)) fail(`rename of unknown field ${from}`);
  }
  const ingestField = (n: string, what: string): Field =>
    fieldByName.get(n) ?? fail(`${what} ${n} is not a field`);
  const rowField = (n: string, what: string): Field =>
    fieldByApiName.get(n) ?? fail(`${what} ${n} is not a row field`);

  if (decl.key.length === 0) fail('empty unique key');
  const key = decl.key.map((n) => ingestField(n, 'key field'));
  for (const k of key) if (!k.required) fail(`key field ${k.name} must be required`);
  if (new Set(decl.key).size !== decl.key.length) fail('repeated key field');

  const partition = decl.partition === null ? null : ingestField(decl.partition, 'partition field');
  if (partition && (partition.type !== 'date' || !partition.required)) {
    fail('partition field must be a required date');
  }
  const range = decl.range === null ? null : rowField(decl.range, 'range field');
  if (range && range.type !== 'date') fail('range field must be a date');
  const sortField = rowField(decl.sort.field, 'sort field');
  const exact = decl.exact.map((n) => rowField(n, 'exact filter'));
  const like = (decl.like ?? []).map((n) => rowField(n, 'like filter'));
  for (const l of like) if (l.type !== 'string') fail(`like filter ${l.apiName} must be a string field`);
  const filterNames = [...exact, ...like].map((f) => f.apiName);
  if (new Set(filterNames).size !== filterNames.length) fail('a filter is declared twice');
  for (const n of filterNames) {
    if (
      (COMMON_QUERY_PARAMS as readonly string[]).includes(n) ||
      (RANGE_PARAMS as readonly string[]).includes(n)
    ) {
      fail(`filter ${n} collides with a common query parameter`);
    }
  }
  const sourceName = decl.sourceField ?? (fieldByName.has('source') ? 'source' : null);
  const sourceField = sourceName === null ? null : ingestField(sourceName, 'source field');
  if (sourceField && sourceField.type !== 'string') fail('source field must be a string');
  const updatedAt = fieldByName.get('updated_at');
  if (!updatedAt || updatedAt.type !== 'timestamp') fail('every dataset has updated_at (timestamp)');

  return Object.freeze({
    name: decl.name,
    layer: decl.layer,
    description: decl.description,
    endpoint: decl.endpoint,
    fields,
    rowFields,
    fieldByName,
    fieldByApiName,
    key,
    partition,
    range,
    sort: { field: sortField, order: decl.sort.order },
    exact,
    like,
    sourceField,
  });
}

export interface Catalog {
  readonly datasets: readonly Dataset[];
  readonly byName: ReadonlyMap<string, Dataset>;
}

/** Compiles every declaration and checks the catalog as a whole (unique names and endpoints). */
export function compileCatalog(decls: readonly DatasetDeclaration[]): Catalog {
  const datasets = decls.map(compileDataset);
  const byName = new Map<string, Dataset>();
  const endpoints = new Set<string>();
  for (const d of datasets) {
    if (byName.has(d.name)) throw new CatalogError(`dataset ${d.name} declared twice`);
    if (endpoints.has(d.endpoint)) throw new CatalogError(`endpoint ${d.endpoint} declared twice`);
    if (d.name.startsWith('mds_')) throw new CatalogError(`${d.name}: the mds_ prefix is reserved`);
    byName.set(d.name, d);
    endpoints.add(d.endpoint);
  }
  return Object.freeze({ datasets, byName });
}

/** The service's catalog, compiled and checked once at import (boot). */
export const CATALOG: Catalog = compileCatalog(DECLARATIONS);
