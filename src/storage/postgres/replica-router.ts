import type { DbRow, ReadDb } from '../db.js';
import { lsnValue, readSession, type ReadNeeds } from '../read-consistency.js';
import { sql, type Sql } from '../sql.js';
import { StoreUnavailableError, type DatabaseStats } from '../store.js';
import type { PostgresDb } from './postgres-db.js';

export interface RouterOptions {
  /** A replica further behind than this (ms) serves no reads. */
  maxLagMs: number;
  /** ms between reads of the primary's and each replica's WAL position. */
  checkMs: number;
  /** ms a read with a token waits for a replica to replay that far before going to the primary. */
  readAfterWaitMs: number;
}

/** One database reads may go to, and what the last checks said of it. */
interface Target {
  readonly name: string;
  readonly db: PostgresDb;
  readonly primary: boolean;
  /** Answered its last check. */
  up: boolean;
  /** When a check last answered (ms): one that hangs (a frozen server, a pooler queueing) ages it. */
  answeredAt: number;
  /** A standby (pg_is_in_recovery): a read URL that is not one serves nothing. */
  standby: boolean;
  /** Every transaction the primary committed before this instant (ms) is replayed here. */
  coveredUntil: number;
  /**
   * Every transaction that began before this instant (ms) has its COMMIT replayed here, so every
   * change known by then (a change's known instant is taken inside its transaction): what
   * `as_of` needs. At most coveredUntil; behind it by the longest write in flight at a sample.
   */
  committedUntil: number;
  /** The last check's WAL position (replayed on a replica, written on the primary). */
  lsn: string | null;
  checking: boolean;
  /** Reads served, for /metrics. */
  reads: number;
}

/** Errors that say nothing about the replica's health: retried elsewhere, the replica kept. */
const TRANSIENT = new Set(['40001', '57014', '55P03', '40P01']);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Reads over streaming replicas (docs/deployment.md "What a read may see"). Every `checkMs` the
 * primary's WAL position is sampled with the time it was read before, and each replica's replay
 * position: a replica that has replayed past the sample taken at t holds every commit before t,
 * so its lag is now − the latest such t — a bound that an idle primary does not inflate. A read
 * request (read-consistency.ts) is pinned on its first statement to a replica that is up, within
 * MDS_REPLICA_MAX_LAG_MS and meets the request's needs (token, versions, as_of), else to the
 * primary; with the primary down, to any replica that answers. A replica failing under a read is
 * left for the next check and the read retried elsewhere.
 */
export class ReplicaRouter implements ReadDb {
  readonly backend = 'postgres' as const;
  readonly dialect;
  private readonly primary: Target;
  private readonly replicas: Target[];
  /**
   * The primary's positions, oldest first: the time before each was read, the WAL position, and
   * `begunBy`: every transaction begun before it had committed at or below that position.
   */
  private samples: { at: number; begunBy: number; lsn: bigint }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private turn = 0;

  constructor(
    primary: PostgresDb,
    replicas: readonly { name: string; db: PostgresDb }[],
    private readonly opts: RouterOptions,
  ) {
    this.dialect = primary.dialect;
    const target = (name: string, db: PostgresDb, isPrimary: boolean): Target => ({
      name,
      db,
      primary: isPrimary,
      up: isPrimary,
      answeredAt: isPrimary ? Date.now() : -Infinity,
      standby: !isPrimary,
      coveredUntil: -Infinity,
      committedUntil: -Infinity,
      lsn: null,
      checking: false,
      reads: 0,
    });
    this.primary = target('primary', primary, true);
    this.replicas = replicas.map((r) => target(r.name, r.db, false));
  }

