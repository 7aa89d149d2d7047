import { UNIT_BY_NAME } from './units.js';
import { STANDARDIZED_DATASETS } from './datasets/standardized.js';
import { FEATURE_DATASETS } from './datasets/features.js';
import { ETF_DATASETS } from './datasets/etf.js';
import { STOCK_INDEX_MACRO_DATASETS } from './datasets/stock-index-macro.js';
import { US_DATASETS } from './datasets/us.js';
import { REFERENCE_DATASETS } from './datasets/reference.js';
import { SECURITY_MASTER_DATASETS } from './datasets/security-master.js';
import { MINUTE_DATASETS } from './datasets/minute.js';
import type {
  Aggregation,
  BlocksDeclaration,
  CodeMarket,
  DatasetDeclaration,
  FieldDetail,
  FieldSpec,
  FieldType,
} from './types.js';

/** Every declaration, in the order the docs list them. */
export const DECLARATIONS: readonly DatasetDeclaration[] = [
  ...STANDARDIZED_DATASETS,
  ...FEATURE_DATASETS,
  ...ETF_DATASETS,
  ...STOCK_INDEX_MACRO_DATASETS,
  ...US_DATASETS,
  ...REFERENCE_DATASETS,
  ...SECURITY_MASTER_DATASETS,
  ...MINUTE_DATASETS,
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
  'as_of',
] as const;
export const RANGE_PARAMS = ['date_from', 'date_to'] as const;
/** Most values one exact filter takes (a comma list and repeated parameters together). */
export const MAX_FILTER_VALUES = 1000;

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
  /** Numbers: values must be greater than this; null: no bound. */
  readonly exclusiveMinimum: number | null;
  /** Set by the server (created_at, and the period fields of resampled rows), never ingested. */
  readonly serverSet: boolean;
  /** Numbers and integers: what they count (units.ts: `CNY`, `shares`, `%`, …); null otherwise. */
  readonly unit: string | null;
  /** Stored but left out of the row's JSON (a bar block's payload: `BarBlocks`). */
  readonly opaque?: boolean;
}

export const INTERVALS = ['1d', '1w', '1M', '1Q', '1Y'] as const;
export type Interval = (typeof INTERVALS)[number];
export const ADJUSTS = ['none', 'qfq', 'hfq'] as const;
export type Adjust = (typeof ADJUSTS)[number];

/** A dataset keyed by code and date (types.ts `DailyDeclaration`), compiled. */
export interface DailySeries {
  readonly code: Field;
  readonly date: Field;
  /** Key fields besides the date: a resampled row aggregates one group's bars (code, source). */
  readonly group: readonly Field[];
  readonly calendar: string;
  readonly bar: {
    readonly open: Field;
    readonly high: Field;
    readonly low: Field;
    readonly close: Field;
    readonly preClose: Field | null;
    readonly change: Field | null;
    readonly pctChg: Field | null;
    readonly volume: Field | null;
    /** 1 on a suspended day (flag): not judged as zero volume or an identical run. */
    readonly suspended: Field | null;
  } | null;
  /** Every aggregated row field's aggregation; null: no `interval`. */
  readonly aggregate: ReadonlyMap<Field, Aggregation> | null;
  /** Rows of a resampled answer: the row fields plus `period_start` and `bar_count`. */
  readonly resampledFields: readonly Field[];
  readonly adjust: { readonly factors: string; readonly prices: readonly Field[] } | null;
}

export interface FactorSeries {
  readonly code: Field;
  readonly date: Field;
  readonly value: Field;
}

