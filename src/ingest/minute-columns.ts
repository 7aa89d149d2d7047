import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { BarBlocks, Catalog, Dataset, Field } from '../catalog/catalog.js';
import type { CodeMarket } from '../catalog/types.js';
import { normalizeCode } from '../query/codes.js';
import { normalizeTimestamp } from '../model/values.js';
import { parseBatchBody } from './batch-body.js';
import { parseBatchRequest, type BatchRequest } from './batch-request.js';
import { barTimeError, exchangeMinute, type BarInput } from './minute-bars.js';
import { checkValue, indexedFields } from './record-validation.js';
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  RECORDS,
  isSpace,
} from './json-scan.js';

/**
 * The columnar path of a minute batch (docs/minute-bars.md "Ingest"): the records of a dataset
 * with `blocks` read straight from the body's bytes into columns (BarInput), each value checked
 * by the record path's own rules (record-validation.ts `checkValue`, minute-bars.ts
 * `barTimeError`) through a plan compiled from the catalog's declaration — no parsed object,
 * row or string per bar beyond the bar's time text.
 *
 * The path takes only batches in which every record is valid and written plainly: strings
 * without escapes, each record's three members and its data fields once each, unique_key equal
 * byte for byte to the data's key, no bar repeated, the records' SHA-256 of the bytes as sent
 * (the caller checks). Anything else — a bad bar, a repeated key, an escape, an empty batch, a
 * meta error — returns null and the batch takes the record path from the start, which answers
 * it as it always did (the same codes, reasons and record indexes): the columnar path is a
 * shortcut for the common batch, never a second set of answers.
 */

export interface MinuteBatch {
  /** The request without its records (`records: []`): meta, dataset, checksum. */
  req: BatchRequest;
  /** The records value as sent, `[` to `]`: what the checksum covers. */
  recordsBytes: Uint8Array;
  bars: BarInput;
  /**
   * The SHA-256 of the records' JCS text (docs/ingest.md "Checksum"), written from the tokens
   * of a second scan that keeps them: for a client that hashes the canonical form of records it
   * sends otherwise.
   */
  jcsSha256: () => string;
}

const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const NULL = Buffer.from('null');
const DATASET_KEY = Buffer.from('"dataset"');
const DATA = Buffer.from('"data"');
const IDEMPOTENCY_KEY = Buffer.from('"idempotency_key"');
const UNIQUE_KEY = Buffer.from('"unique_key"');
const EMPTY_RECORDS = Buffer.from('[]');
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** Bytes inside a string token: 0 plain ASCII, 1 the closing quote, 2 not columnar, 3 beyond ASCII. */
const IN_STRING = Uint8Array.from({ length: 256 }, (_, c) =>
  c === QUOTE ? 1 : c === BACKSLASH || c < 0x20 ? 2 : c >= 0x80 ? 3 : 0,
);

/** Thrown inside the scan when the batch is not one the columnar path takes; never escapes it. */
const NOT_COLUMNAR = new Error('not a columnar minute batch');

type SlotKind = 'code' | 'date' | 'source' | 'time' | 'updated' | 'value';

/** One data field as the scan meets it, compiled from its declaration. */
interface Slot {
  field: Field;
  /** Its place in the plan's slots. */
  index: number;
  /** Its name as a JSON string token, `"name"`. */
  name: Buffer;
  bit: number;
  kind: SlotKind;
  /** The value column (kind `value`). */
  column: number;
  indexed: boolean;
  key: boolean;
  /** Position in the dataset's key (unique_key), -1 when not a key field. */
  keyIndex: number;
  market: CodeMarket | null;
}

interface Plan {
  b: BarBlocks;
  slots: Slot[];
  required: number;
  keys: Slot[];
  /** The slots and key fields in JCS order (by name), with their `"name":` bytes. */
  jcsSlots: { slot: Slot; head: Buffer }[];
  jcsKeys: { at: number; head: Buffer }[];
  /** Token spans kept per record: each slot's, the idempotency key's, each unique_key value's. */
  width: number;
}

const PLANS = new WeakMap<Dataset, Plan | null>();