  /** Starts the checks (the first at once). */
  start(): void {
    if (this.timer) return;
    void this.check();
    this.timer = setInterval(() => void this.check(), this.opts.checkMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One round of checks: the primary's position first, then every replica's. */
  async check(): Promise<void> {
    await this.checkPrimary();
    await Promise.all(this.replicas.map((r) => this.checkReplica(r)));
  }

  private async checkPrimary(): Promise<void> {
    const p = this.primary;
    if (p.checking) return;
    p.checking = true;
    // Taken before asking: a commit before `at` is at or below the position read after it.
    const at = Date.now();
    try {
      // Read before the position: a write in flight then (begun `age` ago) may commit after it,
      // so the sample vouches only for transactions begun before it (and 1 ms of clock rounding).
      const age = await p.db.oldestWriteAge();
      const lsn = await p.db.walPosition();
      p.up = true;
      p.answeredAt = Date.now();
      p.lsn = lsn;
      this.samples.push({ at, begunBy: at - age - 1, lsn: lsnValue(lsn) });
      // Older samples than the lag bound (and a round) are never the one a usable replica needs.
      const keepFrom = at - this.opts.maxLagMs - 2 * this.opts.checkMs;
      while (this.samples.length > 1 && (this.samples[0]?.at ?? at) < keepFrom) this.samples.shift();
    } catch {
      p.up = false;
    } finally {
      p.checking = false;
    }
  }

  private async checkReplica(r: Target): Promise<void> {
    if (r.checking) return;
    r.checking = true;
    try {
      const [row] = await r.db.rows(
        sql`SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn`,
      );
      r.up = true;
      r.answeredAt = Date.now();
      r.standby = row?.standby === true;
      r.lsn = typeof row?.lsn === 'string' ? row.lsn : null;
      if (r.lsn !== null) {
        const replayed = lsnValue(r.lsn);
        r.coveredUntil = Math.max(r.coveredUntil, this.coveredAt(replayed));
        r.committedUntil = Math.max(r.committedUntil, this.committedAt(replayed));
      }
    } catch {
      r.up = false;
    } finally {
      r.checking = false;
    }
  }

  /** The latest sample instant whose position is replayed at `replayed` (−∞: none). */
  private coveredAt(replayed: bigint): number {
    for (let i = this.samples.length - 1; i >= 0; i--) {
      const s = this.samples[i];
      if (s && s.lsn <= replayed) return s.at;
    }
    return -Infinity;
  }

  /** The latest `begunBy` of the samples whose position is replayed at `replayed` (−∞: none). */
  private committedAt(replayed: bigint): number {
    let best = -Infinity;
    for (const s of this.samples) if (s.lsn <= replayed && s.begunBy > best) best = s.begunBy;
    return best;
  }

  private lagOf(r: Target, now = Date.now()): number {
    return now - r.coveredUntil;
  }

  /** Up, and its last check answered within a few rounds. */
  private answering(t: Target, now: number): boolean {
    return t.up && now - t.answeredAt <= Math.max(1000, 3 * this.opts.checkMs);
  }

  /** Replicas that may serve a read now, in round-robin order. */
  private candidates(): Target[] {
    const now = Date.now();
    const primaryUp = this.answering(this.primary, now);
    const ok = this.replicas.filter(
      (r) => this.answering(r, now) && r.standby && (!primaryUp || this.lagOf(r, now) <= this.opts.maxLagMs),
    );
    if (ok.length < 2) return ok;
    const start = this.turn++ % ok.length;
    return [...ok.slice(start), ...ok.slice(0, start)];
  }

  /** Whether `r` meets the request's token and versions now, waiting for the token until `until`. */
  private async meets(r: Target, needs: ReadNeeds, until: number): Promise<boolean> {
    const names = [...needs.versions.keys()].join(',');
    for (;;) {
      const [row] = await r.db.rows(
        sql`SELECT pg_last_wal_replay_lsn()::text AS lsn,
          (SELECT coalesce(json_object_agg(dataset, version), '{}'::json) FROM mds_dataset_state
            WHERE dataset = ANY(string_to_array(${names}, ','))) AS versions`,
      );
      const have = (row?.versions ?? {}) as Record<string, unknown>;
      for (const [dataset, least] of needs.versions) {
        // Behind the version the client saw: waiting would rarely help; the primary has it.
        if (Number(have[dataset] ?? 0) < least) return false;
      }
      const lsn = typeof row?.lsn === 'string' ? row.lsn : null;
      if (needs.after === undefined || (lsn !== null && lsnValue(lsn) >= lsnValue(needs.after))) return true;
      if (Date.now() >= until) return false;
      await sleep(Math.min(20, Math.max(1, until - Date.now())));
    }
  }

  /** The database for a read with these needs (none: any usable replica). */
  private async choose(needs: ReadNeeds | undefined, skip?: Target): Promise<Target> {
    const until = Date.now() + this.opts.readAfterWaitMs;
    for (const r of this.candidates()) {
      if (r === skip) continue;
      // Every change known by T committed and replayed: a sample taken after T is not enough
      // while a change known before it had not committed yet.
      if (needs?.asOf !== undefined && !(r.committedUntil >= needs.asOf)) continue;
      if (needs && (needs.after !== undefined || needs.versions.size > 0)) {
        const ok = await this.meets(r, needs, until).catch(() => false);
        if (!ok) continue;
      }
      return r;
    }
    return this.primary;
  }

  /** Runs a read on the request's database (picked on its first read), once more elsewhere if it fails. */
  private async read<T>(run: (db: PostgresDb) => Promise<T>): Promise<T> {
    const session = readSession();
    let target = session?.pins.get(this) as Target | undefined;
    if (!target) {
      target = await this.choose(session?.needs);
      session?.pins.set(this, target);
    }
    const generation = this.primary.db.primaryGeneration;
    try {
      const out = await run(target.db);
      target.reads++;
      return out;
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      // A recovery conflict or a timeout says nothing of the database; anything else: down until
      // its next check says otherwise.
      const transient = TRANSIENT.has(err.condition);
      if (transient && target.primary) throw err;
      if (!transient) target.up = false;
      // The primary down: the read goes on from a replica that answers now, as it would after
      // the next check, rather than a 503 until then (choose() falls back to the primary: none).
      const next = await this.choose(session?.needs, target);
      if (next === target) {
        // No replica for it (the one promoted is none any more): with several hosts in
        // DATABASE_URL, once more on the primary if it has moved since the read began.
        if (!target.primary || !(await target.db.primaryMovedSince(generation))) throw err;
        target.up = true;
      }
      session?.pins.set(this, next);
      const out = await run(next.db);
      next.reads++;
      return out;
    }
  }

  rows(s: Sql, opts?: { prepared?: boolean }): Promise<DbRow[]> {
    return this.read((db) => db.rows(s, opts));
  }

  arrays(s: Sql, opts?: { prepared?: boolean }): Promise<unknown[][]> {
    return this.read((db) => db.arrays(s, opts));
  }

  values(s: Sql, opts?: { prepared?: boolean }): Promise<unknown[]> {
    return this.read((db) => db.values(s, opts));
  }

  /**
   * The primary's reads for what must be current (keys): the primary, or while it cannot answer,
   * a replica that does (nothing can change a key while the primary is down).
   */
  primaryFirst(): ReadDb {
    const replica = (): Target | undefined => {
      const now = Date.now();
      return this.replicas.find((x) => this.answering(x, now) && x.standby);
    };
    const fallback = async <T>(run: (db: PostgresDb) => Promise<T>): Promise<T> => {
      // The checks say the primary does not answer (frozen, gone): straight to a replica that
      // does, rather than wait out the connect timeout on every lookup.
      const known = !this.answering(this.primary, Date.now()) ? replica() : undefined;
      if (known) return run(known.db);
      try {
        return await run(this.primary.db);
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        const r = replica();
        if (!r) throw err;
        return run(r.db);
      }
    };
    return {
      backend: this.backend,
      dialect: this.dialect,
      rows: (s, o) => fallback((db) => db.rows(s, o)),
      arrays: (s, o) => fallback((db) => db.arrays(s, o)),
      values: (s, o) => fallback((db) => db.values(s, o)),
    };
  }

  /**
   * Whether reads can be served: the primary or a replica answers. All are asked at once and the
   * first answer is enough, so a frozen primary does not make /health wait out its timeout.
   */
  async ping(): Promise<void> {
    const standbys = this.replicas.filter((r) => r.standby).map((r) => r.db.ping());
    const primary = this.primary.db.ping();
    try {
      await Promise.any([primary, ...standbys]);
    } catch {
      // Every one failed: the primary's reason.
      await primary;
    }
  }

  stats(): DatabaseStats {
    const now = Date.now();
    const usable = new Set(this.candidates());
    return {
      primary: {
        up: this.answering(this.primary, now),
        reads: this.primary.reads,
        pool: this.primary.db.poolStats,
      },
      replicas: this.replicas.map((r) => ({
        name: r.name,
        up: this.answering(r, now) && r.standby,
        lagMs: Number.isFinite(r.coveredUntil) ? Math.max(0, this.lagOf(r, now)) : null,
        usable: usable.has(r),
        reads: r.reads,
        pool: r.db.poolStats,
      })),
    };
  }

  async close(): Promise<void> {
    this.stop();
    await Promise.all(this.replicas.map((r) => r.db.close()));
  }
}