export interface CalendarSeries {
  readonly exchange: Field;
  readonly date: Field;
  readonly isOpen: Field;
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
  /** Exact filters holding instrument codes, and their market (types.ts `codes`). */
  readonly codes: ReadonlyMap<Field, CodeMarket>;
  readonly sourceField: Field | null;
  readonly daily: DailySeries | null;
  readonly factors: FactorSeries | null;
  readonly calendar: CalendarSeries | null;
  /** Intraday bars stored as daily blocks (`BarBlocks` below); null for every other dataset. */
  readonly blocks: BarBlocks | null;
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
  if (d.exclusiveMinimum !== undefined && d.type !== 'number' && d.type !== 'integer')
    throw new CatalogError(`${where}: exclusiveMinimum needs a number or integer field`);
  return {
    name,
    apiName: decl.rename?.[name] ?? name,
    type: d.type,
    required: d.required ?? false,
    enum: d.enum ?? null,
    pattern: d.pattern ? new RegExp(d.pattern) : null,
    description: d.description ?? null,
    exclusiveMinimum: d.exclusiveMinimum ?? null,
    serverSet: false,
    unit: null,
    ...(d.opaque ? { opaque: true } : {}),
  };
}

/** A numeric field with its unit (declared, else by name: units.ts); CatalogError without one. */
function withUnit(decl: DatasetDeclaration, f: Field): Field {
  if (f.type !== 'number' && f.type !== 'integer') {
    if (decl.units?.[f.name] !== undefined)
      throw new CatalogError(`${decl.name}.${f.name}: a unit needs a number`);
    return f;
  }
  const unit = decl.units?.[f.name] ?? UNIT_BY_NAME[f.name];
  if (unit === undefined) throw new CatalogError(`${decl.name}.${f.name}: no unit (declare it in units)`);
  return { ...f, unit };
}

/** A field the server sets (never ingested): created_at, and the period fields of resampled rows. */
function serverField(name: string, type: FieldType, description: string): Field {
  return {
    name,
    apiName: name,
    type,
    required: false,
    enum: null,
    pattern: null,
    description,
    exclusiveMinimum: null,
    serverSet: true,
    unit: type === 'integer' ? 'count' : null,
  };
}

const PERIOD_START = serverField(
  'period_start',
  'date',
  'resampled rows: the date of the first bar in the period',
);
const BAR_COUNT = serverField('bar_count', 'integer', 'resampled rows: how many daily bars the period holds');
const NUMERIC: readonly FieldType[] = ['number', 'integer', 'flag'];

