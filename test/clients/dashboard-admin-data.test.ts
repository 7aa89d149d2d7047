// Issue 7: the admin data API behind the dashboard (/admin/api/batches, /admin/api/coverage) and
// the page's static serving, over HTTP (inject), on every backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, backends, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { batch, batchOfRecords, days, etfBar, record, uniqueId } from '../helpers/batches.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { LIST_ERRORS } from '../../src/http/admin-data-routes.js';

const admin = (
  h: Harness,
  url: string,
  token: string | null = ADMIN_TOKEN,
): Promise<LightMyRequestResponse> =>
  h.app.inject({ method: 'GET', url, headers: token === null ? {} : { authorization: `Bearer ${token}` } });

const data = <T = Json[]>(res: LightMyRequestResponse): T => (res.json() as { data: T }).data;

for (const backend of await backends()) {
  describe(`admin data API (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend);
    });
    after(async () => h.close());

    it('refuses every route without the admin token (401 / 4010) or with a wrong one (401 / 4012)', async () => {
      for (const url of [
        '/admin/api/batches',
        '/admin/api/batches/x',
        '/admin/api/coverage',
        '/admin/api/datasets',
      ]) {
        const none = await admin(h, url, null);
        assert.equal(none.statusCode, 401, url);
        assert.equal((none.json() as Json).code, 4010);
        const wrong = await admin(h, url, 'not-the-token');
        assert.equal(wrong.statusCode, 401, url);
        assert.equal((wrong.json() as Json).code, 4012);
        assert.ok(!JSON.stringify(wrong.json()).includes('data'), 'no data leaks on 401');
      }
    });

    it('lists the catalog’s datasets for pickers', async () => {
      const res = await admin(h, '/admin/api/datasets');
      assert.equal(res.statusCode, 200);
      const list = data(res);
      assert.equal(list.length, CATALOG.datasets.length);
      assert.deepEqual(list[0], {
        name: 'etf_daily',
        endpoint: '/api/v1/etf/kline',
        layer: CATALOG.byName.get('etf_daily')?.layer,
        description: CATALOG.byName.get('etf_daily')?.description,
      });
    });

    it('on a fresh install: no batches, and coverage lists every catalog dataset as empty', async () => {
      const list = await admin(h, '/admin/api/batches');
      assert.equal(list.statusCode, 200);
      assert.deepEqual(list.json(), { code: 0, message: 'ok', data: [] });
      const cov = await admin(h, '/admin/api/coverage');
      assert.equal(cov.statusCode, 200);
      const rows = data(cov);
      assert.equal(rows.length, CATALOG.datasets.length);
      assert.deepEqual(
        rows.map((r) => r.dataset),
        CATALOG.datasets.map((d) => d.name),
      );
      for (const r of rows) {
        assert.deepEqual(Object.keys(r).sort(), [
          'dataset',
          'endpoint',
          'first_date',
          'last_batch_at',
          'last_batch_id',
          'last_date',
          'rows',
        ]);
        assert.equal(r.rows, 0);
        assert.equal(r.last_batch_id, null);
        assert.equal(r.endpoint, CATALOG.byName.get(String(r.dataset))?.endpoint);
      }
    });

    it('lists batches newest first, filters by dataset and status, and shows one with its errors', async () => {
      const okId = uniqueId('ok');
      const partialId = uniqueId('partial');
      const rejectedId = uniqueId('rejected');
      const fxId = uniqueId('fx');
      assert.equal(
        (
          await push(
            h.app,
            batch(
              'etf_daily',
              days('2024-01-02', 3).map((d) => etfBar('510300', d)),
              { batchId: okId },
            ),
          )
        ).statusCode,
        200,
      );
      const bad = (i: number) =>
        record('etf_daily', etfBar('510500', `2024-02-0${i}`, { close: 'not a number' }));
      const partial = batchOfRecords(
        'etf_daily',
        [record('etf_daily', etfBar('510500', '2024-02-01')), bad(2), bad(3)],
        { batchId: partialId },
      );
      assert.equal((await push(h.app, partial)).statusCode, 207);
      assert.equal(
        (await push(h.app, batchOfRecords('etf_daily', [bad(4)], { batchId: rejectedId }))).statusCode,
        422,
      );
      assert.equal(
        (
          await push(
            h.app,
            batch('fx', [{ symbol: 'USDCNY', date: '2024-01-02', close: 7.1, source: 'pboc' }], {
              batchId: fxId,
              source: 'pboc',
            }),
          )
        ).statusCode,
        200,
      );

      const all = data(await admin(h, '/admin/api/batches'));
      assert.deepEqual(new Set(all.map((b) => b.batch_id)), new Set([okId, partialId, rejectedId, fxId]));
      const times = all.map((b) => String(b.processed_at));
      assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
      const p = all.find((b) => b.batch_id === partialId) as Json;
      assert.equal(p.status, 'partial');
      assert.equal(p.snapshot_type, 'incremental');
      assert.equal(p.business_date, '2024-01-02');
      assert.equal(p.accepted, 1);
      assert.equal(p.rejected, 2);
      assert.equal(p.error_count, 2);
      assert.equal((p.errors as unknown[]).length, 2);

      const etf = data(await admin(h, '/admin/api/batches?dataset=etf_daily'));
      assert.deepEqual(new Set(etf.map((b) => b.batch_id)), new Set([okId, partialId, rejectedId]));
      const partials = data(await admin(h, '/admin/api/batches?dataset=etf_daily&status=partial'));
      assert.deepEqual(
        partials.map((b) => b.batch_id),
        [partialId],
      );
      const rejected = data(await admin(h, '/admin/api/batches?status=rejected'));
      assert.deepEqual(
        rejected.map((b) => b.batch_id),
        [rejectedId],
      );
      assert.equal(data(await admin(h, '/admin/api/batches?limit=2')).length, 2);
      assert.deepEqual(data(await admin(h, '/admin/api/batches?dataset=etf_basic')), []);

      const one = await admin(h, `/admin/api/batches/${encodeURIComponent(partialId)}`);
      assert.equal(one.statusCode, 200);
      const rec = data<Json>(one);
      assert.equal(rec.batch_id, partialId);
      const errors = rec.errors as Json[];
      assert.equal(errors.length, 2);
      assert.deepEqual(
        errors.map((e) => e.index),
        [1, 2],
      );
      assert.equal(errors[0]?.idempotency_key, 'etf_daily:510500:2024-02-02:eastmoney');
      assert.equal(errors[0]?.field, 'close');
    });

    it('answers 404 / 4040 for an unknown batch and 400 / 4001 for bad filters', async () => {
      const missing = await admin(h, '/admin/api/batches/no-such-batch');
      assert.equal(missing.statusCode, 404);
      assert.equal((missing.json() as Json).code, 4040);
      for (const q of [
        'dataset=nope',
        'status=duplicate',
        'limit=0',
        'limit=abc',
        'limit=-1',
        'colour=red',
      ]) {
        const res = await admin(h, `/admin/api/batches?${q}`);
        assert.equal(res.statusCode, 400, q);
        assert.equal((res.json() as Json).code, 4001, q);
      }
      // A limit above the maximum is clamped, not refused.
      assert.equal((await admin(h, '/admin/api/batches?limit=5000')).statusCode, 200);
    });

    it('lists a batch with many errors cut short, with the full count', async () => {
      const id = uniqueId('many');
      const recs = Array.from({ length: 25 }, (_, i) =>
        record('etf_daily', etfBar(`5199${String(i).padStart(2, '0')}`, '2024-03-01', { volume: 'x' })),
      );
      assert.equal((await push(h.app, batchOfRecords('etf_daily', recs, { batchId: id }))).statusCode, 422);
      const listed = data(await admin(h, '/admin/api/batches?status=rejected')).find(
        (b) => b.batch_id === id,
      );
      assert.ok(listed);
      assert.equal((listed.errors as unknown[]).length, LIST_ERRORS);
      assert.equal(listed.error_count, 25);
      const full = data<Json>(await admin(h, `/admin/api/batches/${id}`));
      assert.equal((full.errors as unknown[]).length, 25);
    });

    it('coverage follows the data: rows, date span, last batch, refreshed after each change', async () => {
      const before = data(await admin(h, '/admin/api/coverage'));
      const etf = before.find((c) => c.dataset === 'etf_daily') as Json;
      assert.equal(etf.rows, 4); // 3 bars of 510300 + 1 accepted of the partial batch
      assert.equal(etf.first_date, '2024-01-02');
      assert.equal(etf.last_date, '2024-02-01');
      assert.match(String(etf.last_batch_at), /^\d{4}-\d{2}-\d{2}T.*Z$/);
      const fx = before.find((c) => c.dataset === 'fx') as Json;
      assert.equal(fx.rows, 1);
      assert.equal(before.find((c) => c.dataset === 'etf_basic')?.rows, 0);

      // Served from the cache while nothing changed; recomputed once a batch changes a dataset.
      assert.deepEqual(data(await admin(h, '/admin/api/coverage')), before);
      const id = uniqueId('more');
      await push(h.app, batch('etf_daily', [etfBar('510300', '2024-04-30')], { batchId: id }));
      const afterPush = data(await admin(h, '/admin/api/coverage')).find(
        (c) => c.dataset === 'etf_daily',
      ) as Json;
      assert.equal(afterPush.rows, 5);
      assert.equal(afterPush.last_date, '2024-04-30');
      assert.equal(afterPush.last_batch_id, id);
    });
  });
}

describe('dashboard page', () => {
  let h: Harness;
  before(async () => {
    h = await startApp('sqlite');
  });
  after(async () => h.close());

  it('serves the page and its assets without a token, with a strict content security policy', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/dashboard' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /<form id="signin-form"/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal((await h.app.inject({ method: 'GET', url: '/dashboard/' })).statusCode, 200);

    for (const [file, type] of [
      ['main.js', /^text\/javascript/],
      ['api.js', /^text\/javascript/],
      ['style.css', /^text\/css/],
      ['icon.svg', /^image\/svg\+xml/],
    ] as const) {
      const res = await h.app.inject({ method: 'GET', url: `/dashboard/assets/${file}` });
      assert.equal(res.statusCode, 200, file);
      assert.match(String(res.headers['content-type']), type, file);
      const etag = String(res.headers.etag);
      const again = await h.app.inject({
        method: 'GET',
        url: `/dashboard/assets/${file}`,
        headers: { 'if-none-match': etag },
      });
      assert.equal(again.statusCode, 304, file);
    }
  });

  it('serves nothing outside its folder', async () => {
    for (const url of [
      '/dashboard/assets/nope.js',
      '/dashboard/assets/../index.html',
      '/dashboard/assets/%2e%2e/%2e%2e/package.json',
      '/dashboard/assets/..%2f..%2f..%2fpackage.json',
    ]) {
      const res = await h.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
    }
  });
});
