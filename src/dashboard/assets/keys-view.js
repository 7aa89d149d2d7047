// Keys: create (the secret shown once, with a copy button), list, change limits, revoke.

import { h, clear, table, emptyState, errorBox, loading, code, num, timeCell, badge } from './dom.js';
import { reloader } from './api.js';

/** @typedef {import('./api.js').Key} Key */
/** @typedef {import('./api.js').KeyCreated} KeyCreated */
/** @typedef {import('../../contract/admin.js').KeyCreate} KeyCreate */
/** @typedef {import('../../contract/admin.js').KeyUpdate} KeyUpdate */

/**
 * @param {number | null | undefined} v
 * @param {string} unit
 */
const limitText = (v, unit) => (v === null || v === undefined ? 'unlimited' : `${num(v)} ${unit}`);

/**
 * '' → null (no limit); else a positive integer, or an Error naming the field.
 * @param {FormDataEntryValue | null} raw
 * @param {string} label
 */
function parseLimit(raw, label) {
  const t = String(raw ?? '').trim();
  if (t === '') return null;
  if (!/^\d+$/.test(t) || Number(t) < 1) throw new Error(`${label} must be a whole number ≥ 1, or empty`);
  return Number(t);
}

/**
 * @param {string} text
 * @param {HTMLInputElement} input
 * @param {HTMLButtonElement} button
 */
async function copy(text, input, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API (plain http on a remote host): select it for Ctrl+C instead.
    input.select();
    button.textContent = 'Press Ctrl+C';
    return;
  }
  button.textContent = 'Copied ✓';
  setTimeout(() => (button.textContent = 'Copy'), 2000);
}

/**
 * @param {KeyCreated} key
 * @param {() => void} onDismiss
 */
function secretPanel(key, onDismiss) {
  const input = h('input', {
    class: 'secret',
    id: 'new-key-secret',
    readonly: true,
    value: key.secret,
    spellcheck: 'false',
    'aria-label': 'New key',
  });
  const copyButton = h('button', { type: 'button', class: 'primary', id: 'copy-secret', text: 'Copy' });
  copyButton.addEventListener('click', () => copy(key.secret, input, copyButton));
  input.addEventListener('focus', () => input.select());
  return h(
    'div',
    { class: 'secret-panel', role: 'alert' },
    h('strong', { text: `New ${key.scope} key “${key.name}” created.` }),
    h(
      'p',
      {},
      'Copy it now: this is the only time it is shown. The service keeps only a hash. ',
      key.scope === 'query'
        ? ['Clients send it as ', code('Q-API-KEY'), '.']
        : ['Send it as ', code('UP-API-KEY'), '.'],
    ),
    h('div', { class: 'row' }, input, copyButton),
    h('button', { type: 'button', class: 'ghost', text: 'I have saved it — hide', onclick: onDismiss }),
  );
}

/** @param {(body: KeyCreate) => Promise<void>} onCreate */
function createForm(onCreate) {
  const form = h(
    'form',
    { class: 'create-key', id: 'create-key', autocomplete: 'off' },
    h(
      'label',
      {},
      'Scope',
      h(
        'select',
        { name: 'scope', id: 'new-scope' },
        h('option', { value: 'query', text: 'query (Q-API-KEY)' }),
        h('option', { value: 'ingest', text: 'ingest (UP-API-KEY)' }),
      ),
    ),
    h(
      'label',
      {},
      'Name',
      h('input', { name: 'name', id: 'new-name', placeholder: 'e.g. research notebook', maxlength: 100 }),
    ),
    h(
      'label',
      {},
      'Requests / minute',
      h('input', { name: 'rate', id: 'new-rate', inputmode: 'numeric', placeholder: 'service default' }),
    ),
    h(
      'label',
      {},
      'Requests / day (UTC)',
      h('input', { name: 'quota', id: 'new-quota', inputmode: 'numeric', placeholder: 'service default' }),
    ),
    h('button', { type: 'submit', class: 'primary', text: 'Create key' }),
  );
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.hidden = true;
    const f = new window.FormData(form);
    try {
      /** @type {KeyCreate} */
      const body = { scope: /** @type {KeyCreate['scope']} */ (f.get('scope')) };
      const name = String(f.get('name') ?? '').trim();
      if (name) body.name = name;
      const rate = parseLimit(f.get('rate'), 'Requests / minute');
      const quota = parseLimit(f.get('quota'), 'Requests / day');
      if (rate !== null) body.rate_per_minute = rate;
      if (quota !== null) body.daily_quota = quota;
      await onCreate(body);
      form.reset();
    } catch (err) {
      error.textContent = /** @type {Error} */ (err).message;
      error.hidden = false;
    }
  });
  return h(
    'section',
    { class: 'card' },
    h('h2', { text: 'Create a key' }),
    form,
    error,
    h(
      'p',
      { class: 'muted small' },
      'Empty limits take the service defaults (',
      code('MDS_DEFAULT_RATE_PER_MINUTE'),
      ', ',
      code('MDS_DEFAULT_DAILY_QUOTA'),
      '); change them any time with Limits….',
    ),
  );
}

