/**
 * What the query and admin clients share: a refused call as an error, and the base URL and
 * fetch every call goes through.
 */

/** A refused call: HTTP status, the body's code (else the status) and message, the body as sent. */
export class ServiceError<B = unknown> extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly body: B,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = new.target.name;
  }
}

export interface ServiceClientOptions {
  baseUrl: string;
  fetch?: typeof fetch;
}

export abstract class ServiceClient {
  /** The base URL without its trailing slashes. */
  protected readonly base: string;
  protected readonly fetchImpl: typeof fetch;

  protected constructor(opts: ServiceClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = opts.fetch ?? fetch;
  }
}