/** The dataset's plan; null when a field is none the blocks store (then the record path only). */
function planOf(d: Dataset): Plan | null {
  if (PLANS.has(d)) return PLANS.get(d) ?? null;
  const plan = compilePlan(d);
  PLANS.set(d, plan);
  return plan;
}

function compilePlan(d: Dataset): Plan | null {
  const b = d.blocks;
  if (!b || d.fields.length > 30 || (d.sourceField !== null && !d.sourceField.required)) return null;
  const indexed = indexedFields(d);
  const keyNames = d.key.map((k) => k.name);
  const slots: Slot[] = [];
  let required = 0;
  for (const [i, f] of d.fields.entries()) {
    const column = b.values.indexOf(f);
    const kind: SlotKind | null =
      f === b.code
        ? 'code'
        : f === b.date
          ? 'date'
          : f === b.source
            ? 'source'
            : f === b.time
              ? 'time'
              : column >= 0
                ? 'value'
                : f.name === 'updated_at' && f.type === 'timestamp' && !f.required
                  ? 'updated'
                  : null;
    if (kind === null) return null;
    const bit = 1 << i;
    if (f.required) required |= bit;
    slots.push({
      field: f,
      index: i,
      name: Buffer.from(JSON.stringify(f.name)),
      bit,
      kind,
      column,
      indexed: indexed.has(f),
      key: keyNames.includes(f.name),
      keyIndex: keyNames.indexOf(f.name),
      market: d.codes.get(f) ?? null,
    });
  }
  const keys = keyNames.map((n) => slots.find((s) => s.field.name === n));
  if (keys.some((s) => s === undefined || s.kind === 'value' || s.kind === 'updated')) return null;
  const head = (name: string) => Buffer.from(`${JSON.stringify(name)}:`);
  const byName = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return {
    b,
    slots,
    required,
    keys: keys as Slot[],
    jcsSlots: [...slots]
      .sort((x, y) => byName(x.field.name, y.field.name))
      .map((slot) => ({ slot, head: head(slot.field.name) })),
    jcsKeys: keyNames
      .map((name, at) => ({ name, at }))
      .sort((x, y) => byName(x.name, y.name))
      .map(({ name, at }) => ({ at, head: head(name) })),
    width: 2 * (slots.length + 1 + keyNames.length),
  };
}

/**
 * A minute batch's records as validated columns, or null: the batch is not a minute batch, or
 * not one the columnar path takes (the module comment). Throws nothing the record path would
 * not: every refusal is the record path's to give.
 */
export function parseMinuteBatch(
  bytes: Uint8Array,
  catalog: Catalog,
  maxRecords: number,
): MinuteBatch | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const d = datasetHint(buf, catalog);
  const plan = d ? planOf(d) : null;
  if (!d || !plan) return null;
  const scan = new Scan(buf, plan, maxRecords);
  try {
    scan.body();
  } catch (err) {
    if (err === NOT_COLUMNAR) return null;
    throw err;
  }
  const { start, end } = scan;
  // Records of ASCII only are UTF-8; the envelope is checked by parseBatchBody below.
  if (scan.wideSeen && !isUtf8(buf.subarray(start, end))) return null;
  let req: BatchRequest;
  try {
    const envelope = parseBatchBody(
      Buffer.concat([buf.subarray(0, start), EMPTY_RECORDS, buf.subarray(end)]),
    );
    req = parseBatchRequest(envelope.body, catalog, maxRecords, scan.count);
  } catch {
    // The record path gives the error, in its own order (a records error before a meta one).
    return null;
  }
  if (req.dataset !== d) return null;
  const bars = scan.columns();
  if (req.meta.snapshot_type === 'full_snapshot') {
    // Records outside the snapshot's partition are the record path's to refuse.
    for (let k = 0; k < bars.count; k++)
      if (bars.date[k] !== req.meta.business_date || bars.source[k] !== req.meta.source) return null;
  }
  const jcsSha256 = (): string => {
    // Scanned again keeping every record's token bounds (a client hashing JCS, sending otherwise).
    const again = new Scan(buf, plan, maxRecords, true);
    again.body();
    return again.jcsSha256();
  };
  return { req, recordsBytes: buf.subarray(start, end), bars, jcsSha256 };
}

