import type { Config } from '../config.js';
import { AppError, invalid } from '../errors.js';
import type { ApiKeyRecord, KeyPatch, KeyScope, Store } from '../storage/store.js';
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

export interface CreateKeyInput {
  scope?: unknown;
  name?: unknown;
  /** Absent: the configured default; null: no limit. */
  rate_per_minute?: unknown;
  daily_quota?: unknown;
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

const MAX_LIMIT = 1_000_000_000;
const MAX_NAME = 100;

export const keyView = (k: ApiKeyRecord): KeyView => ({
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

function limitValue(field: string, v: unknown): number | null {
  if (v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_LIMIT) {
    throw invalid(`${field} must be an integer from 1 to ${MAX_LIMIT}, or null for no limit`);
  }
  return v;
}

function nameValue(v: unknown): string {
  // Control characters would break the one-line-per-key listing.
  if (typeof v !== 'string' || v.trim() === '' || v.length > MAX_NAME || /\p{Cc}/u.test(v)) {
    throw invalid(
      `name must be a non-empty string of at most ${MAX_NAME} characters, without control characters`,
    );
  }
  return v.trim();
}

const asObject = (body: unknown): Record<string, unknown> => {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid('body must be a JSON object');
  return body as Record<string, unknown>;
};

function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0)
    throw invalid(`unknown field(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`);
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

  async create(input: CreateKeyInput): Promise<{ key: KeyView; secret: string }> {
    const body = asObject(input);
    onlyFields(body, ['scope', 'name', 'rate_per_minute', 'daily_quota']);
    if (body.scope !== 'query' && body.scope !== 'ingest') throw invalid('scope must be "query" or "ingest"');
    const scope: KeyScope = body.scope;
    const name = body.name === undefined ? `${scope} key` : nameValue(body.name);
    let rate: number | null;
    let quota: number | null;
    if (scope === 'ingest') {
      // Only the query interface is metered: a limit on an ingest key would silently do nothing.
      if (body.rate_per_minute != null || body.daily_quota != null)
        throw invalid('rate_per_minute and daily_quota apply to query keys only');
      rate = null;
      quota = null;
    } else {
      rate =
        body.rate_per_minute === undefined
          ? this.defaults.ratePerMinute
          : limitValue('rate_per_minute', body.rate_per_minute);
      quota =
        body.daily_quota === undefined
          ? this.defaults.dailyQuota
          : limitValue('daily_quota', body.daily_quota);
    }
    const secret = generateKey(scope);
    const record: ApiKeyRecord = {
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
    return (await this.store.keys.listKeys()).map(keyView);
  }

  async get(id: string): Promise<KeyView> {
    const k = await this.store.keys.getKey(id);
    if (!k) throw unknownKey(id);
    return keyView(k);
  }

  /** `null` clears a limit; absent fields are left as they are. */
  async update(id: string, input: unknown): Promise<KeyView> {
    const body = asObject(input);
    onlyFields(body, ['name', 'rate_per_minute', 'daily_quota']);
    const patch: KeyPatch = {};
    if (body.name !== undefined) patch.name = nameValue(body.name);
    if (body.rate_per_minute !== undefined)
      patch.rate_per_minute = limitValue('rate_per_minute', body.rate_per_minute);
    if (body.daily_quota !== undefined) patch.daily_quota = limitValue('daily_quota', body.daily_quota);
    const current = await this.store.keys.getKey(id);
    if (!current) throw unknownKey(id);
    if (current.scope === 'ingest' && (patch.rate_per_minute != null || patch.daily_quota != null))
      throw invalid('rate_per_minute and daily_quota apply to query keys only');
    const k = await this.store.keys.updateKey(id, patch);
    if (!k) throw unknownKey(id);
    return keyView(k);
  }

  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  async revoke(id: string): Promise<KeyView> {
    const k = await this.store.keys.revokeKey(id, new Date().toISOString());
    if (!k) throw unknownKey(id);
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
    const minute = limiter.peek ? await limiter.peek(ids) : new Map<string, number>();
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
