// Small DOM helpers. Text always goes in through textContent (never innerHTML): batch errors
// and key names are client-supplied strings.

/**
 * h('tr', { class: 'x', onclick: fn, dataset: { id } }, child, 'text', [more]) → element.
 * `text` sets textContent; null/false children are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') el.textContent = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof window.Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

/** A table with a header row; `rows` are <tr> elements. */
export function table(headers, rows, attrs = {}) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      attrs,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((t) => (typeof t === 'string' ? h('th', { text: t }) : t)),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

/** A friendly box for "nothing here yet", with what to do about it. */
export function emptyState(title, ...body) {
  return h('div', { class: 'empty', role: 'status' }, h('strong', { text: title }), h('p', {}, ...body));
}

export function errorBox(what, err) {
  const code = err?.code ? ` (HTTP ${err.status}, code ${err.code})` : '';
  return h(
    'div',
    { class: 'error-box', role: 'alert' },
    h('strong', { text: `${what}: ` }),
    `${err?.message ?? err}${code}`,
  );
}

export function loading() {
  return h('p', { class: 'muted loading', text: 'Loading…' });
}

export function code(text) {
  return h('code', { text });
}

// ---- formatting -----------------------------------------------------------------------------

const nf = new Intl.NumberFormat('en-US');
export const num = (n) => (n === null || n === undefined ? '—' : nf.format(n));

const pad = (n) => String(n).padStart(2, '0');

/** Local "YYYY-MM-DD HH:MM" of an ISO timestamp. */
export function localTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** "just now", "5 min ago", "3 h ago", "2 d ago". */
export function ago(iso, now = Date.now()) {
  if (!iso) return 'never';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const sec = Math.max(0, Math.round((now - t) / 1000));
  if (sec < 45) return 'just now';
  if (sec < 3600) return `${Math.round(sec / 60)} min ago`;
  if (sec < 86400 * 2) return `${Math.round(sec / 3600)} h ago`;
  return `${Math.round(sec / 86400)} d ago`;
}

/** A time as local date and relative age ('both'), or one of them; the exact UTC value on hover. */
export function timeCell(iso, show = 'both') {
  const text = !iso
    ? show === 'ago'
      ? 'never'
      : '—'
    : show === 'ago'
      ? ago(iso)
      : show === 'local'
        ? localTime(iso)
        : `${localTime(iso)} · ${ago(iso)}`;
  return h('td', { class: 'nowrap', title: iso ?? '', text });
}

export function badge(text, kind = text) {
  return h('span', { class: `badge badge-${kind}`, text });
}