/** @param {Key} key */
function limitsForm(key) {
  return h(
    'div',
    { class: 'stack' },
    h('p', { class: 'muted' }, 'Leave a limit empty for none. Changes apply within 2 seconds.'),
    h('label', {}, 'Name', h('input', { name: 'name', id: 'edit-name', value: key.name, maxlength: 100 })),
    h(
      'label',
      {},
      'Requests / minute',
      h('input', {
        name: 'rate',
        id: 'edit-rate',
        inputmode: 'numeric',
        value: key.rate_per_minute ?? '',
        placeholder: 'unlimited',
      }),
    ),
    h(
      'label',
      {},
      'Requests / day (UTC)',
      h('input', {
        name: 'quota',
        id: 'edit-quota',
        inputmode: 'numeric',
        value: key.daily_quota ?? '',
        placeholder: 'unlimited',
      }),
    ),
  );
}

/**
 * @param {HTMLElement} root
 * @param {import('./api.js').ViewContext} context
 * @returns {import('./api.js').View}
 */
export function mountKeys(root, { api, dialog }) {
  /** @type {Key[] | null} */
  let keys = null;
  const secretSlot = h('div');
  const listSlot = h('div', {}, loading());

  const loads = reloader(async () => {
    keys = /** @type {Key[]} */ (await api('keys'));
  }, render);

  const create = async (/** @type {KeyCreate} */ body) => {
    const key = /** @type {KeyCreated} */ (await api('keys', { method: 'POST', body }));
    clear(secretSlot).append(secretPanel(key, () => clear(secretSlot)));
    await loads.reload();
  };

  const edit = (/** @type {Key} */ key) =>
    dialog({
      title: `Limits of “${key.name}”`,
      body: limitsForm(key),
      okText: 'Save',
      onOk: async (form) => {
        const f = new window.FormData(form);
        /** @type {KeyUpdate} */
        const body = {
          rate_per_minute: parseLimit(f.get('rate'), 'Requests / minute'),
          daily_quota: parseLimit(f.get('quota'), 'Requests / day'),
        };
        const name = String(f.get('name') ?? '').trim();
        if (name && name !== key.name) body.name = name;
        await api(`keys/${encodeURIComponent(key.id)}`, { method: 'PATCH', body });
        await loads.reload();
      },
    });

  const revoke = (/** @type {Key} */ key) =>
    dialog({
      title: `Revoke “${key.name}”?`,
      body: h(
        'p',
        {},
        `Clients using ${key.prefix}… get 401 within 2 seconds. A revoked key cannot be restored; create a new one instead.`,
      ),
      okText: 'Revoke key',
      danger: true,
      onOk: async () => {
        await api(`keys/${encodeURIComponent(key.id)}/revoke`, { method: 'POST' });
        await loads.reload();
      },
    });

  /** @param {Key} k */
  function row(k) {
    const revoked = k.revoked_at !== null;
    return h(
      'tr',
      { class: revoked ? 'revoked' : '', dataset: { keyId: k.id } },
      h('td', { class: 'key-name', title: `id ${k.id}` }, h('strong', { text: k.name })),
      h('td', {}, badge(k.scope)),
      h('td', { class: 'mono', text: `${k.prefix}…` }),
      h('td', { class: 'num', text: limitText(k.rate_per_minute, '/ min') }),
      h('td', { class: 'num', text: limitText(k.daily_quota, '/ day') }),
      h('td', { class: 'num usage-today', text: num(k.usage?.today ?? 0) }),
      timeCell(k.created_at, 'local'),
      timeCell(k.last_used_at, 'ago'),
      h('td', {}, revoked ? badge(`revoked`, 'rejected') : badge('active', 'accepted')),
      h(
        'td',
        { class: 'actions' },
        revoked
          ? h('span', { class: 'muted small', title: k.revoked_at, text: 'revoked' })
          : [
              h('button', { type: 'button', class: 'ghost small', text: 'Limits…', onclick: () => edit(k) }),
              h('button', {
                type: 'button',
                class: 'ghost small danger-text',
                text: 'Revoke',
                onclick: () => revoke(k),
              }),
            ],
      ),
    );
  }

  function render() {
    clear(listSlot);
    if (loads.failure) {
      listSlot.append(errorBox('Could not load keys', loads.failure));
      return;
    }
    if (!keys) return;
    const active = keys.filter((k) => k.revoked_at === null);
    listSlot.append(
      h(
        'div',
        { class: 'section-head' },
        h('h2', { text: 'Managed keys' }),
        h('span', {
          class: 'muted',
          text: `${active.length} active · ${keys.length - active.length} revoked`,
        }),
      ),
    );
    if (keys.length === 0) {
      listSlot.append(
        emptyState(
          'No keys yet.',
          'Create a query key above and give it to a client, or an ingest key for the upstream platform. ',
          'Static keys from ',
          code('MDS_QUERY_KEYS'),
          ' / ',
          code('MDS_INGEST_KEYS'),
          ' work too but are not listed here.',
        ),
      );
      return;
    }
    // Active keys first, newest first within each group.
    const sorted = [...keys].sort(
      (a, b) =>
        (a.revoked_at === null ? 0 : 1) - (b.revoked_at === null ? 0 : 1) ||
        b.created_at.localeCompare(a.created_at),
    );
    listSlot.append(
      table(
        ['Name', 'Scope', 'Prefix', 'Rate', 'Quota', 'Today', 'Created', 'Last used', 'State', ''],
        sorted.map(row),
        { id: 'keys-table' },
      ),
    );
  }

  root.append(createForm(create), secretSlot, h('section', { class: 'card' }, listSlot));
  return { refresh: loads.reload };
}
