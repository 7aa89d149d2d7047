import { ENDPOINT_PATHS, type Endpoints } from './types.generated.js';
import type { PageMeta } from '../contract/envelope.js';
import type { EXPORT_FORMATS } from '../export/export-formats.js';
import { ServiceClient, type ServiceClientOptions, ServiceError } from './service-client.js';

export type { Endpoints } from './types.generated.js';
export * from './types.generated.js';

/**
 * A typed client of the query API. Types come from `types.generated.ts`, which is generated
 * from the service's OpenAPI document (and checked against it by a test):
 *
 *   const mds = new QueryClient({ baseUrl: 'http://127.0.0.1:8080', key: process.env.Q_API_KEY! });
 *   const page = await mds.query('etf_daily', { code: '510300', fields: ['date', 'close'] });
 *   page.data[0].close; // number — and only date and close are in the type
 *   for await (const row of mds.iterate('etf_daily', { code: '510300' })) { … } // keyset paging
 */

export type DatasetName = keyof Endpoints;

type Formats = typeof EXPORT_FORMATS;
/** The export formats answered as text, a row a line (their container is `lines`): CSV, NDJSON. */
export type TextFormat = {
  [F in keyof Formats]: Formats[F]['container'] extends 'lines' ? F : never;
}[keyof Formats];
export type RowOf<D extends DatasetName> = Endpoints[D]['row'];
export type ParamsOf<D extends DatasetName> = Endpoints[D]['params'];

export type { PageMeta };

/** One revision of GET /api/v1/revisions/{dataset} (docs/point-in-time.md). */
export interface Revision<R> {
  op: 'insert' | 'update' | 'delete';
  /** The batch that made the change; `revert:<id>` for a revert. */
  batch_id: string;
  /** The batch's processed_at. */
  valid_from: string;
  /** valid_from of the key's next revision; null while current. */
  valid_to: string | null;
  /** The row after the change (for a delete: the values it had). */
  row: R;
}

/** Parameters of the revision trail: the endpoint's exact and date filters, and its own. */
export type RevisionParamsOf<D extends DatasetName> = Omit<
  ParamsOf<D>,
  'sort' | 'order' | 'fields' | 'as_of'
> & {
  batch_id?: string;
  /** valid_from ≥ since */
  since?: string | Date;
  /** valid_from ≤ until */
  until?: string | Date;
};

export interface Page<R> {
  code: number;
  message: string;
  data: R[];
  meta: PageMeta;
  /** The response's ETag: pass it as `ifNoneMatch` to skip unchanged data. */
  etag: string | null;
}

/** A non-success answer of the service: HTTP status, the envelope's code and message. */
export class QueryError extends ServiceError {
  constructor(
    status: number,
    code: number,
    message: string,
    body: unknown,
    /** Seconds to wait before retrying (403 rate limit, 503), when the service said. */
    readonly retryAfter: number | null,
  ) {
    super(status, code, message, body);
  }
}

export interface QueryClientOptions extends ServiceClientOptions {
  /** The Q-API-KEY. */
  key: string;
}

/** The selected row type: all fields, or only those named in `fields`. */
type Selected<D extends DatasetName, F> = F extends readonly (infer K extends keyof RowOf<D>)[]
  ? Pick<RowOf<D>, K>
  : RowOf<D>;

export class QueryClient extends ServiceClient {
  constructor(private readonly opts: QueryClientOptions) {
    super(opts);
  }

  /** The URL of a query (also usable with curl or a browser). */
  url<D extends DatasetName>(dataset: D, params: ParamsOf<D> = {}, format?: TextFormat): string {
    const path = ENDPOINT_PATHS[dataset];
    if (!path) throw new Error(`unknown dataset ${String(dataset)}`);
    return this.withParams(path, params as Record<string, unknown>, format);
  }

  /** The URL of a dataset's revision trail. */
  revisionsUrl<D extends DatasetName>(
    dataset: D,
    params: RevisionParamsOf<D> = {} as RevisionParamsOf<D>,
  ): string {
    if (!ENDPOINT_PATHS[dataset]) throw new Error(`unknown dataset ${String(dataset)}`);
    return this.withParams(`/api/v1/revisions/${dataset}`, params as Record<string, unknown>);
  }