/** The dataset `meta.dataset` names, found without parsing (a guess: the envelope is checked after). */
function datasetHint(buf: Buffer, catalog: Catalog): Dataset | null {
  const at = buf.indexOf(DATASET_KEY);
  if (at < 0) return null;
  let i = at + DATASET_KEY.length;
  while (isSpace(buf[i])) i++;
  if (buf[i] !== COLON) return null;
  i++;
  while (isSpace(buf[i])) i++;
  if (buf[i] !== QUOTE) return null;
  const close = buf.indexOf(QUOTE, i + 1);
  if (close < 0 || close - i > 64) return null;
  return catalog.byName.get(buf.toString('latin1', i + 1, close)) ?? null;
}

/** A string field's last value (consecutive bars repeat their code, date and source). */
interface LastText {
  start: number;
  end: number;
  value: string;
}

/** What a bar time's text gives, computed once per distinct text in the batch. */
interface TimeOf {
  minute: number;
  at: ReturnType<typeof exchangeMinute>;
}

class Scan {
  i = 0;
  /** The records value, `[` to `]` (end exclusive). */
  start = -1;
  end = -1;
  count = 0;
  private keyAt = 0;
  private wide = false;
  /** A string held bytes beyond ASCII (then the records' bytes are checked as UTF-8). */
  wideSeen = false;
  private capacity: number;
  private code: string[] = [];
  private date: string[] = [];
  private source: string[] = [];
  private updated: (string | null)[] = [];
  private minutes: Int32Array;
  private values: Float64Array[];
  private readonly last: (LastText | null)[];
  private readonly times = new Map<string, TimeOf>();
  private readonly timeSpans = new Map<number, { start: number; end: number; time: TimeOf }>();
  /** After slot i (i + 1; 0: the first), the slot that followed it in the last record. */
  private readonly follows: Int32Array;
  /** The current record's key values as written: data's and unique_key's [start, end) pairs. */
  private readonly dataKeys: Int32Array;
  private readonly givenKeys: Int32Array;
  /**
   * Per record `plan.width` token bounds (start, end; -1 absent), for the JCS text: kept for
   * every record only by a second scan (`keepSpans`), made when the bytes' hash is not the
   * checksum; the first scan writes them over one record's room (no 40 MB array a batch).
   */
  private spans: Int32Array;

  constructor(
    private readonly b: Buffer,
    private readonly plan: Plan,
    private readonly maxRecords: number,
    private readonly keepSpans = false,
  ) {
    // A bar's record is well over 100 bytes; the columns grow if a batch proves it wrong.
    this.capacity = Math.max(16, Math.min(maxRecords, Math.ceil(b.length / 100)));
    this.minutes = new Int32Array(this.capacity);
    this.values = plan.b.values.map(() => new Float64Array(this.capacity));
    this.last = plan.slots.map(() => null);
    this.dataKeys = new Int32Array(plan.keys.length * 2);
    this.givenKeys = new Int32Array(plan.keys.length * 2);
    this.spans = new Int32Array((keepSpans ? this.capacity : 1) * plan.width);
    this.follows = new Int32Array(plan.slots.length + 1);
  }

  columns(): BarInput {
    const n = this.count;
    return {
      count: n,
      code: this.code,
      date: this.date,
      source: this.source,
      updated: this.updated,
      minutes: this.minutes.subarray(0, n),
      values: this.values.map((c) => c.subarray(0, n)),
    };
  }

  /** The top-level object: its `records` value scanned, every other value skipped. */
  body(): void {
    this.ws();
    this.expect(OPEN_OBJECT);
    this.ws();
    do {
      const ke = this.key();
      const ks = this.keyAt;
      if (this.is(ks, ke, RECORDS)) {
        if (this.start >= 0) throw NOT_COLUMNAR;
        this.start = this.i;
        this.records();
        this.end = this.i;
      } else this.skip();
    } while (this.more(CLOSE_OBJECT));
    if (this.start < 0) throw NOT_COLUMNAR;
  }

  private records(): void {
    this.expect(OPEN_ARRAY);
    this.ws();
    // An empty batch: the record path's (a full snapshot of nothing is refused there).
    if (this.b[this.i] === CLOSE_ARRAY) throw NOT_COLUMNAR;
    do {
      if (this.count >= this.maxRecords) throw NOT_COLUMNAR;
      if (this.count >= this.capacity) this.grow();
      this.record(this.count);
      this.count++;
    } while (this.more(CLOSE_ARRAY));
  }

