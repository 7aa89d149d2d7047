import type { Dataset, Field } from '../catalog/catalog.js';
import { isDate, normalizeTimestamp } from '../model/values.js';
import type { RowData } from './batch-builder.js';

/**
 * Turns rows read from a file (CSV text cells, or JSON values) into a dataset's ingest data:
 * columns are matched to fields by ingest name or row (API) name, renamed with `map`, fixed
 * with `set`, dropped with `ignore`; CSV text is converted per the catalog field type. Every
 * problem is reported with its row and column, before anything is sent.
 */

export class MappingError extends Error {}

export interface MappingOptions {
  /** column → field (ingest or row name). */
  map?: Readonly<Record<string, string>>;
  /** field → constant value for every row (converted like a CSV cell). */
  set?: Readonly<Record<string, string>>;
  /** Columns to drop. */
  ignore?: readonly string[];
  /** A field that receives each row's 1-based position in the file (e.g. line_no). */
  rowNumber?: string;
  /** Fills a required source field when the file has no such column. */
  source?: string;
  /**
   * The push time (ISO UTC): `updated_at` of every row without one, when the dataset has the
   * field (plain OHLCV files carry none). Unset: absent stays absent.
   */
  stampUpdatedAt?: string;
}

export interface MappedRows {
  rows: RowData[];
  /** Columns dropped automatically (e.g. created_at of an exported file), for a notice. */
  dropped: string[];
  /** Rows whose updated_at was set to the push time (`stampUpdatedAt`), for a notice. */
  stamped: number;
  /** column → ingest field actually used. */
  columns: Record<string, string>;
}

const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A date written YYYY-MM-DD, YYYYMMDD, YYYY/MM/DD, or as a midnight timestamp. */
function toDate(s: string): string | null {
  let m = /^(\d{4})(\d{2})(\d{2})$/.exec(s) ?? /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/.exec(s);
  if (m) {
    const d = `${m[1]}-${(m[2] as string).padStart(2, '0')}-${(m[3] as string).padStart(2, '0')}`;
    return isDate(d) ? d : null;
  }
  m = /^(\d{4}-\d{2}-\d{2})(?:[T ]00:00(?::00(?:\.0+)?)?)?$/.exec(s);
  return m && isDate(m[1]) ? (m[1] as string) : null;
}

/** Converts one cell; undefined = absent (empty cell); throws a message on a bad value. */
export function convertCell(f: Field, raw: unknown): string | number | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw === 'boolean') {
    if (f.type === 'flag') return raw ? 1 : 0;
    throw new Error(`${f.name} is ${f.type}, got a boolean`);
  }
  if (typeof raw === 'number') {
    if (f.type === 'string') return String(raw);
    return raw;
  }
  if (typeof raw !== 'string') throw new Error(`${f.name} must be a plain value`);
  const s = raw.trim();
  if (s === '') return undefined;
  switch (f.type) {
    case 'string':
      return s;
    case 'number': {
      if (!NUMBER_RE.test(s)) throw new Error(`${f.name} must be a number (got "${s}")`);
      return Number(s);
    }
    case 'integer': {
      const n = NUMBER_RE.test(s) ? Number(s) : NaN;
      if (!Number.isSafeInteger(n)) throw new Error(`${f.name} must be an integer (got "${s}")`);
      return n;
    }
    case 'flag': {
      const v = s.toLowerCase();
      if (v === '1' || v === 'true') return 1;
      if (v === '0' || v === 'false') return 0;
      throw new Error(`${f.name} must be 0 or 1 (got "${s}")`);
    }
    case 'date': {
      const d = toDate(s);
      if (d === null) throw new Error(`${f.name} must be a date YYYY-MM-DD or YYYYMMDD (got "${s}")`);
      return d;
    }
    case 'timestamp': {
      if (normalizeTimestamp(s) === null) {
        throw new Error(`${f.name} must be an ISO 8601 timestamp with an offset or Z (got "${s}")`);
      }
      return s;
    }
  }
}

/** An ingestible field by ingest or row name (created_at is a row field the server sets). */
function resolveField(d: Dataset, name: string): Field | undefined {
  const f = d.fieldByName.get(name) ?? d.fieldByApiName.get(name);
  return f && !f.serverSet ? f : undefined;
}

export function fieldList(d: Dataset): string {
  return d.fields
    .map((f) => (f.apiName !== f.name ? `${f.name} (or ${f.apiName})` : f.name) + (f.required ? '*' : ''))
    .join(', ');
}

