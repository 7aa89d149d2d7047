/**
 * One pass over the raw bytes of a request body that JSON.parse has already accepted, for
 * what JSON.parse cannot tell: where the top-level `records` value lies (the "hash what you
 * send" checksum covers exactly those bytes), whether an object repeats a key (JSON.parse keeps
 * the last silently), and which numbers underflow to 0 (`1e-400`). Valid JSON is assumed, so
 * the scan only tracks strings, nesting and separators; a property test checks it against
 * JSON.parse on random documents.
 *
 * Repeated keys are found by counting: every `:` outside a string separates one key from its
 * value, so a subtree holds as many keys in the text as in the parsed value unless one of its
 * objects repeats a key. The scan counts the text's keys per record; the caller compares with
 * the parsed records and names the repeated key (findDuplicateKey) only where they differ.
 */

export interface Span {
  /** First byte. */
  start: number;
  /** One past the last byte. */
  end: number;
}

export interface ElementScan extends Span {
  /** Object keys written inside the element (at any depth). */
  keys: number;
}

export interface BodyScan {
  /** The top-level `records` value, `[` to `]` inclusive; null when the body has none. */
  records: Span | null;
  /** Each element of `records` (when it is an array), in order. */
  elements: ElementScan[];
  /** Object keys written outside the `records` value (top level, meta, checksum, …). */
  outerKeys: number;
  /** Numbers written with a non-zero digit that parse to 0; `element` is -1 outside records. */
  underflows: (Span & { element: number })[];
}

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const COMMA = 0x2c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const RECORDS = Buffer.from('records');

/** Index of the closing quote of the string whose opening quote is at `i`. */
function stringEnd(b: Uint8Array, i: number): number {
  let j = i + 1;
  for (;;) {
    const c = b[j];
    if (c === QUOTE) return j;
    j += c === BACKSLASH ? 2 : 1;
  }
}

export const isSpace = (c: number | undefined): boolean =>
  c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function nextNonSpace(b: Uint8Array, i: number): number {
  while (isSpace(b[i])) i++;
  return i;
}

/** The text of the string token whose quotes are at `open` and `close`. */
export function stringAt(b: Uint8Array, open: number, close: number): string {
  const raw = Buffer.from(b.buffer, b.byteOffset + open, close + 1 - open);
  return raw.includes(BACKSLASH)
    ? (JSON.parse(raw.toString('utf8')) as string)
    : raw.toString('utf8', 1, raw.length - 1);
}

function isRecordsKey(b: Uint8Array, open: number, close: number): boolean {
  if (close - open - 1 === RECORDS.length) {
    for (let k = 0; k < RECORDS.length; k++) if (b[open + 1 + k] !== RECORDS[k]) return false;
    return true;
  }
  // An escaped spelling ("rec\u006frds") is the same key.
  return b.subarray(open, close).includes(BACKSLASH) && stringAt(b, open, close) === 'records';
}

