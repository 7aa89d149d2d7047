import { createHash } from 'node:crypto';
/**
 * RFC 8785 (JCS) for JSON data as parsed by JSON.parse: object keys sorted by UTF-16 code
 * units (the default sort), no whitespace; JSON.stringify already writes strings and finite
 * numbers exactly as RFC 8785 requires. Written here rather than taken from the `canonicalize`
 * package because it is on the ingest hot path (one array join instead of repeated string
 * concatenation); a test checks it against that package on random data.
 */
function jcs(v: unknown): string {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'number' && !Number.isFinite(v)) throw new RangeError('non-finite number');
    return JSON.stringify(v) ?? 'null';
  }
  if (Array.isArray(v)) {
    const parts = new Array<string>(v.length);
    for (let i = 0; i < v.length; i++) parts[i] = jcs(v[i]);
    return `[${parts.join(',')}]`;
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  const parts = new Array<string>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    parts[i] = `${JSON.stringify(k)}:${jcs(obj[k])}`;
  }
  return `{${parts.join(',')}}`;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** JCS form; null when the value cannot be canonicalised (e.g. a non-finite number). */
export function canonicalJson(records: unknown): string | null {
  try {
    return jcs(records);
  } catch {
    return null;
  }
}

export type ChecksumForm = 'jcs' | 'compact';

/** Which form the given checksum matches, or null for a mismatch. */
export function matchChecksum(records: unknown, given: string): ChecksumForm | null {
  // The compact form is a native stringify, so it is tried first.
  if (sha256Hex(JSON.stringify(records)) === given) return 'compact';
  const jcs = canonicalJson(records);
  if (jcs !== null && sha256Hex(jcs) === given) return 'jcs';
  return null;
}

/** The checksum a client should send (JCS): used by the push client and demo seeder. */
export function batchChecksum(records: unknown): string {
  const jcs = canonicalJson(records);
  if (jcs === null) throw new Error('records cannot be canonicalised');
  return sha256Hex(jcs);
}
