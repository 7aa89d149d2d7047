// The admin API client. The token lives in memory and in sessionStorage (this tab only, gone
// when the tab closes); it is sent as `Authorization: Bearer`, never put in a URL.

// The admin API's answers as the contract declares them: types only (the type check reads them,
// the page loads nothing of src/contract).
/** @template {import('@sinclair/typebox').TSchema} S @typedef {import('@sinclair/typebox').Static<S>} Of */
/** @typedef {Of<typeof import('../../contract/admin.js').KeyWithUsageSchema>} Key */
/** @typedef {Of<typeof import('../../contract/admin.js').KeyCreatedSchema>} KeyCreated */
/** @typedef {Of<typeof import('../../contract/admin.js').UsageRowSchema>} UsageRow */
/** @typedef {Of<typeof import('../../contract/admin.js').CoverageRowSchema>} CoverageRow */
/** @typedef {Of<typeof import('../../contract/admin.js').DatasetInfoSchema>} DatasetInfo */
/** @typedef {Of<typeof import('../../contract/batch.js').BatchListItemSchema>} BatchListItem */
/** @typedef {Of<typeof import('../../contract/batch.js').BatchRecordSchema>} BatchRecord */
/** @typedef {Of<typeof import('../../contract/revisions.js').BatchChangesSchema>} BatchChanges */
/** @typedef {Of<typeof import('../../contract/quality.js').QualityRowSchema>} QualityRow */
/** @typedef {Of<typeof import('../../contract/quality.js').MinuteQualityRowSchema>} MinuteQualityRow */

/**
 * What main.js gives each view's mount function.
 * @typedef {object} ViewContext
 * @property {typeof api} api
 * @property {(options: DialogOptions) => Promise<boolean>} dialog
 * @property {(name: string, params?: Record<string, string>) => void} navigate
 * @property {URLSearchParams} params
 */

/**
 * The shared dialog's options (main.js `openDialog`).
 * @typedef {object} DialogOptions
 * @property {string} title
 * @property {Node | string} body
 * @property {string} [okText]
 * @property {boolean} [danger]
 * @property {(form: HTMLFormElement) => Promise<void>} [onOk]
 */

/** @typedef {{ refresh: () => Promise<void> }} View */

const STORAGE_KEY = 'mds.adminToken';
let token = readStored();

function readStored() {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled: memory only
  }
}

export function getToken() {
  return token;
}

/** @param {string | null} value */
export function setToken(value) {
  token = value;
  try {
    if (value === null) sessionStorage.removeItem(STORAGE_KEY);
    else sessionStorage.setItem(STORAGE_KEY, value);
  } catch {
    // storage disabled: the token stays in memory for this page only
  }
}

/** An answer other than 2xx, with the service's code and message. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {number} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }

  /** The token was refused (or none was configured on the server). */
  get unauthorized() {
    return this.status === 401;
  }
}

/** @type {(err: ApiError) => void} */
let onUnauthorized = () => {};
/**
 * Called when any request is refused with 401: the page signs out.
 * @param {(err: ApiError) => void} fn
 */
export function whenUnauthorized(fn) {
  onUnauthorized = fn;
}

/**
 * Calls /admin/api/<path>; resolves to the envelope's `data`, or throws ApiError. The caller
 * says which answer it expects (a cast to one of the types above): the path alone does not.
 * @param {string} path
 * @param {{ method?: string, body?: unknown, query?: Record<string, string | number | null | undefined>, quiet?: boolean }} [options]
 * @returns {Promise<unknown>}
 */
export async function api(path, { method = 'GET', body, query, quiet = false } = {}) {
  const url = new window.URL(`/admin/api/${path}`, window.location.origin);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 0, 'the service did not answer (is it running?)');
  }
  /** @type {{ code?: number, message?: string, data?: unknown } | null} */
  let payload = null;
  try {
    payload = await res.json();
  } catch {
    // not JSON (a proxy's error page): reported below by status
  }
  if (!res.ok) {
    const err = new ApiError(
      res.status,
      payload?.code ?? res.status,
      payload?.message ?? `HTTP ${res.status} ${res.statusText}`,
    );
    if (err.unauthorized && !quiet) onUnauthorized(err);
    throw err;
  }
  return payload?.data;
}

/**
 * Checks a token without keeping it: resolves if the admin API accepts it.
 * @param {string} candidate
 */
export async function verifyToken(candidate) {
  const previous = token;
  token = candidate;
  try {
    await api('batches', { query: { limit: 1 }, quiet: true });
  } finally {
    token = previous;
  }
}

/**
 * A view's reload: `load` fetches and keeps the view's data; what it throws stays in `failure`
 * (the view shows it instead of the data) until a load succeeds; then `render`.
 * @param {() => Promise<void>} load
 * @param {() => void} render
 */
export function reloader(load, render) {
  /** @type {{ failure: unknown, reload: () => Promise<void> }} */
  const state = {
    failure: null,
    reload: async () => {
      try {
        await load();
        state.failure = null;
      } catch (err) {
        state.failure = err;
      }
      render();
    },
  };
  return state;
}
