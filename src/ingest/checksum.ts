import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

// canonicalize ships CommonJS whose typings claim an ES default export: load it as CommonJS.
const canonicalize = createRequire(import.meta.url)('canonicalize') as (value: unknown) => string | undefined;

/**
 * The batch checksum (decisions.md): lowercase hex SHA-256 of `records` as RFC 8785 canonical
 * JSON (JCS); for clients that cannot canonicalise, SHA-256 of the compact
 * `JSON.stringify(records)` with keys in the order sent is accepted too.
 */

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** JCS form; null when the value cannot be canonicalised (e.g. a non-finite number). */
export function canonicalJson(records: unknown): string | null {
  try {
    return canonicalize(records) ?? null;
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
