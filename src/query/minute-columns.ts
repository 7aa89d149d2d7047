import type { BarBlocks, Field } from '../catalog/catalog.js';
import { hhmm } from '../ingest/minute-bars.js';
import { BarVectors, COLUMNS, decodeBarsInto } from '../model/bar-codec.js';
import type { QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import type { Column, ColumnChunk } from '../export/column-batch.js';
import type { DayAdjust } from './minute-adjust.js';
import { periodLabels, roundedSum } from './minute-sessions.js';

/**
 * An answer's bars as columns (docs/minute-bars.md, "Reads"): each block decoded straight into
 * typed vectors, cut to the time bounds, resampled and adjusted there, then appended to one
 * table of columns — the bar's block, its end minute, its six values — and ordered by a
 * permutation of row numbers. JSON pages make objects for their rows only; exports take
 * typed column chunks (Arrow, Parquet) or value arrays (CSV) from the same table.
 */

/** What a bar row takes from its block: the stored key and stamps, and its day's instant. */
export interface BlockInfo {
  code: Value;
  date: string;
  source: Value;
  updatedAt: Value;
  createdAt: Value;
  /** Epoch ms of the trading date's 00:00 at the exchange: a bar's time is this + minute × 60 s. */
  base: number;
  /** Epoch days of the trading date (Arrow's date32). */
  day: number;
}

const DAY_MS = 86_400_000;

/** The six value columns, destructured. */
type Six<T> = [T, T, T, T, T, T];

export function blockInfo(b: BarBlocks, fields: BlockFields, blk: Record<string, Value>): BlockInfo {
  const date = blk[fields.date] as string;
  const midnight = Date.parse(`${date}T00:00:00Z`);
  return {
    code: blk[fields.code] ?? null,
    date,
    source: blk[fields.source] ?? null,
    updatedAt: blk.updated_at ?? null,
    createdAt: blk.created_at ?? null,
    base: midnight - b.offsetMinutes * 60_000,
    day: midnight / DAY_MS,
  };
}

/** The stored form's api names of the block key's fields. */
export interface BlockFields {
  code: string;
  date: string;
  source: string;
}

/** Bars of several blocks as columns, appended block by block. */
export class BarTable {
  length = 0;
  block = new Int32Array(0);
  minute = new Int32Array(0);
  values: Float64Array[] = [];
  valid: Uint8Array[] = [];
  readonly blocks: BlockInfo[] = [];
  private readonly scratch = new BarVectors();
  private readonly cache = new Map<string, unknown[]>();

  constructor(
    private readonly b: BarBlocks,
    private readonly interval: string,
    /** Epoch ms bounds on a bar's end minute (inclusive); null: open. */
    private readonly timeFrom: number | null,
    private readonly timeTo: number | null,
  ) {
    this.grow(1024);
  }

  private grow(need: number): void {
    if (this.block.length >= need) return;
    const cap = Math.max(need, this.block.length * 2);
    const copy = <T extends Int32Array | Float64Array | Uint8Array>(a: T, next: T): T => {
      next.set(a.subarray(0, this.length));
      return next;
    };
    this.block = copy(this.block, new Int32Array(cap));
    this.minute = copy(this.minute, new Int32Array(cap));
    this.values = Array.from({ length: COLUMNS }, (_, c) =>
      copy(this.values[c] ?? new Float64Array(0), new Float64Array(cap)),
    );
    this.valid = Array.from({ length: COLUMNS }, (_, c) =>
      copy(this.valid[c] ?? new Uint8Array(0), new Uint8Array(cap)),
    );
  }

  /**
   * One block's bars: decoded, cut to the time bounds, resampled, their prices (`prices`: value
   * columns) scaled by `scale` (after resampling: a positive factor keeps which bar is first,
   * last, highest and lowest, so this equals adjusting each bar first).
   */
  add(info: BlockInfo, text: string, scale: DayAdjust | null, prices: readonly number[]): void {
    this.addDecoded(info, decodeBarsInto(text, this.scratch), scale, prices);
  }

  /** As `add`, from a block already decoded (the quality report judges its bars first). */
  addDecoded(info: BlockInfo, v: BarVectors, scale: DayAdjust | null, prices: readonly number[]): void {
    let lo = 0;
    let hi = v.length;
    if (this.timeFrom !== null) {
      const from = this.timeFrom;
      while (lo < hi && info.base + (v.minutes[lo] as number) * 60_000 < from) lo++;
    }
    if (this.timeTo !== null) {
      const to = this.timeTo;
      while (hi > lo && info.base + (v.minutes[hi - 1] as number) * 60_000 > to) hi--;
    }
    if (hi <= lo) return;
    const blockIndex = this.blocks.length;
    this.blocks.push(info);
    const start = this.length;
    if (this.interval === '1m') this.copy(blockIndex, v, lo, hi);
    else this.resample(blockIndex, v, lo, hi);
    if (!scale) return;
    for (const c of prices) {
      const col = this.values[c] as Float64Array;
      const valid = this.valid[c] as Uint8Array;
      for (let i = start; i < this.length; i++) {
        const x = scale(valid[i] === 1 ? (col[i] as number) : null);
        valid[i] = x === null ? 0 : 1;
        col[i] = x ?? 0;
      }
    }
  }

  private copy(blockIndex: number, v: BarVectors, lo: number, hi: number): void {
    const n = hi - lo;
    this.grow(this.length + n);
    const at = this.length;
    this.block.fill(blockIndex, at, at + n);
    this.minute.set(v.minutes.subarray(lo, hi), at);
    for (let c = 0; c < COLUMNS; c++) {
      (this.values[c] as Float64Array).set((v.values[c] as Float64Array).subarray(lo, hi), at);
      (this.valid[c] as Uint8Array).set((v.valid[c] as Uint8Array).subarray(lo, hi), at);
    }
    this.length += n;
  }

  /**
   * Bars [lo, hi) of one day as bars of the interval (minute-sessions.ts labels them): open the
   * first present, high the max, low the min, close the last present, volume and amount summed
   * to 6 decimals, nulls skipped — as minute-sessions.ts `resample` did on row objects.
   */
  private resample(blockIndex: number, v: BarVectors, lo: number, hi: number): void {
    const labels = periodLabels(this.b, v.minutes, lo, hi, this.interval);
    this.grow(this.length + (hi - lo));
    const [open, high, low, close, volume, amount] = this.values as Six<Float64Array>;
    const [hasOpen, hasHigh, hasLow, hasClose, hasVolume, hasAmount] = this.valid as Six<Uint8Array>;
    const [vOpen, vHigh, vLow, vClose, vVolume, vAmount] = v.values as Six<Float64Array>;
    const [iOpen, iHigh, iLow, iClose, iVolume, iAmount] = v.valid as Six<Uint8Array>;
    let r = this.length - 1;
    let label = -1;
    for (let i = lo; i < hi; i++) {
      const l = labels[i - lo] as number;
      if (l !== label) {
        label = l;
        r++;
        this.block[r] = blockIndex;
        this.minute[r] = l;
        for (let c = 0; c < COLUMNS; c++) {
          (this.values[c] as Float64Array)[r] = (v.values[c] as Float64Array)[i] as number;
          (this.valid[c] as Uint8Array)[r] = (v.valid[c] as Uint8Array)[i] as number;
        }
        continue;
      }
      if (hasOpen[r] === 0 && iOpen[i] === 1) {
        open[r] = vOpen[i] as number;
        hasOpen[r] = 1;
      }
      if (iHigh[i] === 1 && (hasHigh[r] === 0 || (vHigh[i] as number) > (high[r] as number))) {
        high[r] = vHigh[i] as number;
        hasHigh[r] = 1;
      }
      if (iLow[i] === 1 && (hasLow[r] === 0 || (vLow[i] as number) < (low[r] as number))) {
        low[r] = vLow[i] as number;
        hasLow[r] = 1;
      }
      if (iClose[i] === 1) {
        close[r] = vClose[i] as number;
        hasClose[r] = 1;
      }
      sumInto(volume, hasVolume, r, vVolume, iVolume, i);
      sumInto(amount, hasAmount, r, vAmount, iAmount, i);
    }
    this.length = r + 1;
  }

  /**
   * Each block's value of `name` (`of` applied once per block, kept for the table's later
   * chunks): an export's chunks of a whole market day read 5,000 blocks' codes and stamps once,
   * not once a chunk or a row.
   */
  perBlock<T>(name: string, of: (k: BlockInfo) => T): T[] {
    let got = this.cache.get(name) as T[] | undefined;
    if (!got || got.length !== this.blocks.length) {
      got = this.blocks.map(of);
      this.cache.set(name, got);
    }
    return got;
  }

  /** Epoch ms of row `i`'s end minute. */
  timeOf(i: number): number {
    return (this.blocks[this.block[i] as number] as BlockInfo).base + (this.minute[i] as number) * 60_000;
  }
}

/**
 * Sums of decimal amounts kept to their decimals (0.1 + 0.2 is 0.3, not 0.30000000000000004):
 * `Number(sum.toFixed(6))`, whose string round trip was most of a resampled read's CPU, taken
 * only where a cheaper form could differ from it (roundedSum).
 */
function sumInto(
  to: Float64Array,
  has: Uint8Array,
  r: number,
  from: Float64Array,
  present: Uint8Array,
  i: number,
): void {
  if (present[i] === 0) return;
  if (has[r] === 0) {
    to[r] = from[i] as number;
    has[r] = 1;
  } else to[r] = roundedSum((to[r] as number) + (from[i] as number));
}

/** `hh:mm` of each minute of a day, made once. */
const HHMM = Array.from({ length: 1440 }, (_, m) => hhmm(m));

/** Where a field of a bar row comes from. */
type Source =
  | { kind: 'block'; get: (blk: BlockInfo) => Value }
  | { kind: 'time' }
  | { kind: 'date' }
  | { kind: 'value'; column: number };

function sourceOf(b: BarBlocks, f: Field): Source {
  if (f.apiName === b.time.apiName) return { kind: 'time' };
  if (f.apiName === b.date.apiName) return { kind: 'date' };
  const c = b.values.findIndex((v) => v.apiName === f.apiName);
  if (c >= 0) return { kind: 'value', column: c };
  if (f.apiName === b.code.apiName) return { kind: 'block', get: (k) => k.code };
  if (f.apiName === b.source.apiName) return { kind: 'block', get: (k) => k.source };
  if (f.apiName === 'updated_at') return { kind: 'block', get: (k) => k.updatedAt };
  if (f.apiName === 'created_at') return { kind: 'block', get: (k) => k.createdAt };
  return { kind: 'block', get: () => null };
}

/** Row `i`'s value of each field, as the JSON answer gives it (time with the exchange's offset). */
export function rowReader(b: BarBlocks, fields: readonly Field[], t: BarTable): (i: number) => Value[] {
  const sources = fields.map((f) => sourceOf(b, f));
  return (i) => {
    const blk = t.blocks[t.block[i] as number] as BlockInfo;
    return sources.map((s) => {
      switch (s.kind) {
        case 'time':
          return `${blk.date}T${hhmm(t.minute[i] as number)}:00${b.utcOffset}`;
        case 'date':
          return blk.date;
        case 'value':
          return (t.valid[s.column] as Uint8Array)[i] === 1
            ? ((t.values[s.column] as Float64Array)[i] as number)
            : null;
        case 'block':
          return s.get(blk);
      }
    });
  };
}

/**
 * Row `i` as the JSON text the route's response schema (contract/rows.ts `rowSchema`) makes of
 * rowReader's object, written straight from the columns: no value array, object or per-field
 * serialiser call per row, which were most of a day page's CPU (docs/minute-bars.md, "Reads,
 * round three"). The same bytes: keys in the schema's order, and its null rules (a null number
 * the schema does not allow is `0`, a null string `""`, as fast-json-stringify writes them);
 * test/query/minute-row-json.test.ts compares the two. null when a field's type is not one
 * written here; a row returns null where the serialiser would not simply write it (NaN), and
 * the page is then made as objects.
 */
export function rowJsonWriter(
  b: BarBlocks,
  schema: Readonly<Record<string, Record<string, unknown>>>,
  fields: readonly Field[],
  t: BarTable,
): ((i: number) => string | null) | null {
  const selected = new Map(fields.map((f) => [f.apiName, f]));
  const parts: { key: string; source: Source; nullable: boolean; numeric: boolean }[] = [];
  for (const [name, s] of Object.entries(schema)) {
    const f = selected.get(name);
    if (!f) continue;
    const types = Array.isArray(s.type) ? (s.type as unknown[]) : [s.type];
    const base = types.filter((x) => x !== 'null');
    if (base.length !== 1 || (base[0] !== 'string' && base[0] !== 'number')) return null;
    const source = sourceOf(b, f);
    const numeric = base[0] === 'number';
    // A value column is a number; anything else is text (or null).
    if (numeric !== (source.kind === 'value')) return null;
    parts.push({ key: `"${name}":`, source, nullable: types.includes('null'), numeric });
  }
  if (parts.length !== selected.size) return null;
  // Text per block, written once: a page's rows mostly share one block.
  const text = (v: Value, nullable: boolean): string | null =>
    typeof v === 'string' ? JSON.stringify(v) : v === null ? (nullable ? 'null' : '""') : null;
  let blockAt = -1;
  let blockText: (string | null)[] = [];
  let timeHead = '';
  const timeTail = `:00${b.utcOffset}"`;
  return (i) => {
    const k = t.block[i] as number;
    const blk = t.blocks[k] as BlockInfo;
    if (k !== blockAt) {
      blockAt = k;
      blockText = parts.map((p) =>
        p.source.kind === 'block'
          ? text(p.source.get(blk), p.nullable)
          : p.source.kind === 'date'
            ? JSON.stringify(blk.date)
            : null,
      );
      timeHead = `"${blk.date}T`;
    }
    let out = '{';
    for (let j = 0; j < parts.length; j++) {
      const p = parts[j] as (typeof parts)[number];
      const s = p.source;
      let v: string | null;
      if (s.kind === 'value') {
        if ((t.valid[s.column] as Uint8Array)[i] === 1) {
          const x = (t.values[s.column] as Float64Array)[i] as number;
          v = Number.isFinite(x) ? '' + x : Number.isNaN(x) ? null : 'null';
        } else v = p.nullable ? 'null' : '0';
      } else if (s.kind === 'time') {
        const m = t.minute[i] as number;
        v = timeHead + (HHMM[m] ?? hhmm(m)) + timeTail;
      } else v = blockText[j] ?? null;
      if (v === null) return null;
      out += j === 0 ? p.key + v : ',' + p.key + v;
    }
    return out + '}';
  };
}

/**
 * The row numbers of `t` in the plan's order. Keys compare as the row values did: times and
 * dates chronologically, text by code unit (as ranks of the distinct texts), numbers by value,
 * null after every value (so first in a descending order).
 */
export function rowOrder(b: BarBlocks, t: BarTable, orderBy: QueryPlan['orderBy']): Uint32Array {
  const n = t.length;
  const keys = orderBy.map((o) => {
    const sign = o.dir === 'asc' ? 1 : -1;
    const key = new Float64Array(n);
    const s = sourceOf(b, o.field);
    if (s.kind === 'time') for (let i = 0; i < n; i++) key[i] = sign * t.timeOf(i);
    else if (s.kind === 'date')
      for (let i = 0; i < n; i++) key[i] = sign * (t.blocks[t.block[i] as number] as BlockInfo).day;
    else if (s.kind === 'value') {
      const col = t.values[s.column] as Float64Array;
      const valid = t.valid[s.column] as Uint8Array;
      for (let i = 0; i < n; i++) key[i] = sign * (valid[i] === 1 ? (col[i] as number) : Infinity);
    } else {
      const perBlock = blockRanks(t.blocks.map(s.get));
      for (let i = 0; i < n; i++) key[i] = sign * (perBlock[t.block[i] as number] as number);
    }
    return key;
  });
  const cmp = (x: number, y: number): number => {
    for (const k of keys) {
      const a = k[x] as number;
      const c = a === k[y] ? 0 : a < (k[y] as number) ? -1 : 1;
      if (c !== 0) return c;
    }
    return 0;
  };
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  // Already in order (one block in time order), or exactly reversed (one code's days, newest first): no sort.
  if (inOrder(order, cmp)) return order;
  order.reverse();
  if (inOrder(order, cmp)) return order;
  return order.sort(cmp);
}

function inOrder(order: Uint32Array, cmp: (x: number, y: number) => number): boolean {
  for (let i = 1; i < order.length; i++)
    if (cmp(order[i - 1] as number, order[i] as number) > 0) return false;
  return true;
}

/** Each block's rank among the distinct values (code-unit order), null after all. */
function blockRanks(values: readonly Value[]): number[] {
  const distinct = [...new Set(values.filter((v) => v !== null))].sort((a, c) =>
    a < c ? -1 : a > c ? 1 : 0,
  );
  const rank = new Map<Value, number>(distinct.map((v, i) => [v, i]));
  return values.map((v) => (v === null ? Infinity : (rank.get(v) as number)));
}

/**
 * Rows `order[from..to)` of `t` as a chunk of typed columns of `fields` (export/column-batch.ts
 * layout: float64 numbers and ms timestamps, int32 days, text as strings, one validity bit a row).
 */
export function columnChunk(
  b: BarBlocks,
  fields: readonly Field[],
  t: BarTable,
  order: Uint32Array,
  from: number,
  to: number,
): ColumnChunk {
  const n = to - from;
  const bits = (n + 7) >> 3;
  const blockOf = t.block;
  const columns = fields.map((f): Column => {
    const s = sourceOf(b, f);
    const valid = new Uint8Array(bits);
    let nulls = 0;
    if (s.kind === 'value') {
      const values = new Float64Array(n);
      const col = t.values[s.column] as Float64Array;
      const has = t.valid[s.column] as Uint8Array;
      for (let i = 0; i < n; i++) {
        const r = order[from + i] as number;
        if (has[r] === 0) nulls++;
        else {
          // + 0: −0 as 0, as the JSON answer prints it (column-values.ts).
          values[i] = (col[r] as number) + 0;
          valid[i >> 3] = (valid[i >> 3] as number) | (1 << (i & 7));
        }
      }
      return { kind: 'number', values, valid, nulls };
    }
    if (s.kind === 'time') {
      const values = new Float64Array(n);
      const base = t.perBlock('base', (k) => k.base);
      const minute = t.minute;
      for (let i = 0; i < n; i++) {
        const r = order[from + i] as number;
        values[i] = (base[blockOf[r] as number] as number) + (minute[r] as number) * 60_000;
      }
      setAll(valid, n);
      return { kind: 'number', values, valid, nulls };
    }
    if (s.kind === 'date') {
      const values = new Int32Array(n);
      const day = t.perBlock('day', (k) => k.day);
      for (let i = 0; i < n; i++) values[i] = day[blockOf[order[from + i] as number] as number] as number;
      setAll(valid, n);
      return { kind: 'number', values, valid, nulls };
    }
    // A block's value (code, source, stamps): read and converted once per block of the table, not per row.
    if (f.type === 'string') {
      const perBlock = t.perBlock(f.apiName, (k) => {
        const v = s.get(k);
        return v === null ? null : String(v);
      });
      const values = new Array<string | null>(n);
      for (let i = 0; i < n; i++) {
        const v = perBlock[blockOf[order[from + i] as number] as number] ?? null;
        values[i] = v;
        if (v === null) nulls++;
        else valid[i >> 3] = (valid[i >> 3] as number) | (1 << (i & 7));
      }
      return { kind: 'text', values, valid, nulls };
    }
    const perBlock = t.perBlock(f.apiName, (k) => {
      const v = s.get(k);
      return v === null ? null : Date.parse(String(v));
    });
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const v = perBlock[blockOf[order[from + i] as number] as number] ?? null;
      if (v === null) nulls++;
      else {
        values[i] = v;
        valid[i >> 3] = (valid[i >> 3] as number) | (1 << (i & 7));
      }
    }
    return { kind: 'number', values, valid, nulls };
  });
  return { length: n, columns };
}

/** Every one of `n` rows valid: whole bytes, then the last byte's bits below n (the rest stay clear). */
function setAll(valid: Uint8Array, n: number): void {
  valid.fill(0xff, 0, n >> 3);
  if (n & 7) valid[n >> 3] = (1 << (n & 7)) - 1;
}
