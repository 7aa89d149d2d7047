// Coverage: every dataset's rows, date span and last change, so stale data stands out.

import { h, clear, table, emptyState, errorBox, loading, code, num, timeCell, badge } from './dom.js';
import { reloader } from './api.js';

/** @typedef {import('./api.js').CoverageRow} CoverageRow */
/** @typedef {import('./api.js').QualityRow} QualityRow */
/** @typedef {import('./api.js').MinuteQualityRow} MinuteQualityRow */
/**
 * The quality report shown: its rows once loaded (a daily or a minute dataset's), what failed,
 * the code whose lists are open.
 * @typedef {object} Quality
 * @property {string} dataset
 * @property {QualityRow[] | MinuteQualityRow[] | null} rows
 * @property {unknown} failure
 * @property {QualityRow | MinuteQualityRow | null} detail
 */

const DAY = 86_400_000;
/**
 * Freshness of a dataset by the age of the last batch that changed it.
 * @param {CoverageRow} c
 * @param {number} [now]
 */
export function freshness(c, now = Date.now()) {
  if (c.rows === 0) return { kind: 'empty', text: 'no data' };
  if (!c.last_batch_at) return { kind: 'unknown', text: 'unknown' };
  const age = now - Date.parse(c.last_batch_at);
  if (age < 2 * DAY) return { kind: 'fresh', text: 'fresh' };
  if (age < 7 * DAY) return { kind: 'aging', text: 'aging' };
  return { kind: 'stale', text: 'stale' };
}

/**
 * @param {HTMLElement} root
 * @param {import('./api.js').ViewContext} context
 * @returns {import('./api.js').View}
 */
