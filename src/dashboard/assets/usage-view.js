// Usage: per key today / this minute / last hour against its limits, and requests per hour.

import { h, clear, table, emptyState, errorBox, loading, num, timeCell, badge } from './dom.js';
import { reloader } from './api.js';
import { barChart } from './chart.js';

/** @typedef {import('./api.js').Key} Key */
/** @typedef {import('./api.js').UsageRow} UsageRow */

const PERIODS = [
  { hours: 24, label: 'Last 24 hours' },
  { hours: 168, label: 'Last 7 days' },
];

/** @param {number} n */
const pad = (n) => String(n).padStart(2, '0');
/** "YYYY-MM-DDTHH" of a Date, in UTC: the usage bucket it falls in. */
const bucketOf = (/** @type {Date} */ d) => d.toISOString().slice(0, 13);

/**
 * One point per hour of the period, zero where nothing was counted.
 * @param {UsageRow[]} usage
 * @param {number} hours
 * @param {string} keyId
 */
function hourlySeries(usage, hours, keyId) {
  const counts = new Map();
  for (const u of usage) {
    if (keyId && u.key_id !== keyId) continue;
    counts.set(u.hour, (counts.get(u.hour) ?? 0) + u.count);
  }
  const now = Date.now();
  const points = [];
  for (let i = hours - 1; i >= 0; i--) {
    const d = new Date(now - i * 3_600_000);
    const local = `${pad(d.getHours())}:00`;
    points.push({
      // Every other hour for a day; each local midnight, as a date, for a week.
      label:
        hours > 48
          ? d.getHours() === 0
            ? `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
            : ''
          : d.getHours() % 2 === 0
            ? local
            : '',
      title: `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${local}`,
      value: counts.get(bucketOf(d)) ?? 0,
    });
  }
  return points;
}

/**
 * used / limit as a bar; amber from 70 %, red from 90 %.
 * @param {number} used
 * @param {number | null} limit
 */
function meter(used, limit) {
  if (limit === null || limit === undefined) {
    return h(
      'div',
      { class: 'meter-cell' },
      h('span', { class: 'num', text: num(used) }),
      h('span', { class: 'muted small', text: 'no limit' }),
    );
  }
  const ratio = limit > 0 ? used / limit : 1;
  const level = ratio >= 0.9 ? 'high' : ratio >= 0.7 ? 'mid' : 'low';
  const fill = h('div', { class: `meter-fill ${level}` });
  fill.style.width = `${Math.min(100, Math.round(ratio * 100))}%`;
  return h(
    'div',
    { class: 'meter-cell', title: `${num(used)} of ${num(limit)} (${Math.round(ratio * 100)} %)` },
    h('span', { class: 'num', text: `${num(used)} / ${num(limit)}` }),
    h('div', { class: 'meter' }, fill),
  );
}

const closeness = (/** @type {Key} */ k) =>
  Math.max(
    k.rate_per_minute ? (k.usage?.this_minute ?? 0) / k.rate_per_minute : 0,
    k.daily_quota ? (k.usage?.today ?? 0) / k.daily_quota : 0,
  );

/**
 * @param {string} label
 * @param {string} value
 * @param {string} id
 */
function stat(label, value, id) {
  return h(
    'div',
    { class: 'stat' },
    h('div', { class: 'stat-value', id, text: value }),
    h('div', { class: 'muted small', text: label }),
  );
}

/**
 * @param {HTMLElement} root
 * @param {import('./api.js').ViewContext} context
 * @returns {import('./api.js').View}
 */
export function mountUsage(root, { api }) {
  let hours = 24;
  let keyId = '';
  /** @type {Key[] | null} */
  let keys = null;
  /** @type {UsageRow[] | null} */
  let usage = null;
  const body = h('div', {}, loading());

  const loads = reloader(async () => {
    [keys, usage] = /** @type {[Key[], UsageRow[]]} */ (
      await Promise.all([api('keys'), api('usage', { query: { hours } })])
    );
  }, render);

  const controls = () =>
    h(
      'div',
      { class: 'filters' },
      h(
        'label',
        {},
        'Period ',
        h(
          'select',
          {
            id: 'usage-period',
            onchange: (e) => {
              hours = Number(/** @type {HTMLSelectElement} */ (e.target).value);
              void loads.reload();
            },
          },
          PERIODS.map((p) => h('option', { value: p.hours, text: p.label, selected: p.hours === hours })),
        ),
      ),
      h(
        'label',
        {},
        'Key ',
        h(
          'select',
          {
            id: 'usage-key',
            onchange: (e) => {
              keyId = /** @type {HTMLSelectElement} */ (e.target).value;
              render();
            },
          },
          h('option', { value: '', text: 'All keys' }),
          (keys ?? []).map((k) =>
            h('option', { value: k.id, text: `${k.name} (${k.prefix}…)`, selected: k.id === keyId }),
          ),
        ),
      ),
    );

  function render() {
    clear(body);
    if (loads.failure) {
      body.append(errorBox('Could not load usage', loads.failure));
      return;
    }
    if (!keys || !usage) return;
    const active = keys.filter((k) => k.revoked_at === null);
    const today = keys.reduce((n, k) => n + (k.usage?.today ?? 0), 0);
    const lastHour = keys.reduce((n, k) => n + (k.usage?.last_hour ?? 0), 0);
    const near = active.filter((k) => closeness(k) >= 0.8).length;
    const points = hourlySeries(usage, hours, keyId);
    const total = points.reduce((n, p) => n + p.value, 0);
    const chosen = keys.find((k) => k.id === keyId);

    body.append(
      h(
        'section',
        { class: 'card' },
        h(
          'div',
          { class: 'stats' },
          stat('requests today (UTC)', num(today), 'stat-today'),
          stat('requests in the last hour', num(lastHour), 'stat-hour'),
          stat('active keys', num(active.length), 'stat-keys'),
          stat('keys at ≥ 80 % of a limit', num(near), 'stat-near'),
        ),
      ),
      h(
        'section',
        { class: 'card' },
        h(
          'div',
          { class: 'section-head' },
          h('h2', { text: `Requests per hour${chosen ? ` · ${chosen.name}` : ''}` }),
          controls(),
        ),
        total === 0
          ? emptyState(
              'No requests in this period.',
              keys.length === 0
                ? 'Create a query key on the Keys tab; its requests are counted here.'
                : 'Requests made with managed keys are counted here, per hour (static keys are not).',
            )
          : h(
              'figure',
              { class: 'chart-wrap' },
              barChart(points),
              h('figcaption', { class: 'muted small', text: `${num(total)} requests · hours in local time` }),
            ),
      ),
    );

    const rows = [...keys]
      .sort(
        (a, b) =>
          (a.revoked_at === null ? 0 : 1) - (b.revoked_at === null ? 0 : 1) || closeness(b) - closeness(a),
      )
      .map((k) =>
        h(
          'tr',
          { dataset: { keyId: k.id }, class: k.revoked_at ? 'revoked' : '' },
          h('td', {}, h('strong', { text: k.name }), ' ', badge(k.scope)),
          h('td', {}, meter(k.usage?.this_minute ?? 0, k.rate_per_minute)),
          h('td', {}, meter(k.usage?.today ?? 0, k.daily_quota)),
          h('td', { class: 'num usage-hour', text: num(k.usage?.last_hour ?? 0) }),
          timeCell(k.last_used_at),
          h('td', {}, k.revoked_at ? badge('revoked', 'rejected') : badge('active', 'accepted')),
        ),
      );
    body.append(
      h(
        'section',
        { class: 'card' },
        h('h2', { text: 'Per key' }),
        keys.length === 0
          ? emptyState(
              'No keys yet.',
              'Keys created on the Keys tab appear here with their usage and limits.',
            )
          : table(
              ['Key', 'This minute / rate', 'Today / daily quota', 'Last hour', 'Last used', 'State'],
              rows,
              {
                id: 'usage-table',
              },
            ),
      ),
    );
  }

  root.append(body);
  return { refresh: loads.reload };
}