  private withParams(path: string, params: Record<string, unknown>, format?: TextFormat): string {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined || v === null) continue;
      // A list: `fields` is one comma list; an exact filter's values are repeated (any matches).
      if (Array.isArray(v) && k !== 'fields') for (const x of v as unknown[]) qs.append(k, String(x));
      else qs.set(k, v instanceof Date ? v.toISOString() : Array.isArray(v) ? v.join(',') : String(v));
    }
    if (format) qs.set('format', format);
    const q = qs.toString();
    return `${this.base}${path}${q ? `?${q}` : ''}`;
  }

  private async request(url: string, headers: Record<string, string> = {}): Promise<Response> {
    const res = await this.fetchImpl(url, { headers: { 'q-api-key': this.opts.key, ...headers } });
    if (res.status === 304 || res.ok) return res;
    const text = await res.text();
    let body: unknown = text;
    let code = res.status;
    let message = text.slice(0, 300);
    try {
      body = JSON.parse(text);
      const b = body as { code?: unknown; message?: unknown };
      if (typeof b.code === 'number') code = b.code;
      if (typeof b.message === 'string') message = b.message;
    } catch {
      // Not JSON (a proxy's page): keep the text.
    }
    const ra = res.headers.get('retry-after');
    throw new QueryError(res.status, code, message, body, ra && /^\d+$/.test(ra) ? Number(ra) : null);
  }

  private async page<R>(url: string, etag?: string): Promise<Page<R> | null> {
    const res = await this.request(url, etag ? { 'if-none-match': etag } : {});
    if (res.status === 304) return null;
    const body = (await res.json()) as Omit<Page<R>, 'etag'>;
    return { ...body, etag: res.headers.get('etag') };
  }

  /** One page of rows; with `fields`, the row type holds only those fields. */
  async query<D extends DatasetName, P extends ParamsOf<D>>(
    dataset: D,
    params?: P,
  ): Promise<Page<Selected<D, P extends { fields: infer F } ? F : undefined>>> {
    const page = await this.page<Selected<D, P extends { fields: infer F } ? F : undefined>>(
      this.url(dataset, params),
    );
    if (!page) throw new QueryError(304, 0, 'not modified', null, null);
    return page;
  }

  /** Like query(), but null when the data has not changed since `etag` (HTTP 304). */
  async queryIfChanged<D extends DatasetName, P extends ParamsOf<D>>(
    dataset: D,
    etag: string,
    params?: P,
  ): Promise<Page<Selected<D, P extends { fields: infer F } ? F : undefined>> | null> {
    return this.page(this.url(dataset, params), etag);
  }

  /** Every row of a filter, page by page with keyset cursors (constant cost per page). */
  async *iterate<D extends DatasetName, P extends Omit<ParamsOf<D>, 'cursor' | 'offset'>>(
    dataset: D,
    params?: P,
  ): AsyncGenerator<Selected<D, P extends { fields: infer F } ? F : undefined>> {
    let cursor: string | null = null;
    const base = { limit: 1000, ...(params ?? {}) } as ParamsOf<D>;
    do {
      const page: Page<Selected<D, P extends { fields: infer F } ? F : undefined>> = await this.query(
        dataset,
        (cursor === null ? base : { ...base, cursor }) as P & ParamsOf<D>,
      );
      yield* page.data;
      cursor = page.meta.next_cursor;
    } while (cursor !== null);
  }

  /** One page of a dataset's revision trail (by valid_from, then the key). */
  async revisions<D extends DatasetName>(
    dataset: D,
    params?: RevisionParamsOf<D>,
  ): Promise<Page<Revision<RowOf<D>>>> {
    const page = await this.page<Revision<RowOf<D>>>(this.revisionsUrl(dataset, params));
    if (!page) throw new QueryError(304, 0, 'not modified', null, null);
    return page;
  }

  /** Every revision of a filter, page by page with keyset cursors. */
  async *iterateRevisions<D extends DatasetName>(
    dataset: D,
    params?: Omit<RevisionParamsOf<D>, 'cursor' | 'offset'>,
  ): AsyncGenerator<Revision<RowOf<D>>> {
    let cursor: string | null = null;
    const base = { limit: 1000, ...(params ?? {}) } as RevisionParamsOf<D>;
    do {
      const page: Page<Revision<RowOf<D>>> = await this.revisions(
        dataset,
        cursor === null ? base : { ...base, cursor },
      );
      yield* page.data;
      cursor = page.meta.next_cursor;
    } while (cursor !== null);
  }

  /** The whole result of a filter as text (CSV with its header row, NDJSON), streamed by the service. */
  async exportText<D extends DatasetName>(
    dataset: D,
    format: TextFormat,
    params?: Omit<ParamsOf<D>, 'limit' | 'offset' | 'cursor'>,
  ): Promise<string> {
    const res = await this.request(this.url(dataset, params as ParamsOf<D>, format));
    return res.text();
  }
}
export { AdminClient, AdminError, type RevertAnswer } from './admin-client.js';
export { ServiceError } from './service-client.js';