  private grow(): void {
    this.capacity = Math.min(this.maxRecords, this.capacity * 2);
    const minutes = new Int32Array(this.capacity);
    minutes.set(this.minutes);
    this.minutes = minutes;
    this.values = this.values.map((c) => {
      const next = new Float64Array(this.capacity);
      next.set(c);
      return next;
    });
    if (!this.keepSpans) return;
    const spans = new Int32Array(this.capacity * this.plan.width);
    spans.set(this.spans);
    this.spans = spans;
  }

  /** One record `{data, idempotency_key, unique_key}`, each member once, in any order. */
  private record(k: number): void {
    this.expect(OPEN_OBJECT);
    this.ws();
    let have = 0;
    do {
      if ((have & 1) === 0 && this.named(DATA)) {
        have |= 1;
        this.data(k);
      } else if ((have & 2) === 0 && this.named(IDEMPOTENCY_KEY)) {
        have |= 2;
        const s = this.i;
        // A non-empty string; written without escapes and valid UTF-8, it is clean text.
        if (this.str() === s + 1) throw NOT_COLUMNAR;
        const at = this.spanBase(k) + 2 * this.plan.slots.length;
        this.spans[at] = s;
        this.spans[at + 1] = this.i;
      } else if ((have & 4) === 0 && this.named(UNIQUE_KEY)) {
        have |= 4;
        this.uniqueKey(k);
      } else throw NOT_COLUMNAR;
    } while (this.more(CLOSE_OBJECT));
    if (have !== 7) throw NOT_COLUMNAR;
    // unique_key agrees with data: the same text (no escapes, so the same string).
    for (let j = 0; j < this.dataKeys.length; j += 2) {
      const s = this.dataKeys[j] as number;
      const len = (this.dataKeys[j + 1] as number) - s;
      const g = this.givenKeys[j] as number;
      if ((this.givenKeys[j + 1] as number) - g !== len) throw NOT_COLUMNAR;
      for (let x = 0; x < len; x++) if (this.b[s + x] !== this.b[g + x]) throw NOT_COLUMNAR;
    }
  }

  /** unique_key: each key field once, as a string. */
  private uniqueKey(k: number): void {
    const base = this.spanBase(k) + 2 * (this.plan.slots.length + 1);
    const keys = this.plan.keys;
    this.expect(OPEN_OBJECT);
    this.ws();
    let seen = 0;
    do {
      let j = 0;
      while (j < keys.length && !this.named((keys[j] as Slot).name)) j++;
      if (j === keys.length || (seen & (1 << j)) !== 0) throw NOT_COLUMNAR;
      seen |= 1 << j;
      this.spans[base + 2 * j] = this.i;
      this.givenKeys[2 * j] = this.i + 1;
      this.givenKeys[2 * j + 1] = this.str();
      this.spans[base + 2 * j + 1] = this.i;
    } while (this.more(CLOSE_OBJECT));
    if (seen !== (1 << keys.length) - 1) throw NOT_COLUMNAR;
  }

  /** Where record k's token bounds go. */
  private spanBase(k: number): number {
    return this.keepSpans ? k * this.plan.width : 0;
  }

