// Issue 3: the query interface (spec 2.1, 2.2, 4.1–4.3, 5, 7.1, 8; decisions.md "Query"),
// every catalog endpoint, over HTTP, on every backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOG } from '../../src/catalog/catalog.js';
import {
  backends,
  get,
  INGEST_KEY,
  json,
  push,
  startApp,
  type Harness,
  type Json,
} from '../helpers/harness.js';
import { batch, days, etfBar } from '../helpers/batches.js';
import { sampleRow } from '../helpers/sample-rows.js';

const ETF_BASIC_FIELDS = [
  'code',
  'name',
  'category',
  'asset_class',
  'tracking_index',
  'tracking_index_code',
  'fund_company',
  'exchange',
  'management_fee',
  'custodian_fee',
  'total_fee',
  'aum_billion',
  'avg_daily_amount_million',
  'premium_pct',
  'latest_price',
  'latest_nav',
  'listing_date',
  'is_connected',
  'created_at',
  'updated_at',
];
const SPEC_ENDPOINTS = [
  '/api/v1/etf/basic',
  '/api/v1/etf/nav',
  '/api/v1/etf/price',
  '/api/v1/etf/size',
  '/api/v1/etf/flow',
  '/api/v1/etf/holdings',
  '/api/v1/etf/pcf',
  '/api/v1/etf/holders',
  '/api/v1/etf/dividend',
  '/api/v1/etf/cross-border',
  '/api/v1/etf/kline',
  '/api/v1/stock/spot',
  '/api/v1/stock/financials',
  '/api/v1/stock/industry-sw',
  '/api/v1/index/constituents',
  '/api/v1/index/price',
  '/api/v1/index/meta',
  '/api/v1/macro/indicator',
  '/api/v1/market/margin-trading',
  '/api/v1/market/hsgt-flow',
  '/api/v1/us/companies',
  '/api/v1/us/filings',
  '/api/v1/us/facts',
  '/api/v1/us/insider-trades',
  '/api/v1/us/13f-holdings',
  '/api/v1/etf/qdii-nav',
  '/api/v1/market/fx',
  '/api/v1/stock/daily',
  '/api/v1/features/etf-daily',
  '/api/v1/features/etf-risk',
  '/api/v1/features/etf-cross-border',
  '/api/v1/features/index-daily',
  '/api/v1/market/adj-factor',
  '/api/v1/market/corporate-actions',
  '/api/v1/market/trade-calendar',
  '/api/v1/stock/basic',
  '/api/v1/stock/names',
  '/api/v1/index/members',
  '/api/v1/stock/limit',
  '/api/v1/us/tickers',
  '/api/v1/stock/minute',
  '/api/v1/etf/minute',
  '/api/v1/index/minute',
];
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Envelope = {
  code: number;
  message: string;
  data: Json[];
  meta: { total: number; limit: number; offset: number; has_more: boolean };
};
const env = async (h: Harness, url: string): Promise<Envelope> =>
  json(await get(h.app, url)) as unknown as Envelope;

/** Compares the spec's four meta fields (extra ones such as next_cursor may follow). */
function assertMeta(meta: Envelope['meta'], expected: Envelope['meta']): void {
  const { total, limit, offset, has_more } = meta;
  assert.deepEqual({ total, limit, offset, has_more }, expected);
}

async function expect400(h: Harness, url: string, mention?: string): Promise<void> {
  const res = await get(h.app, url);
  assert.equal(res.statusCode, 400, `${url} → ${res.body}`);
  const body = json(res) as unknown as Envelope;
  assert.equal(body.code, 4001);
  assert.deepEqual(body.data, []);
  assert.equal(body.meta.total, 0);
  assert.equal(body.meta.has_more, false);
  if (mention) assert.ok(body.message.includes(mention), `message "${body.message}" mentions ${mention}`);
}

it('the catalog covers every endpoint of the spec, the US endpoints and the added ones', () => {
  assert.deepEqual(CATALOG.datasets.map((d) => d.endpoint).sort(), [...SPEC_ENDPOINTS].sort());
});

