import { createHash } from 'node:crypto';
/**
 * RFC 8785 (JCS) for JSON data as parsed by JSON.parse. JSON.stringify already writes strings
 * and finite numbers exactly as RFC 8785 requires; given a property list it writes every
 * object's keys in the list's order (skipping absent ones), so the sorted union of all keys
 * (UTF-16 code-unit order, the default sort) yields the canonical form at native speed. A
 * test checks it against the `canonicalize` package on random data.
 */
function jcs(value: unknown): string {
  const keys = new Set<string>();
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number' && !Number.isFinite(v)) throw new RangeError('non-finite number');
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const e of v) stack.push(e);
      continue;
    }
    for (const k of Object.keys(v)) {
      keys.add(k);
      stack.push((v as Record<string, unknown>)[k]);
    }
  }
  // A property list naming "__proto__" would make JSON.stringify read every object's prototype
  // through it: such (rare) data takes the plain recursive path.
  if (keys.has('__proto__')) return jcsRecursive(value);
  return JSON.stringify(value, [...keys].sort()) ?? 'null';
}

function jcsRecursive(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(jcsRecursive).join(',')}]`;
  const o = v as Record<string, unknown>;
  const parts = Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${jcsRecursive(o[k])}`);
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

export type ChecksumForm = 'sent' | 'jcs' | 'compact';

/**
 * Which accepted form (decisions.md "Checksum") the given checksum matches, or null for a
 * mismatch: the exact bytes of `records` as sent (cheapest, tried first), then the compact
 * and the JCS serialisations of the parsed records.
 */
export function matchChecksum(
  records: unknown,
  given: string,
  sentBytes: Uint8Array | null = null,
): ChecksumForm | null {
  if (sentBytes !== null && createHash('sha256').update(sentBytes).digest('hex') === given) return 'sent';
  // The compact form is one native stringify, so it is tried before JCS.
  const compact = JSON.stringify(records);
  if (sha256Hex(compact) === given) return 'compact';
  const canonical = canonicalJson(records);
  // Records sent with sorted keys are their own canonical form: no second hash needed.
  if (canonical !== null && canonical !== compact && sha256Hex(canonical) === given) return 'jcs';
  return null;
}

/** The checksum a client should send (JCS): used by the push client and demo seeder. */
export function batchChecksum(records: unknown): string {
  const jcs = canonicalJson(records);
  if (jcs === null) throw new Error('records cannot be canonicalised');
  return sha256Hex(jcs);
}