  /** The record's data: each field by its declaration's rules, into bar k of the columns. */
  private data(k: number): void {
    const slots = this.plan.slots;
    this.expect(OPEN_OBJECT);
    this.ws();
    let seen = 0;
    let given = 0;
    let prev = 0;
    let time: TimeOf | null = null;
    const base = this.spanBase(k);
    if (this.b[this.i] !== CLOSE_OBJECT) {
      do {
        // Records write their fields in one order (the push client's: by name): the field that
        // followed the previous one last time is tried first, its name compared where it stands.
        let slot = slots[this.follows[prev] as number];
        if (!slot || !this.named(slot.name)) {
          slot = slots.find((x) => this.named(x.name));
          if (!slot) throw NOT_COLUMNAR;
          this.follows[prev] = slot.index;
        }
        prev = slot.index + 1;
        if ((seen & slot.bit) !== 0) throw NOT_COLUMNAR;
        seen |= slot.bit;
        const token = this.i;
        if (this.b[this.i] !== 0x6e) given |= slot.bit;
        if (this.b[this.i] === 0x6e) {
          // null: an absent optional value (a required one is the record path's error).
          if (slot.field.required || !this.is(this.i, this.i + 4, NULL)) throw NOT_COLUMNAR;
          this.i += 4;
        } else if (slot.kind === 'value') {
          const v = this.num();
          if ('reason' in checkValue(slot.field, v, slot.indexed)) throw NOT_COLUMNAR;
          (this.values[slot.column] as Float64Array)[k] = v;
        } else {
          const s = this.i + 1;
          const e = this.str();
          if (slot.key) {
            this.dataKeys[2 * slot.keyIndex] = s;
            this.dataKeys[2 * slot.keyIndex + 1] = e;
          }
          if (slot.kind === 'time') time = this.timeOf(s, e);
          else if (slot.kind === 'updated') {
            this.updated[k] = normalizeTimestamp(this.text(s, e)) ?? notColumnar();
          } else this.textOf(slot, s, e, k);
        }
        this.spans[base + 2 * slot.index] = token;
        this.spans[base + 2 * slot.index + 1] = this.i;
      } while (this.more(CLOSE_OBJECT));
    } else this.i++;
    if ((this.plan.required & ~seen) !== 0 || time === null) throw NOT_COLUMNAR;
    // Absent optional fields: null values, no updated_at of the bar's own.
    for (const slot of slots) {
      if ((seen & slot.bit) === 0) this.spans[base + 2 * slot.index] = -1;
      if ((given & slot.bit) !== 0) continue;
      if (slot.kind === 'value') (this.values[slot.column] as Float64Array)[k] = NaN;
      else if (slot.kind === 'updated') this.updated[k] = null;
    }
    if (barTimeError(this.plan.b, this.date[k] as string, time.at) !== null) throw NOT_COLUMNAR;
    this.minutes[k] = time.minute;
  }

  /**
   * The SHA-256 of the records as JCS: each record's members and data fields by name, strings
   * as written (no escapes: JSON.stringify writes them the same), numbers as JSON.stringify
   * writes them — the token itself when it is already that text.
   */
  jcsSha256(): string {
    const { slots, jcsSlots, jcsKeys, width } = this.plan;
    const hash = createHash('sha256');
    const out = Buffer.allocUnsafe(1 << 16);
    let at = 0;
    const flush = (room: number) => {
      if (at + room <= out.length) return;
      hash.update(out.subarray(0, at));
      at = 0;
    };
    const bytes = (from: number, to: number) => {
      if (to - from > out.length) {
        flush(out.length);
        hash.update(this.b.subarray(from, to));
        return;
      }
      flush(to - from);
      at += this.b.copy(out, at, from, to);
    };
    const put = (part: Buffer) => {
      flush(part.length);
      at += part.copy(out, at);
    };
    const text = (t: string) => {
      flush(t.length);
      at += out.write(t, at, 'latin1');
    };
    text('[');
    for (let k = 0; k < this.count; k++) {
      const base = k * width;
      text(k === 0 ? '{"data":{' : ',{"data":{');
      let first = true;
      for (const { slot, head } of jcsSlots) {
        const s = this.spans[base + 2 * slot.index] as number;
        if (s < 0) continue;
        const e = this.spans[base + 2 * slot.index + 1] as number;
        if (!first) text(',');
        first = false;
        put(head);
        if (slot.kind === 'value' && this.b[s] !== 0x6e && !this.canonicalNumber(s, e))
          text(String((this.values[slot.column] as Float64Array)[k]));
        else bytes(s, e);
      }
      const idem = base + 2 * slots.length;
      text('},"idempotency_key":');
      bytes(this.spans[idem] as number, this.spans[idem + 1] as number);
      text(',"unique_key":{');
      for (const [n, { at: j, head }] of jcsKeys.entries()) {
        if (n > 0) text(',');
        put(head);
        bytes(this.spans[idem + 2 + 2 * j] as number, this.spans[idem + 3 + 2 * j] as number);
      }
      text('}}');
    }
    text(']');
    hash.update(out.subarray(0, at));
    return hash.digest('hex');
  }

