import pg from 'pg';
import type { Host, HostList } from '../../database-hosts.js';

/**
 * DATABASE_URL naming several PostgreSQL hosts, libpq's way
 * (`postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write`): the service writes to
 * the one that is the primary (not in recovery) and, after a failover, finds the new one without
 * a restart (docs/deployment.md "Failover"). pg has no multi-host URLs, so the hosts are parsed
 * here and each connection the pool opens is pointed at the primary last found.
 */

/** What the locator may say of its hosts, for /health, /metrics and logs. */
export interface PrimaryState {
  host: string;
  /** Primary switches seen by this process since it started. */
  switches: number;
}

/**
 * A connection of its own for one check of a server, outside the pool: connecting and each
 * answer bounded by `timeoutMs`, errors kept from crashing the process.
 */
export function checkClient(url: string, timeoutMs: number): pg.Client {
  const c = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    application_name: 'market-data-service',
  } as pg.ClientConfig);
  c.on('error', () => {});
  return c;
}

/** A connection the locator may have to close: pg's Client at run time. */
interface Closable {
  connection: { stream: { destroy(err?: Error): void } };
  once(event: 'end', fn: () => void): unknown;
}

/**
 * Which of several hosts is the primary. Asked again (`suspect`) whenever a statement fails as a
 * lost or read-only connection would after a failover, and every `watchMs` (the current host
 * asked whether it is still the primary: a frozen one fails no statement, it only never
 * answers). One search at a time, each host asked `pg_is_in_recovery()` on a connection of its
 * own within the connect timeout, the last primary first; only a host that says it is the primary
 * is switched to. A switch moves `generation` on and closes every connection opened to an older
 * one, idle or in a statement: a statement on a frozen primary would otherwise wait out its own
 * timeout, and one on a demoted primary can only fail. Its request is answered 503 with
 * Retry-After, and the retry reaches the new primary.
 */
export class PrimaryLocator {
  private index = 0;
  generation = 0;
  private switches = 0;
  private searching: Promise<void> | null = null;
  /** When the last search ended (ms): a burst of failures searches once, not once each. */
  private searchedAt = -Infinity;
  private readonly open = new Map<Closable, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly list: HostList,
    private readonly connectTimeoutMs: number,
    private readonly watchMs: number,
    /** Least ms between two searches. */
    private readonly spacingMs = 250,
  ) {}

  get current(): Host {
    return this.list.hosts[this.index] as Host;
  }

  /** The URL of the primary last found. */
  url(): string {
    return this.list.urlFor(this.current);
  }

  state(): PrimaryState {
    const h = this.current;
    return { host: `${h.host}:${h.port}`, switches: this.switches };
  }

  /** A connection opened to the current primary, closed if the primary moves. */
  attach(c: Closable): void {
    this.open.set(c, this.generation);
    c.once('end', () => this.open.delete(c));
  }

  /** Starts the periodic check (not keeping the process alive). */
  watch(): void {
    if (this.timer || this.watchMs <= 0) return;
    this.timer = setInterval(() => void this.check(), this.watchMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async check(): Promise<void> {
    if (this.searching) return;
    if (!(await this.isPrimary(this.current))) await this.suspect();
  }

  /** Starts a search unless one runs or (unless `now`) just ran; resolves when it ends. */
  suspect(now = false): Promise<void> {
    if (this.searching) return this.searching;
    if (!now && Date.now() - this.searchedAt < this.spacingMs) return Promise.resolve();
    this.searching = this.search().finally(() => {
      this.searching = null;
      this.searchedAt = Date.now();
    });
    return this.searching;
  }

  private async search(): Promise<void> {
    const n = this.list.hosts.length;
    for (let k = 0; k < n; k++) {
      const i = (this.index + k) % n;
      if (!(await this.isPrimary(this.list.hosts[i] as Host))) continue;
      if (i !== this.index) this.switchTo(i);
      return;
    }
  }

  private switchTo(i: number): void {
    this.index = i;
    this.generation++;
    this.switches++;
    for (const [c, g] of this.open) {
      if (g >= this.generation) continue;
      this.open.delete(c);
      c.connection.stream.destroy(new Error('Connection terminated: the primary moved to another host'));
    }
  }

  private async isPrimary(h: Host): Promise<boolean> {
    const c = checkClient(this.list.urlFor(h), this.connectTimeoutMs);
    try {
      await c.connect();
      const r = await c.query('SELECT pg_is_in_recovery() AS standby');
      void c.end().catch(() => {});
      return (r.rows[0] as { standby?: unknown } | undefined)?.standby === false;
    } catch {
      // A server that did not answer would not answer the Terminate either: no waiting for it.
      (c as unknown as Closable).connection.stream.destroy();
      return false;
    }
  }
}
