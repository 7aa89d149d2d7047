// Boot: sign-in, tabs (#keys, #usage, #ingest, #coverage), refresh, the shared dialog.

import { api, getToken, setToken, verifyToken, whenUnauthorized } from './api.js';
import { clear, errorBox } from './dom.js';
import { mountKeys } from './keys-view.js';
import { mountUsage } from './usage-view.js';
import { mountIngest } from './ingest-view.js';
import { mountCoverage } from './coverage-view.js';

/** @typedef {import('./api.js').View} View */

const VIEWS = { keys: mountKeys, usage: mountUsage, ingest: mountIngest, coverage: mountCoverage };
/** @typedef {keyof typeof VIEWS} ViewName */
/** @type {Record<ViewName, string>} */
const TITLES = { keys: 'Keys', usage: 'Usage', ingest: 'Ingest', coverage: 'Coverage' };
/** The current view reloads itself this often while the tab is visible. */
const AUTO_REFRESH_MS = 15_000;

/**
 * The element of index.html with this id (the page holds every one asked for); a caller that
 * needs more than an HTMLElement (an input's value, a button's disabled) casts it to its kind.
 * @param {string} id
 */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** The page's <dialog>. */
const $dialog = () => /** @type {HTMLDialogElement} */ ($('dialog'));
/** @type {{ name: ViewName, view: View } | null} */
let current = null;
/** @type {number | undefined} */
let timer = undefined;

// ---- routing --------------------------------------------------------------------------------

/**
 * Whether the hash names a view: an own key of VIEWS (a name inherited from Object, such as
 * "toString", is not one).
 * @param {string} name
 * @returns {name is ViewName}
 */
const isView = (name) => Object.hasOwn(VIEWS, name);

/**
 * "#ingest?dataset=etf_daily" → { name: 'ingest', params } (view state only; never the token).
 * @returns {{ name: ViewName, params: URLSearchParams }}
 */
function route() {
  const [name = '', query] = window.location.hash.replace(/^#/, '').split('?');
  return { name: isView(name) ? name : 'keys', params: new URLSearchParams(query ?? '') };
}

/**
 * @param {string} name
 * @param {Record<string, string>} [params]
 */
export function navigate(name, params = {}) {
  const q = new URLSearchParams(params).toString();
  window.location.hash = q ? `${name}?${q}` : name;
}

async function show() {
  if (!getToken()) return;
  const { name, params } = route();
  for (const a of document.querySelectorAll(/** @type {'a'} */ ('#tabs a'))) {
    a.classList.toggle('active', a.dataset.view === name);
    if (a.dataset.view === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${TITLES[name]} · Market Data Service`;
  const root = clear($('view'));
  root.dataset.view = name;
  const view = VIEWS[name](root, { api, dialog: openDialog, navigate, params });
  current = { name, view };
  await refresh();
}

async function refresh() {
  if (!current) return;
  const button = /** @type {HTMLButtonElement} */ ($('refresh'));
  button.disabled = true;
  try {
    await current.view.refresh();
    const now = new Date();
    $('updated').textContent = `Updated ${now.toLocaleTimeString()}`;
  } catch (err) {
    // Views render their own errors; this catches a bug in one so the page stays usable.
    $('view').prepend(errorBox('Could not refresh', err));
  } finally {
    button.disabled = false;
  }
}

// ---- session --------------------------------------------------------------------------------

/** @param {string} [message] */
function showSignIn(message) {
  current = null;
  window.clearInterval(timer);
  clear($('view'));
  $('tabs').hidden = true;
  $('session').hidden = true;
  $('signin').hidden = false;
  const error = $('signin-error');
  error.hidden = !message;
  error.textContent = message ?? '';
  /** @type {HTMLInputElement} */ ($('token')).value = '';
  $('token').focus();
}

function showApp() {
  $('signin').hidden = true;
  $('tabs').hidden = false;
  $('session').hidden = false;
  window.clearInterval(timer);
  timer = window.setInterval(() => {
    // Not while the operator is typing or deciding: a re-render would take their focus.
    const busy = $dialog().open || document.activeElement?.matches('input, select, textarea');
    if (!document.hidden && !busy) void refresh();
  }, AUTO_REFRESH_MS);
  void show();
}

/** @param {string} [message] */
function signOut(message) {
  setToken(null);
  showSignIn(message);
}

whenUnauthorized(() => signOut('The admin token was refused. Sign in again.'));

$('signin-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const candidate = /** @type {HTMLInputElement} */ ($('token')).value.trim();
  if (!candidate) return;
  const button = /** @type {HTMLButtonElement} */ ($('signin-button'));
  button.disabled = true;
  $('signin-error').hidden = true;
  try {
    await verifyToken(candidate);
    setToken(candidate);
    showApp();
  } catch (failure) {
    const err = /** @type {{ status?: number, message?: string }} */ (failure);
    const msg =
      err.status === 401
        ? 'That token was refused.'
        : err.status === 429
          ? 'Too many failed attempts from this address; wait a minute.'
          : `Could not sign in: ${err.message}`;
    $('signin-error').textContent = msg;
    $('signin-error').hidden = false;
  } finally {
    button.disabled = false;
  }
});

$('signout').addEventListener('click', () => signOut());
$('refresh').addEventListener('click', () => void refresh());
window.addEventListener('hashchange', () => void show());

// ---- dialog ---------------------------------------------------------------------------------

/**
 * Opens the shared <dialog>. `onOk(form)` may throw to keep it open with the message shown.
 * Resolves true when confirmed (and onOk succeeded), false when cancelled.
 * @param {import('./api.js').DialogOptions} options
 * @returns {Promise<boolean>}
 */
function openDialog({ title, body, okText = 'OK', danger = false, onOk = async () => {} }) {
  const dialog = $dialog();
  const form = /** @type {HTMLFormElement} */ ($('dialog-form'));
  const ok = /** @type {HTMLButtonElement} */ ($('dialog-ok'));
  const error = $('dialog-error');
  $('dialog-title').textContent = title;
  clear($('dialog-body')).append(body);
  ok.textContent = okText;
  ok.className = danger ? 'danger' : 'primary';
  error.hidden = true;
  return new Promise((resolve) => {
    const done = (/** @type {boolean} */ value) => {
      form.removeEventListener('submit', submit);
      $('dialog-cancel').removeEventListener('click', cancel);
      dialog.removeEventListener('cancel', cancel);
      if (dialog.open) dialog.close();
      resolve(value);
    };
    const submit = async (/** @type {SubmitEvent} */ e) => {
      e.preventDefault();
      ok.disabled = true;
      try {
        await onOk(form);
        done(true);
      } catch (err) {
        error.textContent = /** @type {Error} */ (err).message;
        error.hidden = false;
      } finally {
        ok.disabled = false;
      }
    };
    const cancel = (/** @type {Event | undefined} */ e) => {
      e?.preventDefault();
      done(false);
    };
    form.addEventListener('submit', submit);
    $('dialog-cancel').addEventListener('click', cancel);
    dialog.addEventListener('cancel', cancel);
    dialog.showModal();
    dialog.querySelector('input')?.focus();
  });
}

// ---- start ----------------------------------------------------------------------------------

if (getToken()) showApp();
else showSignIn();
