import type { Config } from '../config.js';
import { splitKeys } from '../config.js';
import { AppError } from '../errors.js';
import type { Store } from '../storage/store.js';
import type { KeyScope } from '../model/keys.js';
import { hashKey, managedKeyScope, sameHash } from './api-key-format.js';

export interface Principal {
  /** Key id (`static:<hash prefix>` for keys from the environment). */
  id: string;
  name: string;
  scope: KeyScope;
  ratePerMinute: number | null;
  dailyQuota: number | null;
}

/** Keys from the environment have no row in the store (no usage statistics, no last_used_at). */
export const isStaticKey = (p: Principal): boolean => p.id.startsWith('static:');

/** How long a key lookup is trusted: revocations and limit changes apply within this (decisions: 2 s). */
const CACHE_TTL_MS = 1000;
const CACHE_MAX = 50_000;
/**
 * How long an expired lookup's refresh is awaited before the expired answer is used, and how
 * long past its expiry an answer may be used while its refresh has not come back (a database
 * that does not answer: a frozen primary). Nothing can change a key meanwhile, since a change
 * needs the same database, so a known key keeps working through an outage instead of every
 * request waiting out the connect timeout; a revocation still applies within TTL + REFRESH_WAIT_MS
 * while the database answers.
 */
const REFRESH_WAIT_MS = 250;
const STALE_MAX_MS = 60_000;

/** The presented header as a key: 4010 when missing, 4012 when repeated. */
function presentedKey(presented: string | string[] | undefined): string {
  if (presented === undefined || presented === '') throw new AppError(4010);
  if (typeof presented !== 'string') throw new AppError(4012);
  return presented;
}

/**
 * Resolves a presented key to a principal of the wanted scope. Static keys come from
 * MDS_QUERY_KEYS / MDS_INGEST_KEYS; managed keys from the store (by hash), cached for one
 * second. Unknown, revoked, malformed and wrong-scope keys all answer the same 401 / 4012.
 */
export class KeyRing {
  private readonly statics: { hash: string; principal: Principal }[] = [];
  private readonly cache = new Map<string, { at: number; principal: Principal | null }>();
  /** Refreshes of managed keys in flight, by hash: one per key, however many requests ask. */
  private readonly refreshing = new Map<string, Promise<Principal | null>>();
  /**
   * Keys already resolved, by the presented string, so a request with a known key computes no
   * SHA-256. Only keys that resolved to a principal (so its size is bounded by the real keys in
   * use); static keys never expire, managed ones after CACHE_TTL_MS like the lookup cache.
   */
  private readonly known = new Map<string, { until: number; principal: Principal }>();

  constructor(
    private readonly store: Pick<Store, 'keys'>,
    config: Pick<
      Config,
      'MDS_QUERY_KEYS' | 'MDS_INGEST_KEYS' | 'MDS_STATIC_RATE_PER_MINUTE' | 'MDS_STATIC_DAILY_QUOTA'
    >,
  ) {
    for (const [scope, list] of [
      ['query', config.MDS_QUERY_KEYS],
      ['ingest', config.MDS_INGEST_KEYS],
    ] as const) {
      for (const key of splitKeys(list)) {
        const hash = hashKey(key);
        this.statics.push({
          hash,
          principal: {
            id: `static:${hash.slice(0, 12)}`,
            name: `static ${scope} key`,
            scope,
            ratePerMinute: config.MDS_STATIC_RATE_PER_MINUTE ?? null,
            dailyQuota: config.MDS_STATIC_DAILY_QUOTA ?? null,
          },
        });
      }
    }
  }

  /** Throws 401 / 4010 (missing) or 401 / 4012 (anything else that is not a key of this scope). */
  async authenticate(scope: KeyScope, presented: string | string[] | undefined): Promise<Principal> {
    const key = presentedKey(presented);
    const found = this.knownPrincipal(key) ?? (await this.lookup(key));
    if (!found || found.scope !== scope) throw new AppError(4012);
    return found;
  }

  /**
   * authenticate() without I/O or hashing, for keys resolved within their TTL; undefined when
   * authenticate() must be called. Throws what authenticate() would.
   */
  authenticateKnown(scope: KeyScope, presented: string | string[] | undefined): Principal | undefined {
    const principal = this.knownPrincipal(presentedKey(presented));
    if (principal !== undefined && principal.scope !== scope) throw new AppError(4012);
    return principal;
  }

  private knownPrincipal(key: string): Principal | undefined {
    const hit = this.known.get(key);
    if (hit === undefined || (hit.until !== Infinity && hit.until <= Date.now())) return undefined;
    return hit.principal;
  }

  private remember(key: string, until: number, principal: Principal | null): void {
    if (!principal) {
      this.known.delete(key);
      return;
    }
    if (this.known.size >= CACHE_MAX) this.known.clear();
    this.known.set(key, { until, principal });
  }

  private async lookup(key: string): Promise<Principal | null> {
    const hash = hashKey(key);
    // Every static key is compared, in constant time, whatever the key looks like.
    let found: Principal | null = null;
    for (const s of this.statics) if (sameHash(s.hash, hash)) found = s.principal;
    if (found) {
      this.remember(key, Infinity, found);
      return found;
    }
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && now - hit.at < CACHE_TTL_MS) {
      this.remember(key, hit.at + CACHE_TTL_MS, hit.principal);
      return hit.principal;
    }
    if (managedKeyScope(key) === null) {
      this.cacheLookup(key, hash, now, null);
      return null;
    }
    let refresh = this.refreshing.get(hash);
    if (!refresh) {
      refresh = this.fetch(key, hash, now).finally(() => this.refreshing.delete(hash));
      this.refreshing.set(hash, refresh);
    }
    if (!hit || now - hit.at >= CACHE_TTL_MS + STALE_MAX_MS) return refresh;
    // An answer known before: the refresh, if it comes soon, else the last answer (it goes on).
    const stale = hit.principal;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Principal | null>((resolve) => {
      timer = setTimeout(() => resolve(stale), REFRESH_WAIT_MS);
    });
    return Promise.race([refresh.catch(() => stale), late]).finally(() => clearTimeout(timer));
  }

  /** The store's answer for a managed key, cached (a failed lookup leaves the last answer). */
  private async fetch(key: string, hash: string, now: number): Promise<Principal | null> {
    const rec = await this.store.keys.findKeyByHash(hash);
    let principal: Principal | null = null;
    // An admin token is no API key (access/admin-tokens.ts).
    if (rec && rec.revoked_at === null && rec.scope !== 'admin') {
      principal = {
        id: rec.id,
        name: rec.name,
        scope: rec.scope,
        ratePerMinute: rec.rate_per_minute,
        dailyQuota: rec.daily_quota,
      };
    }
    this.cacheLookup(key, hash, now, principal);
    return principal;
  }

  private cacheLookup(key: string, hash: string, now: number, principal: Principal | null): void {
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(hash, { at: now, principal });
    this.remember(key, now + CACHE_TTL_MS, principal);
  }
}
