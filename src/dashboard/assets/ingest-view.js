// Ingest: recent batches, filtered by dataset and status; on click, a batch's record errors, what
// it changed (revisions per op, a sample of values before and after) and Revert.

import {
  h,
  clear,
  table,
  emptyState,
  errorBox,
  loading,
  code,
  num,
  timeCell,
  localTime,
  badge,
} from './dom.js';
import { reloader } from './api.js';

/** @typedef {import('./api.js').BatchListItem} BatchListItem */
/** @typedef {import('./api.js').BatchRecord} BatchRecord */
/** @typedef {import('./api.js').BatchChanges} BatchChanges */
/** @typedef {import('./api.js').DatasetInfo} DatasetInfo */
/** A batch's detail: its record and what it changed (or why that did not load). */
/** @typedef {{ record: BatchRecord, changes: BatchChanges | Error }} Detail */

const STATUSES = ['accepted', 'partial', 'rejected'];
const LIMIT = 100;
/** Errors rendered at once; a rejected batch can carry 100,000. */
const SHOWN_ERRORS = 500;

/** @param {BatchRecord['errors']} errors */
function errorsTable(errors) {
  if (errors.length === 0) return h('p', { class: 'muted', text: 'No record errors.' });
  const shown = errors.slice(0, SHOWN_ERRORS);
  return h(
    'div',
    {},
    errors.length > shown.length
      ? h('p', {
          class: 'muted small',
          text: `Showing the first ${num(shown.length)} of ${num(errors.length)} errors.`,
        })
      : null,
    table(
      ['#', 'Idempotency key', 'Field', 'Reason'],
      shown.map((e) =>
        h(
          'tr',
          {},
          h('td', { class: 'num', text: e.index ?? '—' }),
          h('td', { class: 'mono', text: e.idempotency_key ?? '—' }),
          h('td', { class: 'mono', text: e.field ?? '—' }),
          h('td', { text: e.reason }),
        ),
      ),
      { class: 'errors-table' },
    ),
  );
}

/**
 * The fields whose values differ between two row objects (created_at aside), as "f: a → b".
 * @param {Record<string, unknown> | null} before
 * @param {Record<string, unknown>} after
 */
function differences(before, after) {
  if (!before) return 'new row';
  const out = [];
  for (const [k, v] of Object.entries(after)) {
    if (k === 'created_at' || JSON.stringify(before[k]) === JSON.stringify(v)) continue;
    out.push(`${k}: ${JSON.stringify(before[k])} → ${JSON.stringify(v)}`);
  }
  return out.length ? out.join('; ') : 'no field changed';
}

/**
 * @param {BatchChanges | Error} c
 * @param {BatchRecord} b
 * @param {() => void} onRevert
 */
function changesSection(c, b, onRevert) {
  if (c instanceof Error) return errorBox('Could not load what the batch changed', c);
  const total = c.counts.insert + c.counts.update + c.counts.delete;
  const summary = h(
    'p',
    { class: 'changes-counts' },
    `${num(c.counts.insert)} inserted · ${num(c.counts.update)} updated · ${num(c.counts.delete)} deleted`,
  );
  const sample =
    c.sample.length === 0
      ? h('p', {
          class: 'muted',
          text: 'This batch changed no row (every record was a duplicate or rejected).',
        })
      : table(
          ['Op', 'Key', 'Before → after'],
          c.sample.map((s) =>
            h(
              'tr',
              {},
              h('td', {}, badge(s.op)),
              h('td', { class: 'mono nowrap', text: Object.values(s.key).join(' · ') }),
              h('td', {
                class: 'mono small',
                text: s.op === 'delete' ? 'deleted (full-snapshot prune)' : differences(s.before, s.after),
              }),
            ),
          ),
          { class: 'changes-table' },
        );
  const revert = b.reverted_at
    ? h('p', { class: 'muted', text: `Reverted ${localTime(b.reverted_at)} (${b.reverted_at}).` })
    : total > 0
      ? h('button', {
          type: 'button',
          class: 'danger',
          id: 'revert-batch',
          text: 'Revert batch…',
          onclick: onRevert,
        })
      : null;
  return [
    h('h3', { text: `Changes (${num(total)})` }),
    summary,
    c.sample.length < total
      ? h('p', { class: 'muted small', text: `A sample of ${c.sample.length}.` })
      : null,
    sample,
    revert,
  ];
}

