/**
 * The admin API calls of point in time (docs/point-in-time.md), with the admin token:
 *
 *   const admin = new AdminClient({ baseUrl: 'http://127.0.0.1:8080', token: process.env.MDS_ADMIN_TOKEN! });
 *   const r = await admin.revertBatch('etf-2024-03-01'); // { restored, updated, deleted, reverted_at }
 */

import { ServiceClient, type ServiceClientOptions, ServiceError } from './service-client.js';

export interface RevertAnswer {
  batch_id: string;
  dataset: string;
  reverted_at: string;
  /** Rows the batch deleted (full-snapshot prune) that came back. */
  restored: number;
  /** Rows the batch updated that got their earlier values back. */
  updated: number;
  /** Rows the batch inserted that were deleted. */
  deleted: number;
}

/** A refused admin call: HTTP status and the body's code, message and extra fields (e.g. conflicts). */
export class AdminError extends ServiceError<Record<string, unknown>> {}

export interface AdminClientOptions extends ServiceClientOptions {
  /** MDS_ADMIN_TOKEN. */
  token: string;
}

export class AdminClient extends ServiceClient {
  constructor(private readonly opts: AdminClientOptions) {
    super(opts);
  }

  private async call<T>(method: 'GET' | 'POST', path: string): Promise<T> {
    const res = await this.fetchImpl(`${this.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.opts.token}` },
    });
    const body = (await res.json()) as Record<string, unknown>;
    if (!res.ok) {
      throw new AdminError(
        res.status,
        typeof body.code === 'number' ? body.code : res.status,
        typeof body.message === 'string' ? body.message : res.statusText,
        body,
      );
    }
    return body.data as T;
  }

  /**
   * Puts back what a batch changed. Throws AdminError 409 / 4092 when a later batch changed
   * some of its rows (`body.conflicts`: up to 100 keys), 404 / 4040 for an unknown batch.
   */
  revertBatch(batchId: string): Promise<RevertAnswer> {
    return this.call('POST', `/admin/api/batches/${encodeURIComponent(batchId)}/revert`);
  }
}