for (const backend of await backends()) {
  describe(`query [${backend}]`, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend);
    });
    after(async () => h.close());

    describe('every catalog endpoint', () => {
      // A database of its own, so the sample rows do not disturb the counts below.
      let h: Harness;
      before(async () => {
        h = await startApp(backend);
      });
      after(async () => h.close());
      // Minute bars need bars inside a session (sampleRow knows no sessions): their field names,
      // types and filters are held by test/query/minute-bars.test.ts.
      for (const d of CATALOG.datasets.filter((x) => x.blocks === null)) {
        it(`${d.endpoint} returns ingested ${d.name} rows with exactly the catalog's field names and JSON types`, async () => {
          const rows = [0, 1, 2].map((i) => sampleRow(d, i));
          const res = await push(h.app, batch(d.name, rows, { source: 'src', businessDate: '2024-01-02' }));
          assert.equal(res.statusCode, 200, res.body);
          const body = await env(h, d.endpoint);
          assert.equal(body.code, 0);
          assert.equal(body.message, 'ok');
          assert.equal(body.meta.total, 3);
          assertMeta(body.meta, { total: 3, limit: 100, offset: 0, has_more: false });
          for (const row of body.data) {
            assert.deepEqual(Object.keys(row).sort(), d.rowFields.map((f) => f.apiName).sort());
            for (const f of d.rowFields) {
              const v = row[f.apiName];
              if (f.type === 'number' || f.type === 'integer' || f.type === 'flag')
                assert.equal(typeof v, 'number', f.apiName);
              else if (f.type === 'date') assert.match(v as string, /^\d{4}-\d{2}-\d{2}$/);
              else if (f.type === 'timestamp') assert.match(v as string, ISO_Z, f.apiName);
              else assert.equal(typeof v, 'string');
            }
          }
          // Each exact filter narrows to the matching row.
          const first = body.data[0] as Json;
          for (const f of d.exact) {
            const narrowed = await env(
              h,
              `${d.endpoint}?${f.apiName}=${encodeURIComponent(String(first[f.apiName]))}`,
            );
            assert.ok(narrowed.meta.total >= 1, `${f.apiName} filter`);
            for (const r of narrowed.data) assert.equal(r[f.apiName], first[f.apiName]);
          }
        });
      }
      it('/api/v1/etf/basic rows have exactly the 20 fields of spec 2.2; absent optional fields are null', async () => {
        await push(h.app, batch('etf_basic', [{ code: '510050', name: '50ETF' }]));
        const body = await env(h, '/api/v1/etf/basic?code=510050');
        const row = body.data[0] as Json;
        assert.deepEqual(Object.keys(row).sort(), [...ETF_BASIC_FIELDS].sort());
        assert.equal(row.category, null);
        assert.equal(row.is_connected, null);
      });
    });

    describe('authentication', () => {
      it('missing Q-API-KEY → 401 / 4010, invalid → 401 / 4012, an ingest key → 401 / 4012, all in the envelope', async () => {
        for (const [key, code] of [
          [null, 4010],
          ['wrong', 4012],
          [INGEST_KEY, 4012],
        ] as const) {
          const res = await get(h.app, '/api/v1/etf/kline', key);
          assert.equal(res.statusCode, 401);
          const body = json(res) as unknown as Envelope;
          assert.equal(body.code, code);
          assert.deepEqual(body.data, []);
          assertMeta(body.meta, { total: 0, limit: 100, offset: 0, has_more: false });
        }
      });
      it('every authenticated query response carries RateLimit and RateLimit-Policy, errors included', async () => {
        for (const url of ['/api/v1/etf/kline', '/api/v1/etf/kline?limit=0']) {
          const res = await get(h.app, url);
          assert.ok(res.headers['ratelimit-policy'], `${url} RateLimit-Policy`);
          assert.ok(res.headers.ratelimit, `${url} RateLimit`);
        }
      });
      it('/health needs no key', async () => {
        const res = await get(h.app, '/health', null);
        assert.equal(res.statusCode, 200);
        assert.equal(json(res).status, 'ok');
        assert.equal(json(res).storage, backend);
      });
    });

    describe('pagination, sort and filters over etf_daily', () => {
      const codes = ['510300', '510500', '159919'];
      const dates = days('2020-01-01', 800);
      before(async () => {
        for (const code of codes) {
          const rows = dates.map((d, i) => etfBar(code, d, { close: Math.round(i / 10) }));
          assert.equal((await push(h.app, batch('etf_daily', rows))).statusCode, 200);
        }
      });

      it('limit defaults to 100, is clamped to 1000, and total / has_more are exact', async () => {
        const def = await env(h, '/api/v1/etf/kline');
        assert.equal(def.data.length, 100);
        assertMeta(def.meta, { total: 2400, limit: 100, offset: 0, has_more: true });
        const big = await env(h, '/api/v1/etf/kline?limit=5000');
        assert.equal(big.meta.limit, 1000);
        assert.equal(big.data.length, 1000);
        const last = await env(h, '/api/v1/etf/kline?limit=1000&offset=2000');
        assert.equal(last.data.length, 400);
        assert.equal(last.meta.has_more, false);
        const beyond = await env(h, '/api/v1/etf/kline?offset=99999');
        assert.deepEqual(beyond.data, []);
        assert.equal(beyond.meta.total, 2400);
      });

      it('visits every row exactly once across pages, also when the sort field has ties', async () => {
        for (const q of ['', '&sort=close&order=desc', '&sort=source']) {
          const seen = new Set<string>();
          for (let offset = 0; offset < 2400; offset += 700) {
            const page = await env(h, `/api/v1/etf/kline?limit=700&offset=${offset}${q}`);
            for (const r of page.data) {
              const k = `${String(r.code)}|${String(r.date)}`;
              assert.ok(!seen.has(k), `row ${k} seen twice (${q})`);
              seen.add(k);
            }
          }
          assert.equal(seen.size, 2400, q);
        }
      });

      it('a page past the first is the slice of the rows read from the start (picked by row id or ctid)', async () => {
        // Offset 0 is read as one statement; a later page by row ids (SQLite's rowid, PostgreSQL's
        // ctid) picked in a subquery (selectParts): each deep page must be the same rows
        // in the same order.
        for (const q of [
          '&sort=close&order=desc',
          '&sort=open&order=asc',
          '&sort=volume&order=desc&fields=date,close',
          '&code=510300,510500&date_from=2020-03-01&sort=close',
          '&source_priority=eastmoney&sort=date&order=asc',
        ]) {
          const all = (await env(h, `/api/v1/etf/kline?limit=1000${q}`)).data;
          assert.equal(all.length, 1000, q);
          for (const [offset, limit] of [
            [1, 5],
            [333, 250],
            [990, 10],
          ] as const) {
            const page = await env(h, `/api/v1/etf/kline?limit=${limit}&offset=${offset}${q}`);
            assert.deepEqual(page.data, all.slice(offset, offset + limit), `${q} offset ${offset}`);
            assert.equal(page.meta.offset, offset);
          }
        }
      });

      it('defaults to the catalog sort (date desc) with ties broken by the unique key ascending', async () => {
        const page = await env(h, '/api/v1/etf/kline?limit=3');
        assert.deepEqual(
          page.data.map((r) => [r.date, r.code]),
          [
            [dates.at(-1), '159919'],
            [dates.at(-1), '510300'],
            [dates.at(-1), '510500'],
          ],
        );
        const asc = await env(h, '/api/v1/etf/kline?limit=1&sort=date&order=asc');
        assert.equal(asc.data[0]?.date, dates[0]);
      });

      it('filters exactly, by inclusive date range, and combines them', async () => {
        const one = await env(
          h,
          '/api/v1/etf/kline?code=510300&date_from=2020-01-10&date_to=2020-01-19&limit=1000',
        );
        assert.equal(one.meta.total, 10);
        assert.deepEqual(new Set(one.data.map((r) => r.code)), new Set(['510300']));
        assert.equal(one.data.at(-1)?.date, '2020-01-10');
        assert.equal(one.data[0]?.date, '2020-01-19');
        assert.equal((await env(h, '/api/v1/etf/kline?date=2020-01-10')).meta.total, 3);
        assert.equal(
          (await env(h, '/api/v1/etf/kline?date_from=2020-01-10&date_to=2020-01-09')).meta.total,
          0,
        );
      });

      it('400 / 4001 naming what is allowed: unknown parameters, sort fields, order, limits, offsets, dates', async () => {
        await expect400(h, '/api/v1/etf/kline?symbol=510300', 'allowed: code, date, source');
        await expect400(h, '/api/v1/etf/kline?sort=price', 'code, date, open');
        await expect400(h, '/api/v1/etf/kline?order=up', 'asc or desc');
        for (const bad of ['0', '-1', '1.5', 'abc', '1e3', ''])
          await expect400(h, `/api/v1/etf/kline?limit=${bad}`, 'limit');
        for (const bad of ['-1', '1.5', 'x']) await expect400(h, `/api/v1/etf/kline?offset=${bad}`, 'offset');
        for (const bad of ['2024-02-30', '2024/01/01', '20240230', '2024011', 'yesterday']) {
          await expect400(h, `/api/v1/etf/kline?date_from=${bad}`, 'date_from');
          await expect400(h, `/api/v1/etf/kline?date=${bad}`, 'date');
        }
        await expect400(h, '/api/v1/etf/kline?limit=1&limit=2', 'once');
        await expect400(h, '/api/v1/etf/basic?date_from=2024-01-01', 'allowed');
        await expect400(h, '/api/v1/features/etf-risk?window=ten', 'integer');
      });

      it('treats injection attempts as data or refuses them, and the data stays intact', async () => {
        await expect400(h, `/api/v1/etf/kline?sort=${encodeURIComponent('date; DROP TABLE etf_daily')}`);
        await expect400(h, `/api/v1/etf/kline?order=${encodeURIComponent('desc; DELETE FROM etf_daily')}`);
        await expect400(h, `/api/v1/etf/kline?${encodeURIComponent("code' OR '1'='1")}=x`);
        const v = await env(h, `/api/v1/etf/kline?code=${encodeURIComponent("510300' OR '1'='1")}`);
        assert.equal(v.meta.total, 0);
        const l = await env(h, `/api/v1/etf/basic?name=${encodeURIComponent("%' OR 1=1 --")}`);
        assert.equal(l.code, 0);
        assert.equal((await env(h, '/api/v1/etf/kline')).meta.total, 2400);
      });
    });

    describe('like filters', () => {
      before(async () => {
        await push(
          h.app,
          batch('etf_basic', [
            { code: 'L1', name: 'CSI 300 ETF', fund_company: 'Huatai-PineBridge' },
            { code: 'L2', name: 'csi 500 etf', fund_company: 'China Southern' },
            { code: 'L3', name: '100% Gold_ETF', fund_company: '华夏基金' },
            { code: 'L4', name: 'Gold ETF', fund_company: 'Ünïcode Fund' },
          ]),
        );
      });
      it('match %value% case-insensitively', async () => {
        const r = await env(h, '/api/v1/etf/basic?name=CsI&sort=code');
        assert.deepEqual(
          r.data.map((x) => x.code),
          ['L1', 'L2'],
        );
        assert.deepEqual(
          (await env(h, `/api/v1/etf/basic?fund_company=${encodeURIComponent('华夏')}`)).data.map(
            (x) => x.code,
          ),
          ['L3'],
        );
        assert.deepEqual(
          (await env(h, `/api/v1/etf/basic?fund_company=${encodeURIComponent('ÜNÏ')}`)).data.map(
            (x) => x.code,
          ),
          ['L4'],
        );
      });
      it('treat % and _ in the value literally', async () => {
        assert.deepEqual(
          (await env(h, '/api/v1/etf/basic?name=%25')).data.map((x) => x.code),
          ['L3'],
        );
        assert.deepEqual(
          (await env(h, '/api/v1/etf/basic?name=d_e')).data.map((x) => x.code),
          ['L3'],
        );
        assert.equal((await env(h, '/api/v1/etf/basic?name=_')).meta.total, 1);
      });
    });

    it('answers unknown /api/v1 paths with 404 in the envelope', async () => {
      const res = await get(h.app, '/api/v1/etf/nothing');
      assert.equal(res.statusCode, 404);
      assert.deepEqual((json(res) as unknown as Envelope).data, []);
    });

    describe('OpenAPI and docs', () => {
      it('/openapi.json is OpenAPI 3.1 with every catalog endpoint, its parameters, both auth headers and the ingest interface', async () => {
        const res = await get(h.app, '/openapi.json', null);
        assert.equal(res.statusCode, 200);
        const doc = json(res) as {
          openapi: string;
          paths: Record<string, { get?: { parameters: { name: string }[] } }>;
          components: { securitySchemes: Record<string, { name?: string }> };
        };
        assert.equal(doc.openapi, '3.1.0');
        for (const d of CATALOG.datasets) {
          const op = doc.paths[d.endpoint]?.get;
          assert.ok(op, `${d.endpoint} documented`);
          const names = op.parameters.map((p) => p.name);
          for (const f of [...d.exact, ...d.like])
            assert.ok(names.includes(f.apiName), `${d.endpoint} ${f.apiName}`);
          if (d.range) assert.ok(names.includes('date_from'));
        }
        assert.ok(doc.paths['/api/v1/upstream/ingest/batches']);
        assert.ok(doc.paths['/api/v1/upstream/ingest/batches/{batch_id}']);
        const headers = Object.values(doc.components.securitySchemes).map((s) => s.name);
        assert.ok(headers.includes('Q-API-KEY') && headers.includes('UP-API-KEY'));
      });
      it('/docs serves the interactive page', async () => {
        const res = await h.app.inject({ method: 'GET', url: '/docs/' });
        assert.equal(res.statusCode, 200);
        assert.match(res.body, /swagger/i);
      });
      it('/docs/json and /docs/yaml serve the document /openapi.json serves (built on first use)', async () => {
        const [openapi, asJson, asYaml] = await Promise.all(
          ['/openapi.json', '/docs/json', '/docs/yaml'].map((url) => h.app.inject({ method: 'GET', url })),
        );
        for (const res of [openapi, asJson, asYaml])
          assert.equal(res?.statusCode, 200, res?.body.slice(0, 300));
        const doc = json(openapi!) as { openapi: string; paths: Record<string, unknown> };
        assert.ok(Object.keys(doc.paths).length > CATALOG.datasets.length);
        assert.deepEqual(json(asJson!), doc);
        assert.match(asYaml!.body, /^openapi: 3\.1\.0$/m);
        assert.match(
          asYaml!.body,
          new RegExp(`^  ${CATALOG.datasets[0]!.endpoint.replace(/\//g, '\\/')}:$`, 'm'),
        );
      });
    });
  });
}