/**
 * @param {BatchRecord} b
 * @param {BatchChanges | Error} changes
 * @param {() => void} onRevert
 */
function detail(b, changes, onRevert) {
  const meta = [
    ['Batch', b.batch_id],
    ['Source', b.source],
    ['Source system / run', `${b.source_system} / ${b.source_run_id}`],
    ['Operation', b.operation],
    ['Checksum (sha256)', b.checksum],
    ['Received', `${localTime(b.created_at)}  (${b.created_at})`],
    ['Processed', `${localTime(b.processed_at)}  (${b.processed_at})`],
    ['Pruned rows', num(b.pruned ?? 0)],
    ['Reverted', b.reverted_at ? `${localTime(b.reverted_at)}  (${b.reverted_at})` : '—'],
  ];
  return h(
    'div',
    { class: 'batch-detail' },
    h(
      'dl',
      { class: 'meta-grid' },
      meta.map(([k, v]) => [h('dt', { text: k }), h('dd', { class: 'mono', text: v })]),
    ),
    changesSection(changes, b, onRevert),
    h('h3', { text: `Record errors (${num(b.errors.length)})` }),
    errorsTable(b.errors),
  );
}

/** Dataset names for the filter; the catalog does not change while the page is open. */
/** @type {string[] | null} */
let datasetNames = null;

/**
 * @param {HTMLElement} root
 * @param {import('./api.js').ViewContext} context
 * @returns {import('./api.js').View}
 */
