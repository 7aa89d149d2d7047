import type { Db, ReadDb } from './db.js';
import { KEY_COLUMNS } from './internal-tables.js';
import { keyFromRow } from './row-mapping.js';
import { join, raw, sql, type Sql } from './sql.js';
import type { KeyStore } from './store.js';
import type { ApiKeyRecord, KeyPatch, UsageEntry } from '../model/keys.js';

/** API keys (mds_keys) and their request counts per hour (mds_key_usage). */
export class SqlKeyStore implements KeyStore {
  /** `reads`: lookups (PostgreSQL with replicas: the primary, else a replica while it is down). */
  constructor(
    private readonly db: Db,
    private readonly reads: ReadDb = db,
  ) {}

  async insertKey(key: ApiKeyRecord): Promise<void> {
    const values = KEY_COLUMNS.map((c) => sql`${key[c]}`);
    await this.db.run(sql`INSERT INTO mds_keys (${raw(KEY_COLUMNS.join(', '))}) VALUES (${join(values)})`);
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return (await this.reads.rows(sql`SELECT * FROM mds_keys ORDER BY created_at, id`)).map(keyFromRow);
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    const [r] = await this.reads.rows(sql`SELECT * FROM mds_keys WHERE id = ${id}`);
    return r ? keyFromRow(r) : null;
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    const [r] = await this.reads.rows(sql`SELECT * FROM mds_keys WHERE hash = ${hash}`);
    return r ? keyFromRow(r) : null;
  }

  async updateKey(id: string, patch: KeyPatch): Promise<ApiKeyRecord | null> {
    const sets: Sql[] = [];
    for (const k of ['name', 'rate_per_minute', 'daily_quota'] as const) {
      if (patch[k] !== undefined) sets.push(sql`${raw(k)} = ${patch[k] ?? null}`);
    }
    if (sets.length) await this.db.run(sql`UPDATE mds_keys SET ${join(sets)} WHERE id = ${id}`);
    return this.getKey(id);
  }

  async revokeKey(id: string, at: string): Promise<ApiKeyRecord | null> {
    await this.db.run(sql`UPDATE mds_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`);
    return this.getKey(id);
  }

  /** Records last use and adds request counts per key and UTC hour (bucket `YYYY-MM-DDTHH`). */
  async recordUsage(entries: readonly UsageEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db.transaction(function* (tx) {
      for (const e of entries) {
        yield* tx.run(
          sql`INSERT INTO mds_key_usage (key_id, hour, count) VALUES (${e.keyId}, ${e.hour}, ${e.count})
             ON CONFLICT (key_id, hour) DO UPDATE SET count = mds_key_usage.count + excluded.count`,
        );
        yield* tx.run(
          sql`UPDATE mds_keys SET last_used_at = ${e.lastUsed} WHERE id = ${e.keyId} AND (last_used_at IS NULL OR last_used_at < ${e.lastUsed})`,
        );
      }
    });
  }

  async usage(since: string): Promise<{ key_id: string; hour: string; count: number }[]> {
    const rows = await this.reads.rows(
      sql`SELECT key_id, hour, count FROM mds_key_usage WHERE hour >= ${since} ORDER BY hour, key_id`,
    );
    return rows.map((r) => ({ key_id: String(r.key_id), hour: String(r.hour), count: Number(r.count) }));
  }
}