  /**
   * Whether a number token is the text JSON.stringify writes for its value: no exponent, at
   * most 15 digits (so no shorter text names the same double), no trailing zero after a point,
   * not -0, and not below 10^-6 (written with an exponent).
   */
  private canonicalNumber(s: number, e: number): boolean {
    const b = this.b;
    let i = s;
    if (b[i] === MINUS) i++;
    let digits = 0;
    let point = -1;
    for (let x = i; x < e; x++) {
      const c = b[x] as number;
      if (c === DOT) point = x;
      else if (c < ZERO || c > NINE) return false;
      else digits++;
    }
    if (digits > 15) return false;
    if (point < 0) return !(b[s] === MINUS && e - i === 1 && b[i] === ZERO);
    if (b[e - 1] === ZERO) return false;
    // 0.00000x: below 10^-6, written 1e-7 and the like.
    return !(b[i] === ZERO && e - point > 7 && b[point + 1] === ZERO && b[point + 6] === ZERO);
  }

  /** A code, date or source: checked once per run of equal texts (a code's bars come together). */
  private textOf(slot: Slot, s: number, e: number, k: number): void {
    let last = this.last[slot.index] ?? null;
    if (last === null || !this.same(last, s, e)) {
      const raw = this.text(s, e);
      const checked = checkValue(slot.field, raw, slot.indexed);
      if ('reason' in checked || (checked.value === '' && slot.key)) throw NOT_COLUMNAR;
      const value = slot.market !== null ? normalizeCode(slot.market, raw) : raw;
      last = { start: s, end: e, value };
      this.last[slot.index] = last;
    }
    const column = slot.kind === 'code' ? this.code : slot.kind === 'date' ? this.date : this.source;
    column[k] = last.value;
  }

  private same(last: { start: number; end: number }, s: number, e: number): boolean {
    const len = e - s;
    if (last.end - last.start !== len) return false;
    for (let x = 0; x < len; x++) if (this.b[last.start + x] !== this.b[s + x]) return false;
    return true;
  }

  /**
   * A bar time: normalised and placed in the exchange's day once per distinct text, found again
   * by a hash of its bytes (no string made per bar), each hit checked byte for byte.
   */
  private timeOf(s: number, e: number): TimeOf {
    const b = this.b;
    let h = 0x811c9dc5;
    for (let x = s; x < e; x++) h = Math.imul(h ^ (b[x] as number), 16777619);
    const hit = this.timeSpans.get(h);
    if (hit !== undefined && this.same(hit, s, e)) return hit.time;
    const time = this.timeOfText(s, e);
    this.timeSpans.set(h, { start: s, end: e, time });
    return time;
  }

  private timeOfText(s: number, e: number): TimeOf {
    const text = this.text(s, e);
    let t = this.times.get(text);
    if (t === undefined) {
      const checked = checkValue(this.plan.b.time, text, true);
      if ('reason' in checked) throw NOT_COLUMNAR;
      const at = exchangeMinute(this.plan.b, checked.value as string);
      t = { minute: at.minute, at };
      this.times.set(text, t);
    }
    return t;
  }

  private text(s: number, e: number): string {
    if (!this.wide) return this.b.toString('latin1', s, e);
    this.wide = false;
    return this.b.toString('utf8', s, e);
  }

  private is(s: number, e: number, name: Buffer): boolean {
    if (e - s !== name.length) return false;
    for (let x = 0; x < name.length; x++) if (this.b[s + x] !== name[x]) return false;
    return true;
  }

  /**
   * The member name `quoted` (a string token's exact bytes, `"name"`) and its colon at i: true,
   * past them; false, i unchanged. Bytes other than these (an escape too) are another name.
   */
  private named(quoted: Buffer): boolean {
    const b = this.b;
    const at = this.i;
    for (let x = 0; x < quoted.length; x++) if (b[at + x] !== quoted[x]) return false;
    this.i = at + quoted.length;
    this.ws();
    this.expect(COLON);
    this.ws();
    return true;
  }