export function mountIngest(root, { api, dialog, navigate, params }) {
  const filter = { dataset: params.get('dataset') ?? '', status: params.get('status') ?? '' };
  let open = params.get('batch') ?? null; // batch_id whose detail is expanded
  /** @type {BatchListItem[] | null} */
  let batches = null;
  /** @type {Map<string, Detail | Error>} batch_id → its detail, or why it did not load */
  const details = new Map();
  const body = h('div', {}, loading());

  /**
   * @param {keyof typeof filter} k
   * @param {string} v
   */
  const setFilter = (k, v) => {
    filter[k] = v;
    // The filter lives in the hash so a reload or a link keeps it.
    navigate('ingest', Object.fromEntries(Object.entries(filter).filter(([, x]) => x)));
  };

  const loadDetail = async (/** @type {string} */ id) => {
    try {
      const path = `batches/${encodeURIComponent(id)}`;
      const [record, changes] = /** @type {[BatchRecord, BatchChanges | Error]} */ (
        await Promise.all([api(path), api(`${path}/changes`).catch((err) => err)])
      );
      details.set(id, { record, changes });
    } catch (err) {
      details.set(id, /** @type {Error} */ (err));
    }
  };

  const loads = reloader(async () => {
    const [list, catalog] = /** @type {[BatchListItem[], DatasetInfo[] | null]} */ (
      await Promise.all([
        api('batches', { query: { dataset: filter.dataset, status: filter.status, limit: LIMIT } }),
        datasetNames ? null : api('datasets').catch(() => null),
      ])
    );
    batches = list;
    if (catalog) datasetNames = catalog.map((d) => d.name);
    details.clear();
    if (open) await loadDetail(open);
  }, render);

  const toggle = async (/** @type {string} */ id) => {
    open = open === id ? null : id;
    if (open && !details.has(open)) await loadDetail(open);
    render();
  };

  /** Revert with a confirmation; a refusal (a later batch changed the rows) stays in the dialog. */
  /**
   * @param {BatchRecord} b
   * @param {BatchChanges} changes
   */
  const revert = (b, changes) =>
    dialog({
      title: `Revert batch “${b.batch_id}”?`,
      body: h(
        'p',
        {},
        `Every row it changed gets the version before it back: ${num(changes.counts.insert)} inserted rows are deleted, ` +
          `${num(changes.counts.update)} updated rows get their earlier values, ${num(changes.counts.delete)} deleted rows come back. ` +
          `The revert is recorded as batch revert:${b.batch_id}; queries with an earlier as_of still see the batch.`,
      ),
      okText: 'Revert batch',
      danger: true,
      onOk: async () => {
        await api(`batches/${encodeURIComponent(b.batch_id)}/revert`, { method: 'POST' });
        await loads.reload();
      },
    });

  /**
   * A filter's drop-down: "any" first, then each value, the current one selected.
   * @param {keyof typeof filter} k
   * @param {string} label
   * @param {string} any
   * @param {string[]} values
   */
  const filterSelect = (k, label, any, values) =>
    h(
      'label',
      {},
      label,
      h(
        'select',
        {
          id: `filter-${k}`,
          onchange: (/** @type {Event} */ e) =>
            setFilter(k, /** @type {HTMLSelectElement} */ (e.target).value),
        },
        h('option', { value: '', text: any }),
        values.map((v) => h('option', { value: v, text: v, selected: v === filter[k] })),
      ),
    );

  function controls() {
    return h(
      'div',
      { class: 'filters' },
      filterSelect(
        'dataset',
        'Dataset ',
        'All datasets',
        datasetNames ?? (filter.dataset ? [filter.dataset] : []),
      ),
      filterSelect('status', 'Status ', 'Any status', STATUSES),
    );
  }

  /** @param {BatchListItem} b */
  function row(b) {
    const isOpen = open === b.batch_id;
    const tr = h(
      'tr',
      {
        class: `clickable${isOpen ? ' open' : ''}`,
        dataset: { batchId: b.batch_id },
        tabindex: 0,
        'aria-expanded': isOpen ? 'true' : 'false',
        onclick: () => toggle(b.batch_id),
        onkeydown: (e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            void toggle(b.batch_id);
          }
        },
      },
      timeCell(b.processed_at, 'local'),
      h('td', { class: 'mono nowrap clip', title: b.batch_id, text: b.batch_id }),
      h('td', { text: b.dataset }),
      h('td', {
        class: 'nowrap',
        text: b.snapshot_type === 'full_snapshot' ? 'full snapshot' : b.snapshot_type,
      }),
      h('td', { class: 'nowrap', text: b.business_date }),
      h('td', {}, badge(b.status)),
      h('td', { class: 'num', text: num(b.record_count) }),
      h('td', { class: 'num', text: num(b.accepted) }),
      h('td', { class: 'num', text: num(b.duplicate) }),
      h('td', { class: `num${b.rejected > 0 ? ' bad' : ''}`, text: num(b.rejected) }),
      h('td', { class: 'num', text: num(b.error_count ?? b.errors.length) }),
    );
    if (!isOpen) return tr;
    const d = details.get(b.batch_id);
    // Revert is offered only when the changes loaded: then they are no Error.
    const content = !d
      ? loading()
      : d instanceof Error
        ? errorBox('Could not load the batch', d)
        : detail(d.record, d.changes, () => revert(d.record, /** @type {BatchChanges} */ (d.changes)));
    return [tr, h('tr', { class: 'detail-row' }, h('td', { colspan: 11 }, content))];
  }

  function render() {
    clear(body);
    const head = h('div', { class: 'section-head' }, h('h2', { text: 'Recent batches' }), controls());
    if (loads.failure) {
      body.append(h('section', { class: 'card' }, head, errorBox('Could not load batches', loads.failure)));
      return;
    }
    if (!batches) return;
    const filtered = filter.dataset || filter.status;
    let content;
    if (batches.length === 0 && !filtered) {
      content = emptyState(
        'No batches yet.',
        'The upstream platform pushes batches to ',
        code('POST /api/v1/upstream/ingest/batches'),
        ' with an ingest key (',
        code('UP-API-KEY'),
        '); each one appears here with its counts and any record errors.',
      );
    } else if (batches.length === 0) {
      content = emptyState('No batch matches these filters.', 'Choose another dataset or status.');
    } else {
      const loaded = batches; // not null here: checked above, where the callback cannot see it
      const counts = STATUSES.map((s) => [s, loaded.filter((b) => b.status === s).length]);
      content = [
        h(
          'p',
          { class: 'muted small' },
          `${num(batches.length)} most recent${batches.length === LIMIT ? ` (the last ${LIMIT})` : ''} · `,
          counts.map(([s, n]) => `${n} ${s}`).join(' · '),
          ' · click a batch for what it changed and its record errors',
        ),
        table(
          [
            'Processed',
            'Batch',
            'Dataset',
            'Type',
            'Business date',
            'Status',
            'Records',
            'Accepted',
            'Duplicate',
            'Rejected',
            'Errors',
          ],
          batches.map(row),
          { id: 'batches-table' },
        ),
      ];
    }
    body.append(h('section', { class: 'card' }, head, content));
  }

  root.append(body);
  return { refresh: loads.reload };
}
