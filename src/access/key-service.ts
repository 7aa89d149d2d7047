import type { Config } from '../config.js';
import type { TObject } from '@sinclair/typebox';
import { AppError, invalid } from '../errors.js';
import { firstError } from '../contract/check.js';
import { KeyCreateSchema, KeyUpdateSchema, type KeyCreate, type KeyUpdate } from '../contract/admin.js';
import type { Store } from '../storage/store.js';
import type { ApiKeyRecord, KeyPatch, KeyScope } from '../model/keys.js';
import { isCleanText } from '../model/values.js';
import { DISPLAY_PREFIX_LENGTH, generateKey, hashKey, newKeyId } from './api-key-format.js';
import type { Limiter } from './limiter.js';
import { hourOf, type UsageRecorder } from './usage-recorder.js';

/** A key as shown to operators: everything but the hash. */
export interface KeyView {
  id: string;
  name: string;
  scope: KeyScope;
  prefix: string;
  rate_per_minute: number | null;
  daily_quota: number | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface KeyUsage {
  /** Requests served since 00:00 UTC. */
  today: number;
  /** Requests counted in the current clock minute (all instances when counters are in Redis). */
  this_minute: number;
  /** Requests in the last 60 minutes, estimated from hourly buckets (sliding-window estimate). */
  last_hour: number;
}

export interface KeyDefaults {
  /** Limits given to a new query key that does not name its own (null: none). */
  ratePerMinute: number | null;
  dailyQuota: number | null;
}

/** The defaults from configuration (0 means none). */
export const keyDefaults = (
  c: Pick<Config, 'MDS_DEFAULT_RATE_PER_MINUTE' | 'MDS_DEFAULT_DAILY_QUOTA'>,
): KeyDefaults => ({
  ratePerMinute: c.MDS_DEFAULT_RATE_PER_MINUTE || null,
  dailyQuota: c.MDS_DEFAULT_DAILY_QUOTA || null,
});

/** An API key, as opposed to an admin token (admin-tokens.ts), which this service never shows. */
type ApiKey = ApiKeyRecord & { scope: KeyScope };
const isApiKey = (k: ApiKeyRecord | null): k is ApiKey => k !== null && k.scope !== 'admin';

export const keyView = (k: ApiKey): KeyView => ({
  id: k.id,
  name: k.name,
  scope: k.scope,
  prefix: k.prefix,
  rate_per_minute: k.rate_per_minute,
  daily_quota: k.daily_quota,
  created_at: k.created_at,
  last_used_at: k.last_used_at,
  revoked_at: k.revoked_at,
});

/** A request body checked against its contract schema (contract/admin.ts): 400 / 4001 otherwise. */
function checked<T>(schema: TObject, body: unknown): T {
  const bad = firstError(schema, body);
  if (bad) throw invalid(bad.message);
  return body as T;
}

/**
 * Managed keys: create (the secret is returned once and only its hash is stored), list,
 * update limits, revoke. Shared by the `mds keys` command and the admin API, so both validate
 * alike. Changes reach every instance through the keyring's one-second cache.
 */
export class KeyService {
  constructor(
    private readonly store: Pick<Store, 'keys'>,
    private readonly defaults: KeyDefaults = { ratePerMinute: null, dailyQuota: null },
  ) {}

  async create(input: unknown): Promise<{ key: KeyView; secret: string }> {
    const body = checked<KeyCreate>(KeyCreateSchema, input);
    const scope: KeyScope = body.scope;
    const name = body.name === undefined ? `${scope} key` : body.name.trim();
    let rate: number | null;
    let quota: number | null;
    if (scope === 'ingest') {
      // Only the query interface is metered: a limit on an ingest key would silently do nothing.
      if (body.rate_per_minute != null || body.daily_quota != null)
        throw invalid('rate_per_minute and daily_quota apply to query keys only');
      rate = null;
      quota = null;
    } else {
      rate = body.rate_per_minute === undefined ? this.defaults.ratePerMinute : body.rate_per_minute;
      quota = body.daily_quota === undefined ? this.defaults.dailyQuota : body.daily_quota;
    }
    const secret = generateKey(scope);
    const record: ApiKey = {
      id: newKeyId(),
      name,
      scope,
      prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH),
      hash: hashKey(secret),
      rate_per_minute: rate,
      daily_quota: quota,
      created_at: new Date().toISOString(),
      last_used_at: null,
      revoked_at: null,
    };
    await this.store.keys.insertKey(record);
    return { key: keyView(record), secret };
  }