export function mountCoverage(root, { api, navigate }) {
  /** @type {CoverageRow[] | null} */
  let coverage = null;
  let text = '';
  const body = h('div', {}, loading());
  const tableSlot = h('div');
  // The data-quality report of one daily dataset, with a drill-down per code.
  const qualitySlot = h('div', { id: 'quality' });
  /** @type {Quality | null} */
  let quality = null;

  const showQuality = async (/** @type {string} */ dataset) => {
    quality = { dataset, rows: null, failure: null, detail: null };
    renderQuality();
    const path = `quality/${encodeURIComponent(dataset)}`;
    try {
      try {
        quality.rows = /** @type {QualityRow[] | MinuteQualityRow[]} */ (
          await api(path, { query: { limit: 1000 } })
        );
      } catch (err) {
        // A minute report reads at most 6,000 code-days a page: past that its 4001 names a
        // smaller limit, so its default page (20 codes) is shown instead.
        if (/** @type {{ code?: unknown }} */ (err).code !== 4001) throw err;
        quality.rows = /** @type {QualityRow[] | MinuteQualityRow[]} */ (await api(path));
      }
    } catch (err) {
      quality.failure = err;
    }
    renderQuality();
    qualitySlot.scrollIntoView?.({ block: 'nearest' });
  };

  /**
   * A report's row: the code and its span, then `cells`, then its Details button.
   * @param {QualityRow | MinuteQualityRow} r
   * @param {boolean} flagged
   * @param {HTMLElement[]} cells
   */
  function reportRow(r, flagged, cells) {
    return h(
      'tr',
      { dataset: { code: r.code }, class: flagged ? 'bad-row' : '' },
      h('td', { class: 'mono', text: r.code }),
      h('td', { class: 'nowrap', text: r.first_date }),
      h('td', { class: 'nowrap', text: r.last_date }),
      cells,
      h('td', {}, detailButton(r)),
    );
  }

  /** A number cell each. */
  const counts = (/** @type {(number | null)[]} */ ...ns) =>
    ns.map((n) => h('td', { class: 'num', text: num(n) }));

  /** @param {QualityRow} r */
  function qualityRow(r) {
    return reportRow(r, r.missing > 0 || r.ohlc_violations > 0 || r.stale, [
      ...counts(r.bars, r.expected, r.missing),
      h('td', {}, r.stale ? badge('stale', 'stale') : badge('current', 'fresh')),
      ...counts(r.ohlc_violations, r.zero_volume_days),
    ]);
  }

  /** A row of a minute dataset's report: its days against the daily bars (docs/minute-bars.md). */
  function minuteRow(/** @type {MinuteQualityRow} */ r) {
    const flagged = r.mismatched_days + r.no_daily + r.no_minutes + r.gap_days + r.ohlc_violations > 0;
    return reportRow(
      r,
      flagged,
      counts(
        r.days,
        r.bars,
        r.compared_days,
        r.mismatched_days,
        r.no_daily,
        r.no_minutes,
        r.gap_days,
        r.ohlc_violations,
      ),
    );
  }

  /** @param {QualityRow | MinuteQualityRow} r */
  function detailButton(r) {
    return h('button', {
      class: 'ghost small quality-detail',
      type: 'button',
      text: 'Details',
      onclick: () => {
        // The button exists only inside the open report.
        /** @type {Quality} */ (quality).detail = r;
        renderQuality();
      },
    });
  }

  const MINUTE_NOTE =
    'Each day’s minutes resampled to one bar and compared with the daily bar of the same source (differing beyond the tolerance: mismatched); days with minutes but no daily bar, traded daily bars without minutes, days missing minutes inside a session (gaps) and bad bars. By code; the first 1,000 codes, or the first 20 when they hold more than 6,000 code-days.';

  /**
   * A minute code's lists: each item as one short text.
   * @param {MinuteQualityRow} d
   * @returns {[string, string[], number][]}
   */
  function minuteDetail(d) {
    const at = (/** @type {{ date: string, source: string }} */ x) => `${x.date} ${x.source}`;
    return [
      [
        'Mismatches',
        d.mismatches.map((x) => `${at(x)} ${x.field} ${x.minutes}/${x.daily}`),
        d.mismatched_days,
      ],
      ['No daily bar', d.no_daily_dates.map(at), d.no_daily],
      ['No minutes', d.no_minute_dates.map(at), d.no_minutes],
      ['Gaps', d.gaps.map((x) => `${at(x)} ${x.bars}/${x.expected}`), d.gap_days],
      ['Bad bars', d.ohlc_violation_times.map((x) => `${x.time} ${x.source}`), d.ohlc_violations],
    ];
  }

  function renderQuality() {
    clear(qualitySlot);
    if (!quality) return;
    const card = h('section', { class: 'card' }, h('h2', { text: `Data quality: ${quality.dataset}` }));
    qualitySlot.append(card);
    if (quality.failure) {
      card.append(
        /** @type {{ code?: unknown }} */ (quality.failure).code === 4041
          ? h('p', {
              class: 'muted',
              text: 'No quality report: this dataset is not a daily or minute series.',
            })
          : errorBox('Could not load the quality report', quality.failure),
      );
      return;
    }
    if (!quality.rows) {
      card.append(loading());
      return;
    }
    const minute = quality.rows.some((r) => 'compared_days' in r);
    // Which kind the rows are (checked just above), for the compiler.
    const minuteRows = /** @type {MinuteQualityRow[]} */ (quality.rows);
    const dailyRows = /** @type {QualityRow[]} */ (quality.rows);
    card.append(
      minute
        ? table(
            [
              'Code',
              'First',
              'Last',
              'Days',
              'Bars',
              'Compared',
              'Mismatched',
              'No daily',
              'No minutes',
              'Gaps',
              'Bad bars',
              '',
            ],
            minuteRows.map(minuteRow),
            { id: 'quality-table', class: 'minute' },
          )
        : table(
            [
              'Code',
              'First',
              'Last',
              'Bars',
              'Expected',
              'Missing',
              'Current',
              'Bad bars',
              'Zero volume',
              '',
            ],
            dailyRows.map(qualityRow),
            { id: 'quality-table' },
          ),
      h(
        'p',
        { class: 'muted small' },
        minute
          ? MINUTE_NOTE
          : 'Expected: open days of the trading calendar from the first to the last bar; missing: those without a bar; bad bars: low > high, open or close outside [low, high], or negative volume. Worst first.',
      ),
    );
    const d = quality.detail;
    if (d) {
      // Of the kind the rows are, as above.
      const minuteCode = /** @type {MinuteQualityRow} */ (d);
      const dailyCode = /** @type {QualityRow} */ (d);
      /**
       * @param {string} title
       * @param {string[]} dates
       * @param {number} total
       */
      const list = (title, dates, total) =>
        h(
          'div',
          {},
          h('h3', { text: `${title} (${num(total)})` }),
          dates.length
            ? h('p', { class: 'mono small', text: dates.join(', ') })
            : h('p', { class: 'muted', text: 'none' }),
        );
      card.append(
        h(
          'div',
          { id: 'quality-detail', class: 'card inset' },
          h('h3', { text: d.code }),
          ...(minute
            ? minuteDetail(minuteCode).map(([title, items, total]) => list(title, items, total))
            : [
                list('Missing days', dailyCode.missing_dates, dailyCode.missing),
                list('Bad bars', dailyCode.ohlc_violation_dates, dailyCode.ohlc_violations),
              ]),
        ),
      );
    }
  }

  const loads = reloader(async () => {
    coverage = /** @type {CoverageRow[]} */ (await api('coverage'));
  }, render);

  const search = h('input', {
    type: 'search',
    id: 'coverage-filter',
    placeholder: 'Filter datasets or endpoints',
    'aria-label': 'Filter datasets',
    oninput: (e) => {
      text = /** @type {HTMLInputElement} */ (e.target).value.trim().toLowerCase();
      renderTable();
    },
  });

  /** @param {CoverageRow} c */
  function row(c) {
    const f = freshness(c);
    return h(
      'tr',
      { dataset: { dataset: c.dataset }, class: c.rows === 0 ? 'empty-row' : '' },
      h(
        'td',
        {},
        h('a', {
          href: `#ingest?dataset=${encodeURIComponent(c.dataset)}`,
          text: c.dataset,
          title: 'Batches of this dataset',
        }),
      ),
      h('td', {}, badge(f.text, f.kind)),
      h('td', { class: 'num', text: num(c.rows) }),
      h('td', { class: 'nowrap', text: c.first_date ?? '—' }),
      h('td', { class: 'nowrap', text: c.last_date ?? '—' }),
      timeCell(c.last_batch_at, 'ago'),
      h(
        'td',
        { class: 'mono small nowrap clip', title: c.last_batch_id ?? '' },
        c.last_batch_id
          ? h('a', {
              href: '#',
              text: c.last_batch_id,
              onclick: (e) => {
                e.preventDefault();
                // Only rendered when the row has a last batch.
                navigate('ingest', { dataset: c.dataset, batch: /** @type {string} */ (c.last_batch_id) });
              },
            })
          : '—',
      ),
      // Clipped like the batch id (the whole path in its title): the row fits its card at 1,280 px.
      h('td', { class: 'mono small nowrap clip endpoint', title: c.endpoint, text: c.endpoint }),
      h(
        'td',
        {},
        c.rows > 0
          ? h('button', {
              class: 'ghost small quality',
              type: 'button',
              text: 'Quality',
              title: 'Missing days, stale codes and bad bars per code',
              onclick: () => showQuality(c.dataset),
            })
          : '',
      ),
    );
  }

  function renderTable() {
    // Called once the coverage has loaded (its filter box is rendered with it).
    const shown = /** @type {CoverageRow[]} */ (coverage).filter(
      (c) => !text || c.dataset.includes(text) || c.endpoint.includes(text),
    );
    clear(tableSlot).append(
      table(
        [
          'Dataset',
          'Freshness',
          'Rows',
          'First date',
          'Last date',
          'Last change',
          'Last batch',
          'Endpoint',
          '',
        ],
        shown.map(row),
        {
          id: 'coverage-table',
        },
      ),
    );
  }

  function render() {
    clear(body);
    if (loads.failure) {
      body.append(h('section', { class: 'card' }, errorBox('Could not load coverage', loads.failure)));
      return;
    }
    if (!coverage) return;
    const withData = coverage.filter((c) => c.rows > 0);
    const stale = coverage.filter((c) => freshness(c).kind === 'stale').length;
    const totalRows = coverage.reduce((n, c) => n + c.rows, 0);
    body.append(
      h(
        'section',
        { class: 'card' },
        h(
          'div',
          { class: 'stats' },
          h(
            'div',
            { class: 'stat' },
            h('div', {
              class: 'stat-value',
              id: 'cov-with-data',
              text: `${withData.length} / ${coverage.length}`,
            }),
            h('div', { class: 'muted small', text: 'datasets holding data' }),
          ),
          h(
            'div',
            { class: 'stat' },
            h('div', { class: 'stat-value', text: num(totalRows) }),
            h('div', { class: 'muted small', text: 'rows in all' }),
          ),
          h(
            'div',
            { class: 'stat' },
            h('div', { class: `stat-value${stale ? ' bad' : ''}`, text: num(stale) }),
            h('div', { class: 'muted small', text: 'stale (unchanged ≥ 7 days)' }),
          ),
        ),
      ),
      h(
        'section',
        { class: 'card' },
        h('div', { class: 'section-head' }, h('h2', { text: 'Datasets' }), search),
        withData.length === 0
          ? emptyState(
              'The service holds no data yet.',
              'Every dataset below is empty. Push batches to ',
              code('POST /api/v1/upstream/ingest/batches'),
              ' and their rows, date span and last change appear here.',
            )
          : null,
        tableSlot,
        h(
          'p',
          { class: 'muted small' },
          'Dates are the span of each dataset’s date field (none for snapshot datasets). “Last change” is the last batch that wrote or deleted rows; freshness: fresh < 2 days, aging < 7 days, stale after. “Quality” opens the data-quality report of a daily or minute dataset.',
        ),
      ),
      qualitySlot,
    );
    renderTable();
    renderQuality();
  }

  root.append(body);
  return { refresh: loads.reload };
}
