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

const VERSION = 1;
const ALL = 0;
const NONE = 1;
const SOME = 2;
const RAW = 255;
const MAX_SCALE = 6;
const SAFE = 2 ** 51;

class Writer {
  private buf = new Uint8Array(1024);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
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
    new DataView(this.buf.buffer).setFloat64(this.length, n, true);
    this.length += 8;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

class Reader {
  at = 0;
  constructor(private readonly buf: Uint8Array) {}

  byte(): number {
    if (this.at >= this.buf.length) throw new Error('bar block truncated');
    return this.buf[this.at++] as number;
  }

  varint(): number {
    let n = 0;
    let mul = 1;
    for (;;) {
      const b = this.byte();
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 0x80;
    }
  }

  signed(): number {
    const z = this.varint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  float(): number {
    const v = new DataView(this.buf.buffer, this.buf.byteOffset).getFloat64(this.at, true);
    this.at += 8;
    return v;
  }
}

/** The smallest k ≤ 6 with every value × 10^k a whole number that gives the value back; RAW if none. */
function scaleOf(values: readonly number[]): number {
  for (let k = 0; k <= MAX_SCALE; k++) {
    const p = 10 ** k;
    if (values.every((v) => Math.abs(v * p) < SAFE && Math.round(v * p) / p === v)) return k;
  }
  return RAW;
}

export function encodeBars(b: BarColumns): string {
  const w = new Writer();
  const n = b.minutes.length;
  w.byte(VERSION);
  w.varint(n);
  let prev = 0;
  for (const m of b.minutes) {
    w.varint(m - prev);
    prev = m;
  }
  for (const col of b.columns) {
    const present = col.filter((v): v is number => v !== null);
    if (present.length === 0) {
      w.byte(NONE);
      continue;
    }
    if (present.length === n) w.byte(ALL);
    else {
      w.byte(SOME);
      for (let i = 0; i < n; i += 8) {
        let bits = 0;
        for (let j = 0; j < 8 && i + j < n; j++) if (col[i + j] !== null) bits |= 1 << j;
        w.byte(bits);
      }
    }
    const k = scaleOf(present);
    w.byte(k);
    if (k === RAW) {
      for (const v of present) w.float(v);
      continue;
    }
    const p = 10 ** k;
    let last = 0;
    for (const v of present) {
      const s = Math.round(v * p);
      w.signed(s - last);
      last = s;
    }
  }
  return Buffer.from(deflateRawSync(w.bytes())).toString('base64');
}

export function decodeBars(text: string): BarColumns {
  const r = new Reader(inflateRawSync(Buffer.from(text, 'base64')));
  if (r.byte() !== VERSION) throw new Error('bar block of an unknown version');
  const n = r.varint();
  const minutes: number[] = new Array<number>(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    m += r.varint();
    minutes[i] = m;
  }
  const columns: (number | null)[][] = [];
  while (columns.length < COLUMNS) {
    const kind = r.byte();
    const col: (number | null)[] = new Array<number | null>(n).fill(null);
    columns.push(col);
    if (kind === NONE) continue;
    let has: (i: number) => boolean = () => true;
    if (kind === SOME) {
      const bits = Array.from({ length: Math.ceil(n / 8) }, () => r.byte());
      has = (i) => (((bits[i >> 3] as number) >> (i & 7)) & 1) === 1;
    }
    const k = r.byte();
    const p = 10 ** k;
    let last = 0;
    for (let i = 0; i < n; i++) {
      if (!has(i)) continue;
      if (k === RAW) col[i] = r.float();
      else {
        last += r.signed();
        col[i] = last / p;
      }
    }
  }
  return { minutes, columns };
}

/** Value columns of every block: open, high, low, close, volume, amount (catalog.ts `BarBlocks.values`). */
export const COLUMNS = 6;
