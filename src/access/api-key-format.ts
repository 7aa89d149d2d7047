import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { StoredKeyScope } from '../model/keys.js';

/**
 * Managed keys look like `mds_q_<32 random base62><6 check chars>` (`mds_i_` for ingest, `mds_a_`
 * for the dashboard's admin tokens):
 * recognisable in logs and secret scanners, ≥ 190 random bits, and a checksum so a mistyped
 * or invented key is refused without a database lookup. Only SHA-256 hashes are stored.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LEN = 32;
const CHECK_LEN = 6;
const SCOPE_CHAR: Record<StoredKeyScope, string> = { query: 'q', ingest: 'i', admin: 'a' };
const SCOPE_OF: Record<string, StoredKeyScope> = { q: 'query', i: 'ingest', a: 'admin' };
const KEY_RE = /^mds_([qia])_([0-9A-Za-z]{38})$/;
export const DISPLAY_PREFIX_LENGTH = 12;

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      // 62 * 4 = 248: dropping bytes ≥ 248 keeps every character equally likely.
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

function check(body: string): string {
  const digest = createHash('sha256').update(body).digest();
  let out = '';
  for (let i = 0; i < CHECK_LEN; i++) out += ALPHABET[(digest[i] as number) % 62];
  return out;
}

export function generateKey(scope: StoredKeyScope): string {
  const body = `mds_${SCOPE_CHAR[scope]}_${randomBase62(BODY_LEN)}`;
  return body + check(body);
}

/** The scope a well-formed managed key claims, or null when it is not one (bad shape or checksum). */
export function managedKeyScope(key: string): StoredKeyScope | null {
  const m = KEY_RE.exec(key);
  if (!m) return null;
  const body = key.slice(0, key.length - CHECK_LEN);
  if (check(body) !== key.slice(-CHECK_LEN)) return null;
  return SCOPE_OF[m[1] as string] ?? null;
}

export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export const newKeyId = (): string => randomUUID();

/** Constant-time equality of two hex digests of the same length. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
