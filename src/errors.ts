/**
 * Every error code the service answers with, its HTTP status and its default message.
 * One table: the docs (docs/errors.md) are checked against it by a test.
 */
export const ERRORS = {
  4001: { status: 400, message: 'invalid request' },
  4002: { status: 400, message: 'the request body is not valid UTF-8' },
  4005: { status: 400, message: 'as_of is earlier than the revision retention horizon' },
  4006: { status: 400, message: 'date_from is after date_to' },
  4007: { status: 400, message: 'no such source; a stored source differs only in case' },
  4008: { status: 400, message: 'not a known spelling of a code' },
  4010: { status: 401, message: 'missing API key header' },
  4012: { status: 401, message: 'invalid API key' },
  4030: { status: 403, message: 'rate limit exceeded' },
  4031: { status: 403, message: 'daily quota exhausted' },
  4040: { status: 404, message: 'batch not found' },
  4041: { status: 404, message: 'not found' },
  4050: { status: 405, message: 'method not allowed' },
  4080: { status: 408, message: 'request not received in time' },
  4090: { status: 409, message: 'batch_id already used for different content' },
  4091: { status: 409, message: 'batch is being processed; retry later' },
  4092: { status: 409, message: 'revert conflicts with a later batch' },
  4093: { status: 409, message: 'batch cannot be reverted: the values it replaced are not kept' },
  4100: { status: 410, message: 'since is older than the change feed keeps' },
  4130: { status: 413, message: 'request body too large' },
  4131: { status: 413, message: 'too many tool calls in one MCP batch' },
  4150: { status: 415, message: 'content type must be application/json' },
  4151: { status: 415, message: 'unsupported Content-Encoding; send gzip, deflate or none' },
  4220: { status: 422, message: 'checksum mismatch' },
  4310: { status: 431, message: 'request headers too large' },
  4221: { status: 422, message: 'every record was rejected' },
  4290: { status: 429, message: 'too many failed authentication attempts' },
  4291: { status: 429, message: 'too many exports at once for this key' },
  4292: { status: 429, message: 'too many MCP tool calls at once for this key' },
  4293: { status: 429, message: 'too many open change streams for this key' },
  5031: { status: 503, message: 'the server is running as many exports as it may; retry later' },
  5032: { status: 503, message: 'too much batch data in flight on this server; retry later' },
  5033: { status: 503, message: 'the server is answering as many MCP tool calls as it may; retry later' },
  5000: { status: 500, message: 'internal server error' },
  5030: { status: 503, message: 'service unavailable; retry later' },
  5040: { status: 504, message: 'the query ran longer than its time limit (MDS_QUERY_TIMEOUT_MS)' },
} as const satisfies Record<number, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** Success codes that are not 0: a partial ingest. */
export const PARTIAL_CODE = 2070;

/** A client-facing error: code from the table, optional detail message and extra body fields. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryAfter: number | null;
  readonly extra: Readonly<Record<string, unknown>>;

  constructor(
    code: ErrorCode,
    message?: string,
    opts: { retryAfter?: number; extra?: Record<string, unknown> } = {},
  ) {
    super(message ?? ERRORS[code].message);
    this.code = code;
    this.status = ERRORS[code].status;
    this.retryAfter = opts.retryAfter ?? null;
    this.extra = opts.extra ?? {};
  }
}

export const invalid = (message: string, extra?: Record<string, unknown>): AppError =>
  new AppError(4001, message, extra ? { extra } : {});
