import { createHash, timingSafeEqual } from 'node:crypto';
import type { Store } from '../storage/store.js';
import type { ApiKeyRecord } from '../model/keys.js';
import { DISPLAY_PREFIX_LENGTH, generateKey, hashKey, managedKeyScope, newKeyId } from './api-key-format.js';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * The admin API's (and so the dashboard's) credentials: MDS_ADMIN_TOKEN when configured, and
 * admin tokens made by `mds admin-token`, so a first run has a way in without restarting with
 * a variable. Those live in mds_keys with scope `admin` (no table of their own): only their
 * SHA-256 hash is stored, the token is shown once, and they are neither API keys (the keyring
 * refuses them) nor listed among them (KeyService skips them).
 */
export class AdminTokens {
  private readonly configured: Buffer | null;

  constructor(
    private readonly store: Pick<Store, 'keys'>,
    configuredToken?: string,
  ) {
    this.configured = configuredToken ? digest(configuredToken) : null;
  }

  /** MDS_ADMIN_TOKEN (compared in constant time), or an admin token that is not revoked. */
  async verify(presented: string): Promise<boolean> {
    if (this.configured && timingSafeEqual(digest(presented), this.configured)) return true;
    // Not shaped like one (or a wrong check sum): refused without a database lookup.
    if (managedKeyScope(presented) !== 'admin') return false;
    const rec = await this.store.keys.findKeyByHash(hashKey(presented));
    return rec !== null && rec.scope === 'admin' && rec.revoked_at === null;
  }

  /** A new admin token, returned this once. Unless `keep`, every earlier one is revoked (rotation). */
  async create(
    opts: { name?: string; keep?: boolean } = {},
  ): Promise<{ token: string; id: string; revoked: number }> {
    let revoked = 0;
    const now = new Date().toISOString();
    if (!opts.keep) {
      for (const k of await this.store.keys.listKeys()) {
        if (k.scope !== 'admin' || k.revoked_at !== null) continue;
        await this.store.keys.revokeKey(k.id, now);
        revoked++;
      }
    }
    const token = generateKey('admin');
    const record: ApiKeyRecord = {
      id: newKeyId(),
      name: opts.name ?? 'admin token',
      scope: 'admin',
      prefix: token.slice(0, DISPLAY_PREFIX_LENGTH),
      hash: hashKey(token),
      rate_per_minute: null,
      daily_quota: null,
      created_at: now,
      last_used_at: null,
      revoked_at: null,
    };
    await this.store.keys.insertKey(record);
    return { token, id: record.id, revoked };
  }
}
