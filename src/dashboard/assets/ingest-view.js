// Ingest: recent batches, filtered by dataset and status; a batch's record errors on click.

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

const STATUSES = ['accepted', 'partial', 'rejected'];
const LIMIT = 100;
/** Errors rendered at once; a rejected batch can carry 100,000. */
const SHOWN_ERRORS = 500;

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

function detail(b) {
  const meta = [
    ['Batch', b.batch_id],
    ['Source', b.source],
    ['Source system / run', `${b.source_system} / ${b.source_run_id}`],
    ['Operation', b.operation],
    ['Checksum (sha256)', b.checksum],
    ['Received', `${localTime(b.created_at)}  (${b.created_at})`],
    ['Processed', `${localTime(b.processed_at)}  (${b.processed_at})`],
    ['Pruned rows', num(b.pruned ?? 0)],
  ];
  return h(
    'div',
    { class: 'batch-detail' },
    h(
      'dl',
      { class: 'meta-grid' },
      meta.map(([k, v]) => [h('dt', { text: k }), h('dd', { class: 'mono', text: v })]),
    ),
    h('h3', { text: `Record errors (${num(b.errors.length)})` }),
    errorsTable(b.errors),
  );
}

/** Dataset names for the filter; the catalog does not change while the page is open. */
let datasetNames = null;

export function mountIngest(root, { api, navigate, params }) {
  const filter = { dataset: params.get('dataset') ?? '', status: params.get('status') ?? '' };
  let open = params.get('batch') ?? null; // batch_id whose detail is expanded
  let batches = null;
  let failure = null;
  const details = new Map(); // batch_id → full record (or Error)
  const body = h('div', {}, loading());

  const setFilter = (k, v) => {
    filter[k] = v;
    // The filter lives in the hash so a reload or a link keeps it.
    navigate('ingest', Object.fromEntries(Object.entries(filter).filter(([, x]) => x)));
  };

  const loadDetail = async (id) => {
    try {
      details.set(id, await api(`batches/${encodeURIComponent(id)}`));
    } catch (err) {
      details.set(id, err);
    }
  };

  const reload = async () => {
    try {
      const [list, catalog] = await Promise.all([
        api('batches', { query: { dataset: filter.dataset, status: filter.status, limit: LIMIT } }),
        datasetNames ? null : api('datasets').catch(() => null),
      ]);
      batches = list;
      if (catalog) datasetNames = catalog.map((d) => d.name);
      failure = null;
      details.clear();
      if (open) await loadDetail(open);
    } catch (err) {
      failure = err;
    }
    render();
  };

  const toggle = async (id) => {
    open = open === id ? null : id;
    if (open && !details.has(open)) await loadDetail(open);
    render();
  };

  function controls() {
    return h(
      'div',
      { class: 'filters' },
      h(
        'label',
        {},
        'Dataset ',
        h(
          'select',
          { id: 'filter-dataset', onchange: (e) => setFilter('dataset', e.target.value) },
          h('option', { value: '', text: 'All datasets' }),
          (datasetNames ?? (filter.dataset ? [filter.dataset] : [])).map((d) =>
            h('option', { value: d, text: d, selected: d === filter.dataset }),
          ),
        ),
      ),
      h(
        'label',
        {},
        'Status ',
        h(
          'select',
          { id: 'filter-status', onchange: (e) => setFilter('status', e.target.value) },
          h('option', { value: '', text: 'Any status' }),
          STATUSES.map((s) => h('option', { value: s, text: s, selected: s === filter.status })),
        ),
      ),
    );
  }

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
    const content = !d ? loading() : d instanceof Error ? errorBox('Could not load the batch', d) : detail(d);
    return [tr, h('tr', { class: 'detail-row' }, h('td', { colspan: 11 }, content))];
  }

  function render() {
    clear(body);
    const head = h('div', { class: 'section-head' }, h('h2', { text: 'Recent batches' }), controls());
    if (failure) {
      body.append(h('section', { class: 'card' }, head, errorBox('Could not load batches', failure)));
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
      const counts = STATUSES.map((s) => [s, batches.filter((b) => b.status === s).length]);
      content = [
        h(
          'p',
          { class: 'muted small' },
          `${num(batches.length)} most recent${batches.length === LIMIT ? ` (the last ${LIMIT})` : ''} · `,
          counts.map(([s, n]) => `${n} ${s}`).join(' · '),
          ' · click a batch for its record errors',
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
  return { refresh: reload };
}
