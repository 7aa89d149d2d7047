// Issue 7: the dashboard end to end, in real headless Chromium (Debian's /usr/bin/chromium driven
// by playwright-core) against the app on a real port: sign in, create and use a key, watch its
// usage, revoke it, see pushed batches and their errors, and the coverage of every catalog dataset.
// Saves docs/dashboard-{keys,usage,ingest,coverage}.png for the README (MDS_UPDATE_SCREENSHOTS=1).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ADMIN_TOKEN, INGEST_KEY, QUERY_KEY, startApp, type Harness } from '../helpers/harness.js';
import { batch, batchOfRecords, days, etfBar, record, uniqueId } from '../helpers/batches.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { dayBars } from '../helpers/minute-bars.js';
import { ROOT } from '../helpers/repo-root.js';

/** The coverage table lists every catalog dataset. */
const DATASETS = CATALOG.datasets.length;
const CHROMIUM = process.env.MDS_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
// Screenshots go to docs/ only when asked (MDS_UPDATE_SCREENSHOTS=1), so a test run never
// changes tracked files; otherwise to a temporary folder (still taken: they exercise rendering).
const DOCS =
  process.env.MDS_UPDATE_SCREENSHOTS === '1'
    ? path.join(ROOT, 'docs')
    : `${fs.mkdtempSync(path.join(os.tmpdir(), 'mds-dashboard-'))}/`;

const haveChromium = fs.existsSync(CHROMIUM);
if (!haveChromium) {
  const msg = `# dashboard e2e: ${CHROMIUM} not found (apt-get install -y chromium)`;
  if (process.env.CI === 'true') throw new Error(`${msg}; CI=true requires it`);
  console.log(`${msg}; skipping`);
}

