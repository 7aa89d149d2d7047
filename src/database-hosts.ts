/**
 * DATABASE_URL naming several PostgreSQL hosts, libpq's way
 * (`postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write`). pg has no multi-host
 * URLs, so they are parsed here: checked with the rest of the configuration at start-up
 * (config.ts), and used by storage/postgres/primary-hosts.ts to find the primary.
 */

export interface Host {
  host: string;
  port: number;
}

export interface HostList {
  hosts: Host[];
  /** The URL with `h` as its only host and what pg does not know removed. */
  urlFor(h: Host): string;
}

/** What `target_session_attrs` may say when several hosts are given: all mean "the primary". */
const PRIMARY_ATTRS = new Set(['read-write', 'primary']);

/**
 * The hosts of a postgres:// URL (one or more, comma-separated, each `host[:port]`, IPv6 in
 * brackets). Several hosts need `target_session_attrs` unset, `read-write` or `primary`: the
 * service writes, so it always connects to the primary.
 */
export function parseHosts(url: string): HostList {
  const m = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/.exec(url);
  if (!m) return { hosts: [], urlFor: () => url };
  const [, scheme = '', auth, hostPart = '', rest = ''] = m;
  const [path = '', query = ''] = rest.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  const attrs = params.get('target_session_attrs');
  const hosts = hostPart.split(',').map((h): Host => {
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(h);
    if (v6) return { host: v6[1] ?? '', port: Number(v6[2] ?? 5432) };
    const [host = '', port] = h.split(':');
    return { host, port: Number(port ?? 5432) };
  });
  if (hosts.length > 1 && attrs !== null && !PRIMARY_ATTRS.has(attrs)) {
    throw new Error(
      `several hosts with target_session_attrs=${attrs}: the service writes, so it ` +
        'connects to the primary; leave target_session_attrs out or set it to read-write',
    );
  }
  for (const h of hosts) {
    if (h.host === '' || !Number.isInteger(h.port) || h.port < 1 || h.port > 65535) {
      throw new Error(`a host that is not host[:port] in "${hostPart}"`);
    }
  }
  params.delete('target_session_attrs');
  const q = params.toString();
  const urlFor = (h: Host): string =>
    `${scheme}${auth !== undefined ? `${auth}@` : ''}${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}` +
    `${path}${q ? `?${q}` : ''}`;
  return { hosts, urlFor };
}
