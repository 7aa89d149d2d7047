/** API keys as stored (mds_keys) and their usage: shared by access, storage, HTTP and the CLI. */

export type KeyScope = 'query' | 'ingest';
/** What mds_keys holds: API keys, and the dashboard's admin tokens (access/admin-tokens.ts). */
export type StoredKeyScope = KeyScope | 'admin';

export interface ApiKeyRecord {
  id: string;
  name: string;
  scope: StoredKeyScope;
  /** Display prefix (the first characters of the key), never the secret. */
  prefix: string;
  /** SHA-256 hex of the whole key. */
  hash: string;
  rate_per_minute: number | null;
  daily_quota: number | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface KeyPatch {
  name?: string;
  rate_per_minute?: number | null;
  daily_quota?: number | null;
}

export interface UsageEntry {
  keyId: string;
  hour: string;
  count: number;
  lastUsed: string;
}
