// Small DOM helpers. Text always goes in through textContent (never innerHTML): batch errors
// and key names are client-supplied strings.

/** @typedef {Node | string | number | boolean | null | undefined} Leaf */
/** @typedef {Leaf | Leaf[]} Nested */
/**
 * A child: a node, text (a number too), nothing (null, undefined, false), or lists of them, to
 * the depth the views nest them (a JSDoc type alias cannot refer to itself).
 * @typedef {Nested | (Nested | Nested[])[]} Child
 */

/**
 * Attributes; the listeners are named so that their event is typed where they are written.
 * @typedef {object} Attrs
 * @property {unknown} [text]
 * @property {Record<string, string>} [dataset]
 * @property {(e: MouseEvent) => unknown} [onclick]
 * @property {(e: KeyboardEvent) => unknown} [onkeydown]
 * @property {(e: Event) => unknown} [oninput]
 * @property {(e: Event) => unknown} [onchange]
 * @property {(e: FocusEvent) => unknown} [onfocus]
 */

/**
 * h('tr', { class: 'x', onclick: fn, dataset: { id } }, child, 'text', [more]) → element.
 * `text` sets textContent; null/false children are skipped.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs & Record<string, unknown>} [attrs]
 * @param {Child[]} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
/**
 * h() for SVG elements.
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs & Record<string, unknown>} [attrs]
 * @param {Child[]} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/**
 * @param {HTMLElement | SVGElement} el
 * @param {Record<string, unknown>} attrs
 */
function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') el.textContent = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function')
      el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

/**
 * @param {Element} el
 * @param {Child[]} children
 */
function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof window.Node ? c : document.createTextNode(String(c)));
  }
}

/**
 * @template {Element} E
 * @param {E} el
 * @returns {E}
 */
export function clear(el) {
  el.replaceChildren();
  return el;
}

/**
 * A table with a header row; `rows` are <tr> elements.
 * @param {(string | Node)[]} headers
 * @param {Child} rows
 * @param {Attrs & Record<string, unknown>} [attrs]
 */
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

/**
 * A friendly box for "nothing here yet", with what to do about it.
 * @param {string} title
 * @param {Child[]} body
 */
export function emptyState(title, ...body) {
  return h('div', { class: 'empty', role: 'status' }, h('strong', { text: title }), h('p', {}, ...body));
}

/**
 * @param {string} what
 * @param {unknown} failure an ApiError, another Error, or whatever was thrown
 */
export function errorBox(what, failure) {
  const err = /** @type {{ code?: unknown, status?: unknown, message?: unknown } | null | undefined} */ (
    failure
  );
  const code = err?.code ? ` (HTTP ${err.status}, code ${err.code})` : '';
  return h(
    'div',
    { class: 'error-box', role: 'alert' },
    h('strong', { text: `${what}: ` }),
    `${err?.message ?? failure}${code}`,
  );
}

export function loading() {
  return h('p', { class: 'muted loading', text: 'Loading…' });
}

/** @param {string} text */
export function code(text) {
  return h('code', { text });
}

// ---- formatting -----------------------------------------------------------------------------

const nf = new Intl.NumberFormat('en-US');
/** @param {number | null | undefined} n */
export const num = (n) => (n === null || n === undefined ? '—' : nf.format(n));

/** @param {number} n */
const pad = (n) => String(n).padStart(2, '0');

/**
 * Local "YYYY-MM-DD HH:MM" of an ISO timestamp.
 * @param {string | null | undefined} iso
 */
export function localTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * "just now", "5 min ago", "3 h ago", "2 d ago".
 * @param {string | null | undefined} iso
 */
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

/**
 * A time as local date and relative age ('both'), or one of them; the exact UTC value on hover.
 * @param {string | null | undefined} iso
 * @param {'both' | 'ago' | 'local'} [show]
 */
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

/**
 * @param {string} text
 * @param {string} [kind]
 */
export function badge(text, kind = text) {
  return h('span', { class: `badge badge-${kind}`, text });
}
