// The admin API client. The token lives in memory and in sessionStorage (this tab only, gone
// when the tab closes); it is sent as `Authorization: Bearer`, never put in a URL.

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

let onUnauthorized = () => {};
/** Called when any request is refused with 401: the page signs out. */
export function whenUnauthorized(fn) {
  onUnauthorized = fn;
}

/** Calls /admin/api/<path>; resolves to the envelope's `data`, or throws ApiError. */
export async function api(path, { method = 'GET', body, query, quiet = false } = {}) {
  const url = new window.URL(`/admin/api/${path}`, window.location.origin);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  const headers = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 0, 'the service did not answer (is it running?)');
  }
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

/** Checks a token without keeping it: resolves if the admin API accepts it. */
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
 */
export function reloader(load, render) {
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