function compileDaily(
  decl: DatasetDeclaration,
  rowFields: readonly Field[],
  key: readonly Field[],
  ingestField: (n: string, what: string) => Field,
  fail: (msg: string) => never,
): DailySeries | null {
  const dd = decl.daily;
  if (!dd) return null;
  const code = ingestField(dd.code, 'daily code');
  const date = ingestField(dd.date, 'daily date');
  if (code.type !== 'string' || !key.includes(code)) fail('daily code must be a string key field');
  if (date.type !== 'date' || !key.includes(date)) fail('daily date must be a date key field');
  if (!/^[A-Z][A-Z0-9_]*$/.test(dd.calendar)) fail(`daily calendar ${dd.calendar} must be an exchange code`);
  const number = (n: string | undefined, what: string): Field | null => {
    if (n === undefined) return null;
    const f = ingestField(n, what);
    if (f.type !== 'number') fail(`${what} ${n} must be a number field`);
    return f;
  };
  const flag = (n: string | undefined, what: string): Field | null => {
    if (n === undefined) return null;
    const f = ingestField(n, what);
    if (f.type !== 'flag') fail(`${what} ${n} must be a flag field`);
    return f;
  };
  const b = dd.bar;
  const bar = b
    ? {
        open: number(b.open, 'bar open') as Field,
        high: number(b.high, 'bar high') as Field,
        low: number(b.low, 'bar low') as Field,
        close: number(b.close, 'bar close') as Field,
        preClose: number(b.preClose, 'bar preClose'),
        change: number(b.change, 'bar change'),
        pctChg: number(b.pctChg, 'bar pctChg'),
        volume: number(b.volume, 'bar volume'),
        suspended: flag(b.suspended, 'bar suspended'),
      }
    : null;
  const group = key.filter((k) => k !== date);
  let aggregate: Map<Field, Aggregation> | null = null;
  if (dd.aggregate) {
    if (!bar) fail('daily aggregate needs the bar roles');
    const derived = new Set([bar?.preClose, bar?.change, bar?.pctChg].filter((f): f is Field => !!f));
    aggregate = new Map();
    const byName = new Map(rowFields.map((f) => [f.name, f]));
    for (const [n, how] of Object.entries(dd.aggregate)) {
      const f = byName.get(n) ?? fail(`aggregate of unknown field ${n}`);
      if (key.includes(f) || derived.has(f)) fail(`${n} is a key or recomputed field: it takes no aggregate`);
      if (!['first', 'last', 'max', 'min', 'sum'].includes(how)) fail(`aggregate ${how} of ${n} is unknown`);
      if (how === 'sum' && !NUMERIC.includes(f.type)) fail(`sum of ${n} needs a numeric field`);
      aggregate.set(f, how);
    }
    for (const f of rowFields) {
      if (!key.includes(f) && !derived.has(f) && !aggregate.has(f))
        fail(`no aggregate declared for ${f.name}`);
    }
    if (bar && aggregate.get(bar.close) !== 'last') fail('the close must aggregate as last');
  }
  let adjust: DailySeries['adjust'] = null;
  if (dd.adjust) {
    if (!bar) fail('daily adjust needs the bar roles');
    const prices = dd.adjust.prices.map((n) => number(n, 'adjusted price') as Field);
    if (prices.length === 0) fail('daily adjust names no price field');
    for (const f of [bar?.change, bar?.pctChg]) {
      if (f && prices.includes(f)) fail(`${f.name} is recomputed, not multiplied by the factor`);
    }
    adjust = { factors: dd.adjust.factors, prices };
  }
  return {
    code,
    date,
    group,
    calendar: dd.calendar,
    bar,
    aggregate,
    resampledFields: aggregate ? [...rowFields, PERIOD_START, BAR_COUNT] : rowFields,
    adjust,
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
  const fields = Object.entries(decl.fields).map(([n, s]) => withUnit(decl, compileField(decl, n, s)));
  if ('created_at' in decl.fields) fail('created_at is set by the server and cannot be declared');
  const createdAt = serverField(
    'created_at',
    'timestamp',
    'when the row was first stored (set by the server)',
  );
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
  const codes = new Map<Field, CodeMarket>();
  for (const n of decl.codes?.fields ?? []) {
    const f = rowField(n, 'code field');
    if (!exact.includes(f) || f.type !== 'string') fail(`code field ${n} must be a string exact filter`);
    codes.set(f, decl.codes?.market ?? 'cn');
  }
  const sourceName = decl.sourceField ?? (fieldByName.has('source') ? 'source' : null);
  const sourceField = sourceName === null ? null : ingestField(sourceName, 'source field');
  if (sourceField && sourceField.type !== 'string') fail('source field must be a string');
  const updatedAt = fieldByName.get('updated_at');
  if (!updatedAt || updatedAt.type !== 'timestamp') fail('every dataset has updated_at (timestamp)');

  const daily = compileDaily(decl, rowFields, key, ingestField, fail);
  // A series the service reads by role (factors, a calendar): each role names an ingest field,
  // and the first two roles are key fields.
  const series = <N extends { [K in keyof N]: string }>(
    names: N,
    label: string,
    keyed: readonly [keyof N, keyof N],
  ) => {
    const out = Object.fromEntries(
      Object.entries<string>(names as Record<string, string>).map(([role, name]) => [
        role,
        ingestField(name, `${label} ${role}`),
      ]),
    ) as Record<keyof N, Field>;
    if (!keyed.every((role) => key.includes(out[role])))
      fail(`${label} ${keyed.map(String).join(' and ')} must be key fields`);
    return out;
  };
  const factors: FactorSeries | null = decl.factors
    ? series(decl.factors, 'factors', ['code', 'date'])
    : null;
  if (factors) {
    if (factors.date.type !== 'date') fail('factors date must be a date');
    if (factors.value.type !== 'number' || !factors.value.required || factors.value.exclusiveMinimum !== 0)
      fail('factors value must be a required number with exclusiveMinimum 0');
  }
  const calendar: CalendarSeries | null = decl.calendar
    ? series(decl.calendar, 'calendar', ['exchange', 'date'])
    : null;
  if (
    calendar &&
    (calendar.date.type !== 'date' || calendar.isOpen.type !== 'flag' || !calendar.isOpen.required)
  )
    fail('calendar date must be a date and isOpen a required flag');

  const blocks = compileBlocks(decl, fieldByName, sourceField, compileDataset, fail);
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
    codes,
    sourceField,
    daily,
    factors,
    calendar,
    blocks,
  });
}