/** A number token that could have underflowed: a negative exponent, or hundreds of digits. */
function mayUnderflow(b: Uint8Array, start: number, end: number): boolean {
  if (end - start < 300) {
    let k = start;
    while (k < end && b[k] !== 0x65 && b[k] !== 0x45) k++;
    if (k === end || b[k + 1] !== 0x2d) return false;
  }
  let mantissa = start;
  while (mantissa < end && b[mantissa] !== 0x65 && b[mantissa] !== 0x45) mantissa++;
  let nonZero = false;
  for (let k = start; k < mantissa; k++)
    if ((b[k] as number) >= 0x31 && (b[k] as number) <= 0x39) nonZero = true;
  return nonZero && Number(Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1')) === 0;
}

/** Scans a body that JSON.parse accepted (valid UTF-8 JSON). */
export function scanBody(b: Uint8Array): BodyScan {
  const out: BodyScan = { records: null, elements: [], outerKeys: 0, underflows: [] };
  let depth = 0;
  // The top-level key just read was "records": its value starts at the next token.
  let recordsNext = false;
  // Depth of the records array's elements, while inside it (0 otherwise).
  let elementDepth = 0;
  let inRecords = false;
  let current: ElementScan | null = null;
  const n = b.length;
  let i = 0;

  const beginValue = (at: number): void => {
    if (recordsNext) {
      recordsNext = false;
      out.records = { start: at, end: at };
      out.elements = [];
      inRecords = true;
      if (b[at] === OPEN_ARRAY) elementDepth = depth + 1;
    } else if (inRecords && elementDepth > 0 && depth === elementDepth && current === null) {
      current = { start: at, end: at, keys: 0 };
      out.elements.push(current);
    }
  };
  const endValue = (after: number): void => {
    if (current !== null && depth === elementDepth) {
      current.end = after;
      current = null;
    }
    // The records value is a member of the top-level object: it ends back at depth 1.
    if (inRecords && out.records && depth === 1) {
      out.records.end = after;
      inRecords = false;
      elementDepth = 0;
    }
  };
  while (i < n) {
    const c = b[i] as number;
    if (c === QUOTE) {
      const close = stringEnd(b, i);
      const afterString = nextNonSpace(b, close + 1);
      if (b[afterString] === COLON) {
        // A key.
        if (depth === 1 && !inRecords && isRecordsKey(b, i, close)) recordsNext = true;
        if (inRecords) {
          // Set by beginValue (a closure), which TypeScript's narrowing does not follow.
          const el = current as ElementScan | null;
          if (el !== null) el.keys++;
        } else out.outerKeys++;
        i = afterString + 1;
        continue;
      }
      beginValue(i);
      endValue(close + 1);
      i = close + 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      beginValue(i);
      depth++;
      i++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      endValue(i + 1);
      i++;
    } else if (c === COMMA || isSpace(c) || c === COLON) {
      i++;
    } else {
      // A number or a literal (true, false, null).
      let j = i + 1;
      while (j < n) {
        const d = b[j] as number;
        if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || isSpace(d)) break;
        j++;
      }
      beginValue(i);
      if ((c === 0x2d || (c >= 0x30 && c <= 0x39)) && mayUnderflow(b, i, j)) {
        out.underflows.push({ start: i, end: j, element: inRecords ? out.elements.length - 1 : -1 });
      }
      endValue(j);
      i = j;
    }
  }
  return out;
}

/**
 * The first key repeated within one object between `start` and `end` (a whole JSON value),
 * skipping `skip`, as the path of keys leading to it; null when there is none.
 */
export function findDuplicateKey(b: Uint8Array, span: Span, skip: Span | null = null): string[] | null {
  // Per open container: its keys so far (null for arrays) and the key it was opened under.
  const stack: { keys: Set<string> | null; under: string | null }[] = [];
  let lastKey: string | null = null;
  let i = span.start;
  while (i < span.end) {
    if (skip && i === skip.start) {
      i = skip.end;
      continue;
    }
    const c = b[i] as number;
    if (c === QUOTE) {
      const close = stringEnd(b, i);
      const after = nextNonSpace(b, close + 1);
      const top = stack[stack.length - 1];
      if (b[after] === COLON && top?.keys) {
        const key = stringAt(b, i, close);
        if (top.keys.has(key)) return [...pathOf(stack), key];
        top.keys.add(key);
        lastKey = key;
        i = after + 1;
        continue;
      }
      i = close + 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      stack.push({ keys: c === OPEN_OBJECT ? new Set() : null, under: lastKey });
      lastKey = null;
      i++;
    } else {
      if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) stack.pop();
      if (c === COMMA) lastKey = null;
      i++;
    }
  }
  return null;
}

function pathOf(stack: { under: string | null }[]): string[] {
  return stack.slice(1).map((s) => s.under ?? '[]');
}

/** The path of keys leading to the value starting at byte `at` inside the value `span`. */
export function pathTo(b: Uint8Array, span: Span, at: number): string[] {
  const stack: { under: string | null; isObject: boolean }[] = [];
  let lastKey: string | null = null;
  let i = span.start;
  while (i < at) {
    const c = b[i] as number;
    if (c === QUOTE) {
      const close = stringEnd(b, i);
      const after = nextNonSpace(b, close + 1);
      if (b[after] === COLON && stack[stack.length - 1]?.isObject) {
        lastKey = stringAt(b, i, close);
        i = after + 1;
        continue;
      }
      i = close + 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      stack.push({ under: lastKey, isObject: c === OPEN_OBJECT });
      lastKey = null;
      i++;
    } else {
      if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) stack.pop();
      i++;
    }
  }
  return [...stack.slice(1).map((s) => s.under ?? '[]'), lastKey ?? '[]'];
}

/** Keys of every object inside a parsed JSON value, counted without recursion. */
export function countKeys(value: unknown): number {
  let keys = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const e of v) if (typeof e === 'object' && e !== null) stack.push(e);
      continue;
    }
    for (const k of Object.keys(v)) {
      keys++;
      const child = (v as Record<string, unknown>)[k];
      if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return keys;
}