describe(
  'dashboard end to end (Chromium)',
  { skip: haveChromium ? false : `${CHROMIUM} not installed` },
  () => {
    let h: Harness;
    let base: string;
    let browser: Browser;
    let page: Page;
    const requested: string[] = [];
    let secret = '';
    let keyId = '';

    const api = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, init);
    const pushHttp = (body: unknown) =>
      api('/api/v1/upstream/ingest/batches', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
        body: JSON.stringify(body),
      });
    const tab = async (name: string) => {
      await page.click(`#tabs a[data-view="${name}"]`);
      await page.waitForSelector(`#view[data-view="${name}"] .card`);
    };
    /** Waits until `selector` matches exactly `n` elements. */
    const countIs = async (selector: string, n: number) => {
      // Polled from here: the page's CSP (rightly) refuses waitForFunction's string eval.
      for (let i = 0; i < 100 && (await page.locator(selector).count()) !== n; i++) {
        await page.waitForTimeout(100);
      }
      assert.equal(await page.locator(selector).count(), n, selector);
    };
    const shot = (name: string) => page.screenshot({ path: `${DOCS}dashboard-${name}.png`, fullPage: true });

    before(async () => {
      h = await startApp('sqlite');
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const addr = h.app.server.address();
      assert.ok(addr && typeof addr === 'object');
      base = `http://127.0.0.1:${addr.port}`;
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
      const context = await browser.newContext({
        viewport: { width: 1280, height: 800 },
        timezoneId: 'UTC',
        locale: 'en-US',
      });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      page = await context.newPage();
      page.setDefaultTimeout(15_000);
      page.on('request', (r) => requested.push(r.url()));
      fs.mkdirSync(DOCS, { recursive: true });
    });

    after(async () => {
      await browser?.close();
      await h?.close();
      if (process.env.MDS_UPDATE_SCREENSHOTS !== '1') fs.rmSync(DOCS, { recursive: true, force: true });
    });

    it('shows only the sign-in form without a token, refuses a wrong one, signs in with the right one', async (t) => {
      const started = Date.now();
      await page.goto(`${base}/dashboard`);
      await page.waitForSelector('#signin:not([hidden])');
      // Strings run in the page (this project's TypeScript has no DOM types).
      const nav = (await page.evaluate(
        `(() => { const e = performance.getEntriesByType('navigation')[0];
          return { dcl: e.domContentLoadedEventEnd, load: e.loadEventEnd }; })()`,
      )) as { dcl: number; load: number };
      t.diagnostic(
        `page: DOMContentLoaded ${nav.dcl.toFixed(0)} ms, load ${nav.load.toFixed(0)} ms, sign-in form in ${Date.now() - started} ms`,
      );
      assert.equal(await page.isHidden('#tabs'), true);
      assert.equal(await page.textContent('#view'), '');

      await page.fill('#token', 'wrong-token-000000000000');
      await page.click('#signin-button');
      await page.waitForSelector('#signin-error:not([hidden])');
      assert.match((await page.textContent('#signin-error')) ?? '', /refused/);
      assert.equal(await page.isHidden('#tabs'), true);

      const t0 = Date.now();
      await page.fill('#token', ADMIN_TOKEN);
      await page.click('#signin-button');
      await page.waitForSelector('#view[data-view="keys"] .empty');
      t.diagnostic(`signed in and keys listed in ${Date.now() - t0} ms`);
      assert.match((await page.textContent('#view .empty')) ?? '', /No keys yet/);
      assert.ok(!page.url().includes(ADMIN_TOKEN));

      // A reload keeps the session (sessionStorage) and is how fast an operator sees the page.
      const t1 = Date.now();
      await page.reload();
      await page.waitForSelector('#view[data-view="keys"] .empty');
      const warm = (await page.evaluate(
        `performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd`,
      )) as number;
      t.diagnostic(
        `reload, signed in: DOMContentLoaded ${warm.toFixed(0)} ms, keys shown in ${Date.now() - t1} ms`,
      );
    });

    it('shows clear empty states on a fresh install', async () => {
      await tab('usage');
      await page.waitForSelector('#view .empty');
      assert.match((await page.textContent('#view')) ?? '', /No requests in this period/);
      await tab('ingest');
      await page.waitForSelector('#view .empty');
      assert.match((await page.textContent('#view .empty')) ?? '', /No batches yet/);
      await tab('coverage');
      await page.waitForSelector('#coverage-table');
      assert.match((await page.textContent('#view .empty')) ?? '', /holds no data yet/);
      assert.equal(await page.locator('#coverage-table tbody tr').count(), DATASETS);
      assert.equal(await page.textContent('#cov-with-data'), `0 / ${DATASETS}`);
    });

    it('creates a key and shows its secret once, with a copy button', async () => {
      await tab('keys');
      await page.fill('#new-name', 'research notebook');
      await page.fill('#new-rate', '120');
      await page.fill('#new-quota', '5000');
      await page.click('#create-key button[type=submit]');
      await page.waitForSelector('#new-key-secret');
      secret = await page.inputValue('#new-key-secret');
      assert.ok(secret.length >= 20, secret);
      await page.click('#copy-secret');
      await page.locator('#copy-secret', { hasText: 'Copied' }).waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);

      const row = page.locator('#keys-table tbody tr', { hasText: 'research notebook' });
      await row.waitFor();
      keyId = (await row.getAttribute('data-key-id')) ?? '';
      assert.ok(keyId);
      const text = (await row.textContent()) ?? '';
      assert.match(text, /120 \/ min/);
      assert.match(text, /5,000 \/ day/);
      assert.ok(!text.includes(secret), 'the list never shows the secret');

      // A second key, made through the admin API, with earlier traffic for the chart and a
      // daily quota it has used 85 % of (so the screenshot shows a meter near its limit).
      const now = Date.now();
      const traffic = Array.from({ length: 23 }, (_, i) => {
        const at = new Date(now - (23 - i) * 3_600_000);
        return {
          hour: at.toISOString().slice(0, 13),
          count: 40 + Math.round(30 * Math.sin(i / 3)) + i * 3,
          lastUsed: at.toISOString(),
        };
      });
      const today = new Date(now).toISOString().slice(0, 10);
      const usedToday = traffic.filter((u) => u.hour.startsWith(today)).reduce((n, u) => n + u.count, 0);
      const res = await api('/admin/api/keys', {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          scope: 'query',
          name: 'mobile app backend',
          rate_per_minute: 600,
          daily_quota: Math.max(10, Math.ceil(usedToday / 0.85)),
        }),
      });
      assert.equal(res.status, 201);
      const other = ((await res.json()) as { data: { id: string } }).data;
      await h.store.keys.recordUsage(traffic.map((u) => ({ keyId: other.id, ...u })));
      await page.click('#refresh');
      await page.locator('#keys-table tbody tr', { hasText: 'mobile app backend' }).waitFor();
      await shot('keys');
      await page.click('#view .secret-panel button.ghost');
      assert.equal(await page.locator('#new-key-secret').count(), 0, 'the secret is gone once hidden');
    });

    it('counts the key’s requests: usage today and last hour rise, with a chart', async () => {
      for (let i = 0; i < 7; i++) {
        const res = await api('/api/v1/etf/kline?limit=1', { headers: { 'q-api-key': secret } });
        assert.equal(res.status, 200);
      }
      await tab('usage');
      const row = page.locator(`#usage-table tr[data-key-id="${keyId}"]`);
      await row.waitFor();
      // The page re-reads on Refresh; the admin API flushes counted usage before answering.
      for (let i = 0; i < 20 && !/7 \/ 5,000/.test((await row.textContent()) ?? ''); i++) {
        await page.waitForTimeout(250);
        await page.click('#refresh');
      }
      const text = (await row.textContent()) ?? '';
      assert.match(text, /7 \/ 5,000/, text); // today against the daily quota
      assert.match(text, /\d \/ 120/, text); // this minute against the rate (the minute may have turned)
      // Last hour is a sliding estimate: exactly 7 unless the clock hour turned during the test.
      assert.match((await row.locator('.usage-hour').textContent()) ?? '', /^[1-7]$/);
      const bars = await page.$$eval(
        'svg.chart .bar rect',
        (rects) => rects.filter((r) => Number(r.getAttribute('height')) > 0).length,
      );
      assert.ok(bars >= 2, `bars drawn: ${bars}`);
      assert.match((await page.textContent('#stat-hour')) ?? '', /\d/);
      await shot('usage');

      // A week, and one key's requests alone.
      await page.selectOption('#usage-period', '168');
      await countIs('svg.chart .bar', 168);
      await page.selectOption('#usage-key', keyId);
      await page.locator('#view h2', { hasText: 'research notebook' }).waitFor();
      const only = await page.$$eval(
        'svg.chart .bar rect',
        (rects) => rects.filter((r) => Number(r.getAttribute('height')) > 0).length,
      );
      assert.ok(only === 1 || only === 2, `one busy hour (two if the hour turned): ${only}`);
    });

    it('changes a key’s limits and revokes it; the revoked key is refused', async () => {
      await tab('keys');
      const row = page.locator(`#keys-table tr[data-key-id="${keyId}"]`);
      await row.locator('button', { hasText: 'Limits' }).click();
      await page.waitForSelector('#dialog[open]');
      await page.fill('#edit-rate', '60');
      await page.fill('#edit-quota', '');
      await page.click('#dialog-ok');
      await page.waitForSelector('#dialog[open]', { state: 'detached' });
      await page.locator(`#keys-table tr[data-key-id="${keyId}"]`, { hasText: '60 / min' }).waitFor();
      assert.match((await row.textContent()) ?? '', /unlimited/);

      await row.locator('button', { hasText: 'Revoke' }).click();
      await page.waitForSelector('#dialog[open]');
      assert.match((await page.textContent('#dialog')) ?? '', /cannot be restored/);
      await page.click('#dialog-ok');
      await page.waitForSelector(`#keys-table tr.revoked[data-key-id="${keyId}"]`);

      let status = 0;
      for (let i = 0; i < 30; i++) {
        status = (await api('/api/v1/etf/kline?limit=1', { headers: { 'q-api-key': secret } })).status;
        if (status === 401) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 401);
    });

    it('shows pushed batches, filters them, and a partial batch’s record errors on click', async () => {
      const okId = uniqueId('etf-close');
      assert.equal(
        (
          await pushHttp(
            batch(
              'etf_daily',
              days('2024-01-02', 5).flatMap((d) => [etfBar('510300', d), etfBar('510500', d)]),
              { batchId: okId },
            ),
          )
        ).status,
        200,
      );
      assert.equal(
        (
          await pushHttp(
            batch(
              'fx',
              days('2024-01-02', 3).map((d) => ({ symbol: 'USDCNY', date: d, close: 7.1, source: 'pboc' })),
              {
                source: 'pboc',
              },
            ),
          )
        ).status,
        200,
      );
      assert.equal(
        (
          await pushHttp(
            batch(
              'index_daily',
              days('2024-01-02', 4).map((d) => ({
                symbol: '000300',
                date: d,
                close: 3400.5,
                source: 'csindex',
              })),
              { source: 'csindex', snapshotType: 'full_snapshot', businessDate: '2024-01-05' },
            ),
          )
        ).status,
        207, // full snapshot: three rows lie outside the business date's partition
      );
      const partialId = uniqueId('etf-partial');
      const partial = batchOfRecords(
        'etf_daily',
        [
          record('etf_daily', etfBar('159915', '2024-01-08')),
          record('etf_daily', etfBar('159916', '2024-01-08', { close: 'n/a' })),
          record('etf_daily', etfBar('159917', '2024-02-30')),
        ],
        { batchId: partialId, businessDate: '2024-01-08' },
      );
      assert.equal((await pushHttp(partial)).status, 207);

      await tab('ingest');
      await page.waitForSelector(`#batches-table tr[data-batch-id="${partialId}"]`);
      assert.equal(await page.locator('#batches-table tbody tr.clickable').count(), 4);

      await page.selectOption('#filter-status', 'partial');
      await page.waitForURL(/status=partial/);
      await page.waitForSelector('#batches-table');
      await page.selectOption('#filter-dataset', 'etf_daily');
      await page.waitForURL(/dataset=etf_daily/);
      await countIs('#batches-table tbody tr.clickable', 1);
      const row = page.locator(`#batches-table tr[data-batch-id="${partialId}"]`);
      const text = (await row.textContent()) ?? '';
      assert.match(text, /etf_daily/);
      assert.match(text, /incremental/);
      assert.match(text, /2024-01-08/);
      assert.match(text, /partial/);

      await row.click();
      await page.waitForSelector('.batch-detail .errors-table');
      const errors = await page.$$eval('.batch-detail .errors-table tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
      );
      assert.equal(errors.length, 2);
      assert.equal(errors[0]?.[1], 'etf_daily:159916:2024-01-08:eastmoney');
      assert.equal(errors[0]?.[2], 'close');
      assert.equal(errors[1]?.[2], 'date');

      // Back to every batch, with the detail of the partial one open, for the screenshot.
      await page.selectOption('#filter-dataset', '');
      await page.waitForURL((u) => !u.hash.includes('dataset='));
      await page.selectOption('#filter-status', '');
      await countIs('#batches-table tbody tr.clickable', 4);
      await page.locator(`#batches-table tr[data-batch-id="${partialId}"]`).click();
      await page.waitForSelector('.batch-detail .errors-table');
      await shot('ingest');
    });

    it('shows the coverage of every catalog dataset', async () => {
      await tab('coverage');
      await page.waitForSelector('#coverage-table');
      assert.equal(await page.locator('#coverage-table tbody tr').count(), DATASETS);
      assert.equal(await page.textContent('#cov-with-data'), `3 / ${DATASETS}`);
      const cells = async (ds: string) =>
        page.$$eval(`#coverage-table tr[data-dataset="${ds}"] td`, (tds) =>
          tds.map((td) => td.textContent ?? ''),
        );
      const etf = await cells('etf_daily');
      assert.equal(etf[7], '/api/v1/etf/kline');
      assert.equal(etf[2], '11'); // 10 bars + 1 accepted record of the partial batch
      assert.equal(etf[3], '2024-01-02');
      assert.equal(etf[4], '2024-01-08');
      assert.match(etf[6] ?? '', /etf-partial/);
      assert.equal(etf[1], 'fresh');
      assert.equal(etf[5], 'just now');
      const basic = await cells('etf_basic');
      assert.equal(basic[2], '0');
      assert.equal(basic[1], 'no data');
      assert.equal(await page.locator('#view .empty').count(), 0);
      await shot('coverage');

      // At 1,400 px (and at 1,280) the table fits its card: no row scrolls sideways, every
      // Quality button is inside the card (issue 27 item 10).
      for (const width of [1400, 1280]) {
        await page.setViewportSize({ width, height: 900 });
        const fit = await page.$eval('#coverage-table', (t) => {
          const wrap = t.parentElement;
          const card = t.closest('.card');
          if (!wrap || !card) return null;
          const right = card.getBoundingClientRect().right;
          const buttons = [...t.querySelectorAll('button.quality')].map(
            (b) => b.getBoundingClientRect().right,
          );
          return {
            scroll: wrap.scrollWidth - wrap.clientWidth,
            outside: buttons.filter((r) => r > right).length,
            buttons: buttons.length,
          };
        });
        assert.deepEqual(fit, { scroll: 0, outside: 0, buttons: 3 }, `at ${width} px`);
        if (width === 1400)
          await page.screenshot({ path: `${DOCS}dashboard-coverage-1400.png`, fullPage: true });
      }

      await page.fill('#coverage-filter', 'us_');
      await countIs(
        '#coverage-table tbody tr',
        CATALOG.datasets.filter((d) => d.name.includes('us_')).length,
      );
    });

    it('shows the data-quality report of a daily dataset with a drill-down per code', async () => {
      // An SSE calendar for January 2024 (New Year's Day closed), and a code missing two days.
      const cal = days('2024-01-01', 10).map((date) => {
        const dow = new Date(`${date}T00:00:00Z`).getUTCDay();
        const open = date !== '2024-01-01' && dow !== 0 && dow !== 6 ? 1 : 0;
        return { exchange: 'SSE', date, is_open: open, source: 'sse' };
      });
      assert.equal((await pushHttp(batch('trade_calendar', cal, { source: 'sse' }))).status, 200);
      const gappy = ['2024-01-02', '2024-01-05'].map((d) => etfBar('GAPPY', d, { source: 'q' }));
      assert.equal((await pushHttp(batch('etf_daily', gappy, { source: 'q' }))).status, 200);
      await tab('coverage');
      await page.waitForSelector('#coverage-table');
      await page.fill('#coverage-filter', 'etf_daily');
      await page.click('#coverage-table tr[data-dataset="etf_daily"] button.quality');
      await page.waitForSelector('#quality-table');
      const first = await page.$$eval('#quality-table tbody tr:first-child td', (tds) =>
        tds.map((td) => td.textContent ?? ''),
      );
      assert.deepEqual(first.slice(0, 6), ['GAPPY', '2024-01-02', '2024-01-05', '2', '4', '2']);
      await page.click('#quality-table tr[data-code="GAPPY"] button.quality-detail');
      await page.waitForSelector('#quality-detail');
      assert.match((await page.textContent('#quality-detail')) ?? '', /2024-01-03, 2024-01-04/);
    });

    it('shows the quality report of a minute dataset: its days against the daily bars, with a drill-down', async () => {
      // A day of 600000's minutes with one bar missing (a gap of 239 bars of 240) and no daily bar.
      const bars = dayBars('600000', '2024-03-01').filter((b) => b.time !== '2024-03-01T10:00:00+08:00');
      assert.equal((await pushHttp(batch('stock_minute', bars))).status, 200);
      // Away and back: the view is mounted again, so its coverage (a Quality button) is read anew.
      await tab('ingest');
      await tab('coverage');
      await page.waitForSelector('#coverage-table');
      await page.fill('#coverage-filter', 'stock_minute');
      await page.click('#coverage-table tr[data-dataset="stock_minute"] button.quality');
      await page.waitForSelector('#quality-table.minute');
      const head = await page.$$eval('#quality-table th', (ths) => ths.map((th) => th.textContent ?? ''));
      assert.deepEqual(head.slice(0, 11), [
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
      ]);
      const first = await page.$$eval('#quality-table tbody tr:first-child td', (tds) =>
        tds.map((td) => td.textContent ?? ''),
      );
      assert.deepEqual(first.slice(0, 11), [
        '600000',
        '2024-03-01',
        '2024-03-01',
        '1',
        '239',
        '0',
        '0',
        '1',
        '0',
        '1',
        '0',
      ]);
      await page.click('#quality-table tr[data-code="600000"] button.quality-detail');
      await page.waitForSelector('#quality-detail');
      const detail = (await page.textContent('#quality-detail')) ?? '';
      assert.match(detail, /No daily bar \(1\)2024-03-01 eastmoney/);
      assert.match(detail, /Gaps \(1\)2024-03-01 eastmoney 239\/240/);
    });

    it('shows what a batch changed (counts per op, values before and after) and reverts it after confirmation', async () => {
      const day = '2024-03-01';
      const bar = (code: string, close: number) => etfBar(code, day, { source: 'pit', close });
      const first = batch('etf_daily', [bar('P1', 1), bar('P2', 1), bar('P3', 1)], { source: 'pit' });
      assert.equal((await pushHttp(first)).status, 200);
      const kline = async () =>
        (
          (await (
            await api(`/api/v1/etf/kline?source=pit&sort=code&order=asc`, {
              headers: { 'q-api-key': QUERY_KEY },
            })
          ).json()) as { data: Record<string, unknown>[] }
        ).data;
      const before = await kline();
      // A full snapshot of the day: updates P1, inserts P4, prunes P2 and P3.
      const fixId = uniqueId('etf-fix');
      const fix = batch('etf_daily', [bar('P1', 2), bar('P4', 4)], {
        batchId: fixId,
        source: 'pit',
        snapshotType: 'full_snapshot',
        businessDate: day,
      });
      assert.equal((await pushHttp(fix)).status, 200);

      await tab('coverage');
      await tab('ingest');
      const row = page.locator(`#batches-table tr[data-batch-id="${fixId}"]`);
      await row.click();
      await page.waitForSelector('.batch-detail .changes-table');
      assert.equal(
        await page.textContent('.batch-detail .changes-counts'),
        '1 inserted · 1 updated · 2 deleted',
      );
      const sample = await page.$$eval('.batch-detail .changes-table tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
      );
      assert.deepEqual(
        sample.map((r) => [r[0], r[1]]),
        [
          ['update', `P1 · ${day} · pit`],
          ['delete', `P2 · ${day} · pit`],
          ['delete', `P3 · ${day} · pit`],
          ['insert', `P4 · ${day} · pit`],
        ],
      );
      assert.equal(sample[0]?.[2], 'close: 1 → 2');

      // Revert asks first; cancelling changes nothing.
      await page.click('#revert-batch');
      await page.waitForSelector('#dialog[open]');
      assert.match((await page.textContent('#dialog')) ?? '', /revert:etf-fix/);
      await page.click('#dialog-cancel');
      await page.waitForSelector('#dialog[open]', { state: 'detached' });
      assert.equal((await kline()).length, 2);
      await page.click('#revert-batch');
      await page.waitForSelector('#dialog[open]');
      await page.click('#dialog-ok');
      await page.waitForSelector('#dialog[open]', { state: 'detached' });
      await page.waitForSelector('.batch-detail >> text=Reverted 20');
      assert.equal(await page.locator('#revert-batch').count(), 0);
      assert.deepEqual(await kline(), before);
      await shot('ingest-revert');
    });

    it('never puts the token in a URL, and signing out forgets it', async () => {
      assert.ok(requested.length > 10);
      for (const url of requested) assert.ok(!url.includes(ADMIN_TOKEN), url);
      await page.click('#signout');
      await page.waitForSelector('#signin:not([hidden])');
      assert.equal(await page.evaluate('sessionStorage.length'), 0);
      await page.reload();
      await page.waitForSelector('#signin:not([hidden])');
      assert.equal(await page.isHidden('#tabs'), true);
    });
  },
);