/**
 * Intraday bars as one trait of a declaration (`blocks`): the rows a client sends and reads are
 * bars, but what is stored is one row per code, trading date and source holding that day's bars
 * as a compressed column block (storage/bar-codec.ts). The stored form is itself a dataset of
 * the same name — key (code, date, source), partition date — so the batch transaction, full
 * snapshots, revisions, as_of and revert work on it unchanged, at block granularity.
 * docs/minute-bars.md.
 */
export interface BarBlocks {
  readonly code: Field;
  readonly date: Field;
  readonly time: Field;
  readonly source: Field;
  /** The bar's values in the block's column order (bar-codec.ts): open, high, low, close, volume, amount. */
  readonly values: readonly Field[];
  /** Minutes east of UTC (480 for +08:00), and the offset as written in answered times. */
  readonly offsetMinutes: number;
  readonly utcOffset: string;
  /** Sessions as [start, end] minutes of the exchange's day; bars end in (start, end]. */
  readonly sessions: readonly (readonly [number, number])[];
  /** The dataset that storage holds: one row per block. */
  readonly stored: Dataset;
  /** `adjust=qfq|hfq`: the daily factor dataset and the prices it multiplies (open, high, low, close). */
  readonly adjust: { readonly factors: string; readonly prices: readonly Field[] } | null;
  /** The daily dataset the quality report compares the day's bars with (null: none). */
  readonly daily: string | null;
}

/** The stored form's payload column (base64 of the compressed block) and its bar count. */
export const BLOCK_BARS = 'bars';
export const BLOCK_COUNT = 'bar_count';

const OFFSET = /^([+-])(\d{2}):(\d{2})$/;
const SESSION = /^(\d{2}):(\d{2})-(\d{2}):(\d{2})$/;