  async list(): Promise<KeyView[]> {
    return (await this.store.keys.listKeys()).filter(isApiKey).map(keyView);
  }

  /**
   * The stored key of an id. No key id holds a NUL or a lone surrogate (newKeyId), and
   * PostgreSQL cannot compare such text: no key, without asking the database (not a 500).
   */
  private stored(id: string): Promise<ApiKeyRecord | null> {
    return isCleanText(id) ? this.store.keys.getKey(id) : Promise.resolve(null);
  }

  async get(id: string): Promise<KeyView> {
    const k = await this.stored(id);
    if (!isApiKey(k)) throw unknownKey(id);
    return keyView(k);
  }

  /** `null` clears a limit; absent fields are left as they are. */
  async update(id: string, input: unknown): Promise<KeyView> {
    const body = checked<KeyUpdate>(KeyUpdateSchema, input);
    const patch: KeyPatch = {};
    if (body.name !== undefined) patch.name = body.name.trim();
    if (body.rate_per_minute !== undefined) patch.rate_per_minute = body.rate_per_minute;
    if (body.daily_quota !== undefined) patch.daily_quota = body.daily_quota;
    const current = await this.stored(id);
    if (!isApiKey(current)) throw unknownKey(id);
    if (current.scope === 'ingest' && (patch.rate_per_minute != null || patch.daily_quota != null))
      throw invalid('rate_per_minute and daily_quota apply to query keys only');
    const k = await this.store.keys.updateKey(id, patch);
    if (!isApiKey(k)) throw unknownKey(id);
    return keyView(k);
  }

  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  async revoke(id: string): Promise<KeyView> {
    if (!isApiKey(await this.stored(id))) throw unknownKey(id);
    const k = await this.store.keys.revokeKey(id, new Date().toISOString());
    if (!isApiKey(k)) throw unknownKey(id);
    return keyView(k);
  }

  /** Usage per key id: stored hourly counts (after flushing this instance's) plus the live minute. */
  async usage(
    ids: readonly string[],
    limiter: Limiter,
    recorder: UsageRecorder | null,
  ): Promise<Map<string, KeyUsage>> {
    await recorder?.flush();
    const now = Date.now();
    const today = new Date(now).toISOString().slice(0, 10);
    const thisHour = hourOf(now);
    const lastHour = hourOf(now - 3_600_000);
    const since = lastHour < `${today}T00` ? lastHour : `${today}T00`;
    const rows = await this.store.keys.usage(since);
    const minute = await limiter.peek(ids);
    const elapsed = (now % 3_600_000) / 3_600_000;
    const out = new Map<string, KeyUsage>();
    for (const id of ids) out.set(id, { today: 0, this_minute: minute.get(id) ?? 0, last_hour: 0 });
    const prev = new Map<string, number>();
    for (const r of rows) {
      const u = out.get(r.key_id);
      if (!u) continue;
      if (r.hour.startsWith(today)) u.today += r.count;
      if (r.hour === thisHour) u.last_hour += r.count;
      if (r.hour === lastHour) prev.set(r.key_id, r.count);
    }
    // The previous hour's share that still falls within the last 60 minutes, assuming an even spread.
    for (const [id, n] of prev) {
      const u = out.get(id);
      if (u) u.last_hour += Math.round(n * (1 - elapsed));
    }
    return out;
  }

  /** Usage rows of the last `hours` UTC hours (the current one included), oldest first. */
  async usageByHour(
    hours: number,
    recorder: UsageRecorder | null,
  ): Promise<{ key_id: string; hour: string; count: number }[]> {
    await recorder?.flush();
    return this.store.keys.usage(hourOf(Date.now() - (hours - 1) * 3_600_000));
  }
}

const unknownKey = (id: string): AppError => new AppError(4041, `unknown key id ${JSON.stringify(id)}`);