  /** A member's name and its colon: the index of the name's closing quote (it starts at keyAt). */
  private key(): number {
    this.keyAt = this.i + 1;
    const end = this.str();
    this.ws();
    this.expect(COLON);
    this.ws();
    return end;
  }

  /** After a member or element: true past a comma (another follows), false past `close`. */
  private more(close: number): boolean {
    this.ws();
    if (this.b[this.i] === COMMA) {
      this.i++;
      this.ws();
      return true;
    }
    this.expect(close);
    return false;
  }

  private ws(): void {
    while (isSpace(this.b[this.i])) this.i++;
  }

  private expect(c: number): void {
    if (this.b[this.i] !== c) throw NOT_COLUMNAR;
    this.i++;
  }

  /**
   * A string token at i, without escapes or control characters (else not columnar): the index
   * of its closing quote; i moves past it. `wide`: it holds bytes beyond ASCII.
   */
  private str(): number {
    const b = this.b;
    let i = this.i;
    if (b[i] !== QUOTE) throw NOT_COLUMNAR;
    this.wide = false;
    for (i++; ; i++) {
      // One table look-up a byte; past the end (undefined) is not columnar either.
      const kind = IN_STRING[b[i] as number];
      if (kind === 0) continue;
      if (kind === 1) break;
      if (kind !== 3) throw NOT_COLUMNAR;
      this.wide = true;
      this.wideSeen = true;
    }
    this.i = i + 1;
    return i;
  }

  /**
   * A JSON number token (the grammar exactly). Up to 15 digits without an exponent it is
   * computed as digits ÷ 10^k, one correctly rounded division of two exact doubles: the value
   * JSON.parse gives. Otherwise its text is parsed; one that underflows to 0 is not columnar
   * (the record path names it).
   */
  private num(): number {
    const b = this.b;
    const from = this.i;
    let i = from;
    const negative = b[i] === MINUS;
    if (negative) i++;
    let c = b[i] ?? 0;
    let mantissa = 0;
    let digits = 0;
    let scale = 0;
    if (c === ZERO) c = b[++i] ?? 0;
    else if (c > ZERO && c <= NINE) {
      while (c >= ZERO && c <= NINE) {
        mantissa = mantissa * 10 + (c - ZERO);
        digits++;
        c = b[++i] ?? 0;
      }
    } else throw NOT_COLUMNAR;
    if (c === DOT) {
      c = b[++i] ?? 0;
      if (c < ZERO || c > NINE) throw NOT_COLUMNAR;
      while (c >= ZERO && c <= NINE) {
        mantissa = mantissa * 10 + (c - ZERO);
        digits++;
        scale++;
        c = b[++i] ?? 0;
      }
    }
    let exponent = false;
    if (c === LOWER_E || c === UPPER_E) {
      exponent = true;
      c = b[++i] ?? 0;
      if (c === PLUS || c === MINUS) c = b[++i] ?? 0;
      if (c < ZERO || c > NINE) throw NOT_COLUMNAR;
      while (c >= ZERO && c <= NINE) c = b[++i] ?? 0;
    }
    this.i = i;
    if (!exponent && digits <= 15) {
      const v = scale === 0 ? mantissa : mantissa / (POW10[scale] as number);
      return negative ? -v : v;
    }
    const v = Number(b.toString('latin1', from, i));
    if (v === 0) throw NOT_COLUMNAR;
    return v;
  }

  /** Any JSON value (outside the records: the envelope is parsed in full afterwards). */
  private skip(): void {
    const b = this.b;
    let depth = 0;
    for (;;) {
      const c = b[this.i];
      if (c === undefined) throw NOT_COLUMNAR;
      if (c === QUOTE) {
        let j = this.i + 1;
        while (b[j] !== QUOTE) {
          if (b[j] === undefined) throw NOT_COLUMNAR;
          j += b[j] === BACKSLASH ? 2 : 1;
        }
        this.i = j + 1;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        depth++;
        this.i++;
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        if (depth === 0) return;
        depth--;
        this.i++;
      } else if (c === COMMA && depth === 0) return;
      else this.i++;
      if (depth === 0 && (c === QUOTE || c === CLOSE_OBJECT || c === CLOSE_ARRAY)) return;
    }
  }
}

function notColumnar(): never {
  throw NOT_COLUMNAR;
}
