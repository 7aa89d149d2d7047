import { isUtf8 } from 'node:buffer';
import sjson from 'secure-json-parse';
import { AppError, invalid } from '../errors.js';
import { countKeys, findDuplicateKey, pathTo, scanBody, type Span } from './json-scan.js';

/** A record refused for what only the body's text shows (docs/ingest.md "Values"). */
export interface RecordIssue {
  field: string;
  reason: string;
}

export interface ParsedBody {
  body: unknown;
  /** The bytes of the `records` value as sent, `[` to `]`: the "hash what you send" checksum. */
  recordsBytes: Uint8Array | null;
  /** Per record index: a repeated key or an underflowing number inside it. */
  recordIssues: Map<number, RecordIssue>;
}

export const REPEATED_KEY = 'repeats a key within one JSON object';
export const UNDERFLOW = 'a non-zero number too small for a 64-bit float (it would be stored as 0)';

/** `["data","close"]` → "close" (data fields are named bare in record errors, as elsewhere). */
function fieldOf(path: string[]): string {
  return path[0] === 'data' && path.length > 1 ? path.slice(1).join('.') : path.join('.');
}

/** Keys of every object in `body` except inside `skip` (the records array). */
function keysOutside(body: unknown, skip: unknown): number {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return countKeys(body);
  let n = 0;
  for (const v of Object.values(body)) {
    n++;
    if (v !== skip) n += countKeys(v);
  }
  return n;
}

/**
 * The request body's bytes → its value, refusing what JSON.parse would let through: bytes that
 * are not UTF-8 (400 / 4002, never a U+FFFD stored or a checksum error), a key repeated in one
 * object of the batch's envelope, or a number outside `records` that underflows (400 / 4001).
 * Prototype keys (`__proto__`, `constructor.prototype`) are refused as before (400 / 4001).
 */
export function parseBatchBody(bytes: Uint8Array): ParsedBody {
  if (!isUtf8(bytes)) throw new AppError(4002);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let body: unknown;
  try {
    body = sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    throw invalid(`the body is not valid JSON: ${(err as Error).message}`);
  }
  const scan = scanBody(bytes);
  const whole: Span = { start: 0, end: bytes.length };
  const records =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>).records : undefined;

  if (scan.outerKeys !== keysOutside(body, records)) {
    const path = findDuplicateKey(bytes, whole, scan.records);
    throw invalid(`the body repeats the key "${path?.join('.') ?? '?'}" within one JSON object`, {
      field: path?.join('.') ?? null,
    });
  }
  const outside = scan.underflows.find((u) => u.element < 0);
  if (outside) {
    const path = pathTo(bytes, whole, outside.start).join('.');
    throw invalid(`${path}: ${UNDERFLOW}`, { field: path });
  }

  const recordIssues = new Map<number, RecordIssue>();
  if (Array.isArray(records) && records.length === scan.elements.length) {
    scan.elements.forEach((el, i) => {
      if (el.keys === countKeys(records[i])) return;
      const path = findDuplicateKey(bytes, el);
      recordIssues.set(i, { field: path ? fieldOf(path) : 'record', reason: REPEATED_KEY });
    });
    for (const u of scan.underflows) {
      const el = scan.elements[u.element];
      if (!el || recordIssues.has(u.element)) continue;
      recordIssues.set(u.element, { field: fieldOf(pathTo(bytes, el, u.start)), reason: UNDERFLOW });
    }
  }
  const span = scan.records;
  return { body, recordsBytes: span ? bytes.subarray(span.start, span.end) : null, recordIssues };
}