/** Maps rows; `lineOf(i)` names row i in messages (a file line or position). */
export function mapRows(
  d: Dataset,
  columns: readonly string[],
  input: readonly Record<string, unknown>[],
  opts: MappingOptions,
  lineOf: (i: number) => string = (i) => `row ${i + 1}`,
): MappedRows {
  const map = opts.map ?? {};
  const ignore = new Set(opts.ignore ?? []);
  for (const c of Object.keys(map)) {
    if (!columns.includes(c)) throw new MappingError(`--map ${c}=…: the file has no column "${c}"`);
  }
  for (const c of ignore) {
    if (!columns.includes(c)) throw new MappingError(`--ignore ${c}: the file has no column "${c}"`);
  }
  const used = new Map<string, Field>();
  const byField = new Map<string, string>();
  const unknown: string[] = [];
  const dropped: string[] = [];
  for (const c of columns) {
    if (ignore.has(c)) continue;
    const target = map[c] ?? c;
    const f = resolveField(d, target);
    if (!f) {
      if (target === 'created_at' && map[c] === undefined) {
        // An exported file carries created_at; the server sets it, so it is not ingested.
        dropped.push(c);
        continue;
      }
      unknown.push(map[c] !== undefined ? `${c} (mapped to unknown field ${target})` : c);
      continue;
    }
    const prior = byField.get(f.name);
    if (prior !== undefined) {
      throw new MappingError(`columns "${prior}" and "${c}" both map to field ${f.name}; --ignore one`);
    }
    byField.set(f.name, c);
    used.set(c, f);
  }
  if (unknown.length > 0) {
    throw new MappingError(
      `unknown column(s) for dataset ${d.name}: ${unknown.join(', ')}.\n` +
        `  fields: ${fieldList(d)}\n  rename a column with --map column=field, drop it with --ignore column`,
    );
  }

  const constants: RowData = {};
  for (const [name, value] of Object.entries(opts.set ?? {})) {
    const f = resolveField(d, name);
    if (!f)
      throw new MappingError(
        `--set ${name}=…: dataset ${d.name} has no field ${name}; fields: ${fieldList(d)}`,
      );
    if (byField.has(f.name)) {
      throw new MappingError(
        `--set ${name}=…: the file already has a column for ${f.name} ("${byField.get(f.name) ?? ''}")`,
      );
    }
    let v: string | number | undefined;
    try {
      v = convertCell(f, value);
    } catch (err) {
      throw new MappingError(`--set ${name}: ${(err as Error).message}`);
    }
    if (v !== undefined) constants[f.name] = v;
    byField.set(f.name, `--set ${name}`);
  }
  let numbered: Field | null = null;
  if (opts.rowNumber !== undefined) {
    numbered = resolveField(d, opts.rowNumber) ?? null;
    if (
      !numbered ||
      (numbered.type !== 'integer' && numbered.type !== 'number' && numbered.type !== 'string')
    ) {
      throw new MappingError(
        `--row-number ${opts.rowNumber}: dataset ${d.name} has no numeric or text field of that name`,
      );
    }
    if (byField.has(numbered.name)) {
      throw new MappingError(
        `--row-number ${opts.rowNumber}: ${numbered.name} is already given ("${byField.get(numbered.name) ?? ''}")`,
      );
    }
    byField.set(numbered.name, '--row-number');
  }
  const src = d.sourceField;
  const fillSource = src !== null && !byField.has(src.name) && opts.source !== undefined;
  if (fillSource && src) constants[src.name] = opts.source as string;

  const stampField = opts.stampUpdatedAt !== undefined ? d.fieldByName.get('updated_at') : undefined;
  const missing = d.fields.filter(
    (f) => f.required && !byField.has(f.name) && !(fillSource && f === src) && f !== stampField,
  );
  if (missing.length > 0) {
    const names = missing.map((f) => (f.apiName !== f.name ? `${f.name} (or ${f.apiName})` : f.name));
    const hints = [];
    if (missing.some((f) => f !== src)) {
      hints.push(
        'add the column, rename one with --map column=field, or give a constant with --set field=value',
      );
    }
    if (src && missing.includes(src)) hints.push(`give --source to fill ${src.name}`);
    const hint = `; ${hints.join('; ')}`;
    throw new MappingError(`missing required field(s) for dataset ${d.name}: ${names.join(', ')}${hint}`);
  }

  const errors: string[] = [];
  const rows: RowData[] = [];
  let stamped = 0;
  input.forEach((raw, i) => {
    const row: RowData = { ...constants };
    if (numbered) row[numbered.name] = numbered.type === 'string' ? String(i + 1) : i + 1;
    for (const [c, f] of used) {
      try {
        const v = convertCell(f, raw[c]);
        if (v !== undefined) row[f.name] = v;
      } catch (err) {
        if (errors.length < 20) errors.push(`${lineOf(i)}, column "${c}": ${(err as Error).message}`);
        else if (errors.length === 20) errors.push('…');
      }
    }
    if (stampField && row[stampField.name] === undefined) {
      row[stampField.name] = opts.stampUpdatedAt as string;
      stamped++;
    }
    rows.push(row);
  });
  if (errors.length > 0) throw new MappingError(`cannot convert the file:\n  ${errors.join('\n  ')}`);
  return {
    rows,
    dropped,
    stamped,
    columns: Object.fromEntries([...used].map(([c, f]) => [c, f.name])),
  };
}