/** Compiles a declaration's `blocks` (`compile`: compileDataset, for the stored form). */
export function compileBlocks(
  decl: DatasetDeclaration,
  fieldByName: ReadonlyMap<string, Field>,
  sourceField: Field | null,
  compile: (d: DatasetDeclaration) => Dataset,
  fail: (msg: string) => never,
): BarBlocks | null {
  const b: BlocksDeclaration | undefined = decl.blocks;
  if (!b) return null;
  const field = (n: string, type: Field['type'], what: string): Field => {
    const f = fieldByName.get(n) ?? fail(`blocks ${what} ${n} is not a field`);
    if (f.type !== type) fail(`blocks ${what} ${n} must be a ${type} field`);
    return f;
  };
  const code = field(b.code, 'string', 'code');
  const date = field(b.date, 'date', 'date');
  const time = field(b.time, 'timestamp', 'time');
  if (!sourceField) fail('blocks need a source field');
  const source = sourceField as Field;
  const values = [b.bar.open, b.bar.high, b.bar.low, b.bar.close, b.bar.volume, b.bar.amount].map((n) =>
    field(n, 'number', 'bar value'),
  );
  const key = decl.key.join(',');
  if (key !== [b.code, b.time, source.name].join(',')) fail('blocks: the key must be code, time, source');
  if (decl.partition !== b.date) fail('blocks: the partition must be the trading date');
  const m = OFFSET.exec(b.utcOffset) ?? fail(`blocks utcOffset ${b.utcOffset} must be ±HH:MM`);
  const offsetMinutes = (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  const sessions = b.sessions.map((s): [number, number] => {
    const x = SESSION.exec(s) ?? fail(`blocks session ${s} must be HH:MM-HH:MM`);
    return [Number(x[1]) * 60 + Number(x[2]), Number(x[3]) * 60 + Number(x[4])];
  });
  sessions.forEach(([from, to], i) => {
    if (!(from < to && to <= 1440 && (i === 0 || (sessions[i - 1] as [number, number])[1] <= from)))
      fail('blocks sessions must be ordered, disjoint spans of one day');
  });
  const codeApi = decl.rename?.[b.code] ?? b.code;
  const stored = compile({
    name: decl.name,
    layer: decl.layer,
    description: `${decl.description} (stored as daily bar blocks)`,
    endpoint: decl.endpoint,
    fields: {
      [b.code]: 'string!',
      [b.date]: 'date!',
      [source.name]: 'string!',
      [BLOCK_COUNT]: 'integer!',
      [BLOCK_BARS]: { type: 'string', required: true, opaque: true },
      updated_at: 'timestamp',
    },
    ...(decl.rename ? { rename: decl.rename } : {}),
    key: [b.code, b.date, source.name],
    partition: b.date,
    range: b.date,
    sort: { field: b.date, order: 'desc' },
    exact: [codeApi, b.date, source.name],
    codes: { market: decl.codes?.market ?? 'cn', fields: [codeApi] },
    units: { [BLOCK_COUNT]: 'count' },
  });
  // A bar's prices take the factor in force on its trading date, as the daily bar's do.
  const adjust = b.adjust ? { factors: b.adjust.factors, prices: values.slice(0, 4) } : null;
  return {
    code,
    date,
    time,
    source,
    values,
    offsetMinutes,
    utcOffset: b.utcOffset,
    sessions,
    stored,
    adjust,
    daily: b.daily ?? null,
  };
}

/** The price adjustment a dataset's endpoint offers (`adjust=qfq|hfq`): its daily or intraday bars'. */
export const adjustOf = (
  d: Dataset,
): { readonly factors: string; readonly prices: readonly Field[] } | null =>
  d.daily?.adjust ?? d.blocks?.adjust ?? null;

/** Whether `d` is a stored form (one row per block), not a catalog dataset: its payload column is opaque. */
export const storesBlocks = (d: Dataset): boolean => d.fieldByName.get(BLOCK_BARS)?.opaque === true;

/** The catalog as storage holds it: each block dataset replaced by its stored form. */
export function storageCatalog(catalog: Catalog): Catalog {
  if (!catalog.datasets.some((d) => d.blocks)) return catalog;
  const datasets = catalog.datasets.map((d) => d.blocks?.stored ?? d);
  return Object.freeze({
    datasets,
    byName: new Map(datasets.map((d) => [d.name, d])),
    calendar: catalog.calendar,
  });
}

export interface Catalog {
  readonly datasets: readonly Dataset[];
  readonly byName: ReadonlyMap<string, Dataset>;
  /** The trading calendar dataset (the quality report's `exchange`); null without one. */
  readonly calendar: Dataset | null;
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
  for (const d of datasets) {
    const f = adjustOf(d)?.factors;
    if (f !== undefined && !byName.get(f)?.factors)
      throw new CatalogError(`${d.name}: adjust factors ${f} is not a dataset declaring factors`);
  }
  for (const d of datasets) {
    const daily = d.blocks?.daily;
    if (daily != null && !byName.get(daily)?.daily)
      throw new CatalogError(`${d.name}: blocks daily ${daily} is not a daily series`);
  }
  if (datasets.filter((d) => d.calendar).length > 1)
    throw new CatalogError('more than one dataset declares a calendar');
  const calendar = datasets.find((d) => d.calendar) ?? null;
  if (datasets.some((d) => d.daily) && !calendar)
    throw new CatalogError('daily datasets need a dataset declaring the calendar');
  return Object.freeze({ datasets, byName, calendar });
}

/** The service's catalog, compiled and checked once at import (boot). */
export const CATALOG: Catalog = compileCatalog(DECLARATIONS);
