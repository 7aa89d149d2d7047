import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * One code's bars of one trading day as a compressed column block (docs/minute-bars.md):
 * minutes of the exchange's day delta-encoded, each value column scaled to integers by the
 * smallest power of ten that keeps every value exact and delta-encoded, all as varints, then
 * deflated (Node's zlib) and written as base64 text so both backends store it as a plain text
 * column. Lossless: a value no power of ten up to 10^6 makes whole is kept as a float64.
 */
export interface BarColumns {
  /** End minute of each bar in the exchange's day (09:31 = 571), strictly increasing. */
  minutes: number[];
  /** One array per value column (catalog.ts `BarBlocks.values` order), each as long as `minutes`. */
  columns: (number | null)[][];
}

/** A block's first byte: its format's version. */
const VERSION = 1;
/** A value column's first byte: which of its values are present (`some`: a bitmap follows). */
const PRESENT = { all: 0, none: 1, some: 2 } as const;
/** A scale byte: no power of ten up to 10^MAX_SCALE makes every value whole; float64s follow. */
const RAW = 255;
const MAX_SCALE = 6;
const SAFE = 2 ** 51;

class Writer {
  private buf = new Uint8Array(4096);
  private view = new DataView(this.buf.buffer);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }

  /** An unsigned integer up to 2^53, 7 bits a byte (arithmetic, not bit operators: > 2^31). */
  varint(n: number): void {
    this.room(8);
    while (n >= 0x80) {
      this.buf[this.length++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.length++] = n;
  }

  signed(n: number): void {
    this.varint(n >= 0 ? n * 2 : -n * 2 - 1);
  }

  float(n: number): void {
    this.room(8);
    this.view.setFloat64(this.length, n, true);
    this.length += 8;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/** One writer for every block (blocks are encoded one at a time, synchronously). */
const WRITER = new Writer();

/**
 * The smallest k ≤ 6 with every present value of `col` at `order` × 10^k a whole number that
 * gives the value back; RAW if none.
 */
function scaleOf(col: Float64Array, order: Int32Array): number {
  for (let k = 0; k <= MAX_SCALE; k++) {
    const p = 10 ** k;
    let exact = true;
    for (let i = 0; i < order.length && exact; i++) {
      const v = col[order[i] as number] as number;
      if (v !== v) continue;
      exact = Math.abs(v * p) < SAFE && Math.round(v * p) / p === v;
    }
    if (exact) return k;
  }
  return RAW;
}

export function encodeBars(b: BarColumns): string {
  const n = b.minutes.length;
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return encodeBarColumns(
    Int32Array.from(b.minutes),
    b.columns.map((col) => Float64Array.from(col, (v) => v ?? NaN)),
    order,
  );
}

/**
 * The bars `order` picks from typed columns (ingest's BarInput: minutes, one Float64Array per
 * value column, NaN for null), in that order, as a block: the bytes encodeBars writes, without an
 * array or a null per bar (this runs for every bar ingested).
 */
export function encodeBarColumns(
  minutes: Int32Array,
  values: readonly Float64Array[],
  order: Int32Array,
): string {
  const w = WRITER;
  w.length = 0;
  const n = order.length;
  w.byte(VERSION);
  w.varint(n);
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const m = minutes[order[i] as number] as number;
    w.varint(m - prev);
    prev = m;
  }
  for (const col of values) {
    let present = 0;
    for (let i = 0; i < n; i++) {
      const v = col[order[i] as number] as number;
      if (v === v) present++;
    }
    if (present === 0) {
      w.byte(PRESENT.none);
      continue;
    }
    if (present === n) w.byte(PRESENT.all);
    else {
      w.byte(PRESENT.some);
      for (let i = 0; i < n; i += 8) {
        let bits = 0;
        for (let j = 0; j < 8 && i + j < n; j++) {
          const v = col[order[i + j] as number] as number;
          if (v === v) bits |= 1 << j;
        }
        w.byte(bits);
      }
    }
    const k = scaleOf(col, order);
    w.byte(k);
    if (k === RAW) {
      for (let i = 0; i < n; i++) {
        const v = col[order[i] as number] as number;
        if (v === v) w.float(v);
      }
      continue;
    }
    const p = 10 ** k;
    let last = 0;
    for (let i = 0; i < n; i++) {
      const v = col[order[i] as number] as number;
      if (v !== v) continue;
      const s = Math.round(v * p);
      w.signed(s - last);
      last = s;
    }
  }
  return deflateRawSync(w.bytes()).toString('base64');
}

/**
 * A block's bars as typed columns (the read path, docs/minute-bars.md): decoded straight into
 * them, no array or object per bar; one instance is refilled block after block.
 */
export class BarVectors {
  length = 0;
  minutes = new Int32Array(0);
  /** One per value column (catalog.ts `BarBlocks.values` order); 0 where the value is null. */
  values: Float64Array[] = [];
  /** One byte per bar and column: 1 where the value is present. */
  valid: Uint8Array[] = [];

  reserve(n: number): void {
    // A fresh instance has no columns yet, even for a block of no bars.
    if (this.minutes.length >= n && this.values.length === COLUMNS) return;
    const cap = Math.max(n, 256);
    this.minutes = new Int32Array(cap);
    this.values = Array.from({ length: COLUMNS }, () => new Float64Array(cap));
    this.valid = Array.from({ length: COLUMNS }, () => new Uint8Array(cap));
  }
}

/** `text`'s bars into `out` (its previous bars replaced). Varints are read inline: this runs per bar of every read. */
export function decodeBarsInto(text: string, out: BarVectors): BarVectors {
  const buf = inflateRawSync(Buffer.from(text, 'base64'));
  const end = buf.length;
  let at = 0;
  const byte = (): number => {
    if (at >= end) throw new Error('bar block truncated');
    return buf[at++] as number;
  };
  const varint = (): number => {
    let b = byte();
    if (b < 0x80) return b;
    let n = b & 0x7f;
    let mul = 0x80;
    for (;;) {
      b = byte();
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 0x80;
    }
  };
  if (byte() !== VERSION) throw new Error('bar block of an unknown version');
  const n = varint();
  out.reserve(n);
  out.length = n;
  const minutes = out.minutes;
  let m = 0;
  for (let i = 0; i < n; i++) {
    m += varint();
    minutes[i] = m;
  }
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  for (let c = 0; c < COLUMNS; c++) {
    const kind = byte();
    const col = out.values[c] as Float64Array;
    const valid = out.valid[c] as Uint8Array;
    if (kind === PRESENT.none) {
      col.fill(0, 0, n);
      valid.fill(0, 0, n);
      continue;
    }
    if (kind === PRESENT.some) {
      for (let i = 0; i < n; i += 8) {
        const bits = byte();
        for (let j = 0; j < 8 && i + j < n; j++) valid[i + j] = (bits >> j) & 1;
      }
    } else valid.fill(1, 0, n);
    const k = byte();
    const p = 10 ** k;
    let last = 0;
    for (let i = 0; i < n; i++) {
      if (valid[i] === 0) {
        col[i] = 0;
        continue;
      }
      if (k === RAW) {
        if (at + 8 > end) throw new Error('bar block truncated');
        col[i] = view.getFloat64(at, true);
        at += 8;
      } else {
        const z = varint();
        last += z % 2 === 0 ? z / 2 : -(z + 1) / 2;
        col[i] = last / p;
      }
    }
  }
  return out;
}

/** A block's bars as arrays (the ingest side's merge and counts). */
export function decodeBars(text: string): BarColumns {
  const v = decodeBarsInto(text, new BarVectors());
  const n = v.length;
  const minutes = Array.from(v.minutes.subarray(0, n));
  const columns = v.values.map((col, c) => {
    const valid = v.valid[c] as Uint8Array;
    return Array.from({ length: n }, (_, i) => (valid[i] === 1 ? (col[i] as number) : null));
  });
  return { minutes, columns };
}

/** Value columns of every block: open, high, low, close, volume, amount (catalog.ts `BarBlocks.values`). */
export const COLUMNS = 6;
