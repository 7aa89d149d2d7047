import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CATALOG } from '../../src/catalog/catalog.js';
import { QualityService } from '../../src/query/quality-service.js';
import type { Store } from '../../src/storage/store.js';
import { backends, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { adjFactor, batch, days, plainBar } from '../helpers/batches.js';

/**
 * Data as it arrives from real upstreams (issue 27, the outsider pass): one ETF from two sources
 * whose codes are written three ways (`sh510300`, `510300.SH`, `510300`), factors from a third
 * source only (written `510300.SH` too), and a frame pulled and pushed back unchanged, which
 * must be a no-op: every record a duplicate, no revision, the same ETag.
 */

const D = days('2024-05-06', 5); // Mon … Fri
const EM = D.map((d, i) =>
  plainBar(i % 2 ? 'sh510300' : '510300.SH', d, { close: 10 + i, source: 'eastmoney' }),
);
const TS = D.slice(2)
  .concat(days('2024-05-13', 2))
  .map((d, i) => plainBar('510300', d, { close: 20 + i, source: 'tushare' }));
const FACTORS = [
  adjFactor('510300.SH', D[0] as string, 1, 'vendor'),
  adjFactor('sh510300', D[3] as string, 2, 'vendor'),
];

/** The SSE calendar of those two weeks, weekends closed. */
const CAL = days('2024-05-06', 9).map((d) => ({
  exchange: 'SSE',
  date: d,
  is_open: new Date(`${d}T00:00:00Z`).getUTCDay() % 6 === 0 ? 0 : 1,
  source: 'test',
  updated_at: '2024-05-01T00:00:00Z',
}));

type Row = Record<string, unknown>;
const rows = (body: Json): Row[] => body.data as Row[];

for (const backend of await backends()) {
  describe(`messy upstream data (${backend})`, { timeout: 120_000 }, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend);
      for (const [dataset, data, source] of [
        ['etf_daily', EM, 'eastmoney'],
        ['etf_daily', TS, 'tushare'],
        ['adj_factor', FACTORS, 'vendor'],
        ['trade_calendar', CAL, 'test'],
      ] as const) {
        const res = await push(h.app, batch(dataset, data, { source }));
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(json(res).accepted, data.length, res.body);
      }
    });
    after(async () => h?.close());

    it('codes pushed as sh510300 or 510300.SH are stored as 510300, found by every spelling', async () => {
      const all = json(await get(h.app, '/api/v1/etf/kline?limit=1000&sort=code'));
      assert.deepEqual([...new Set(rows(all).map((r) => r.code))], ['510300']);
      assert.equal((all.meta as Json).total, 10);
      for (const spelled of ['510300', 'sh510300', '510300.SH', 'SH510300']) {
        const one = json(await get(h.app, `/api/v1/etf/kline?code=${spelled}&source=eastmoney`));
        assert.equal((one.meta as Json).total, 5, spelled);
      }
      const f = json(await get(h.app, '/api/v1/market/adj-factor?code=510300'));
      assert.deepEqual(
        rows(f).map((r) => r.code),
        ['510300', '510300'],
      );
    });

    it('two spellings of one code in one batch are one key: a different second row is refused', async () => {
      const spelled = [
        plainBar('sh510399', '2024-05-06', { source: 'eastmoney' }),
        plainBar('510399.SH', '2024-05-06', { close: 10.5, source: 'eastmoney' }),
      ];
      const status = json(await push(h.app, batch('etf_daily', spelled, { source: 'eastmoney' })));
      assert.deepEqual([status.status, status.accepted, status.rejected], ['partial', 1, 1]);
      assert.deepEqual(
        (status.errors as Json[]).map((e) => [e.index, e.reason]),
        [[1, 'conflicting duplicate key in batch']],
      );
      const stored = json(await get(h.app, '/api/v1/etf/kline?code=510399'));
      assert.deepEqual(
        rows(stored).map((r) => r.close),
        [10],
      );
    });

    it('two sources: source_priority gives one row per date, the first listed source that has it', async () => {
      const res = json(
        await get(
          h.app,
          '/api/v1/etf/kline?code=510300.SH&source_priority=tushare,eastmoney&sort=date&order=asc',
        ),
      );
      assert.deepEqual(
        rows(res).map((r) => `${String(r.date)} ${String(r.source)}`),
        [
          '2024-05-06 eastmoney',
          '2024-05-07 eastmoney',
          '2024-05-08 tushare',
          '2024-05-09 tushare',
          '2024-05-10 tushare',
          '2024-05-13 tushare',
          '2024-05-14 tushare',
        ],
      );
    });

    it("bars of two sources, factors of a third: each source's bars adjusted with the only factor source", async () => {
      const res = json(
        await get(h.app, '/api/v1/etf/kline?code=sh510300&adjust=hfq&sort=date&order=asc&limit=100'),
      );
      const adjust = (res.meta as Json).adjust as { factors: Json[] };
      assert.deepEqual(adjust.factors.map((f) => `${String(f.source)}→${String(f.factor_source)}`).sort(), [
        'eastmoney→vendor',
        'tushare→vendor',
      ]);
      // hfq: the close times the factor in force (1 before 05-09, 2 from it).
      const em = rows(res).filter((r) => r.source === 'eastmoney');
      assert.deepEqual(
        em.map((r) => r.close),
        [10, 11, 12, 26, 28],
      );
    });

    it('a frame pulled and pushed back unchanged is a no-op: all duplicates, no revision, same ETag', async () => {
      const before = await get(h.app, '/api/v1/etf/kline?code=510300&limit=1000');
      const revisions = async (): Promise<unknown> =>
        (json(await get(h.app, '/api/v1/revisions/etf_daily?limit=1')).meta as Json).total;
      const revs = await revisions();
      // As a client pushes what it pulled: the row names back to the ingest names, created_at
      // (the server's) dropped, one batch per source.
      const pulled: Row[] = rows(json(before)).map(({ code, created_at: _created, ...rest }) => ({
        symbol: code,
        ...rest,
      }));
      for (const source of ['eastmoney', 'tushare']) {
        const mine = pulled.filter((r) => r.source === source);
        const res = await push(h.app, batch('etf_daily', mine, { source }));
        assert.equal(res.statusCode, 200, res.body);
        const status = json(res);
        assert.deepEqual([status.accepted, status.duplicate, status.rejected], [0, mine.length, 0], res.body);
      }
      assert.equal(await revisions(), revs);
      const after = await get(h.app, '/api/v1/etf/kline?code=510300&limit=1000');
      assert.equal(after.headers.etag, before.headers.etag);
      assert.deepEqual(json(after).data, json(before).data);
    });

    it("the quality report's code takes one code: a list is 400 / 4001, not an empty report", async () => {
      const res = await get(h.app, '/api/v1/quality/etf_daily?code=510300,510500');
      assert.equal(res.statusCode, 400);
      assert.equal(json(res).code, 4001);
      assert.match(String(json(res).message), /takes one code/);
      const one = json(await get(h.app, '/api/v1/quality/etf_daily?code=sh510300'));
      assert.deepEqual(
        rows(one).map((r) => r.code),
        ['510300'],
      );
    });
  });

  describe(`quality report checks: cached per code across pages (${backend})`, { timeout: 120_000 }, () => {
    let h: Harness;
    const calls: string[][] = [];
    let service: QualityService;
    const CODES = ['C1', 'C2', 'C3', 'C4', 'C5', 'C6'];
    before(async () => {
      h = await startApp(backend);
      assert.equal((await push(h.app, batch('trade_calendar', CAL, { source: 'test' }))).statusCode, 200);
      // C3 jumps on 05-08 (+50 %), C5 has a bar on Saturday: checks with something to say.
      const bars = CODES.flatMap((c) =>
        D.map((d) => plainBar(c, d, c === 'C3' && d >= '2024-05-08' ? { close: 15, high: 16 } : {})),
      ).concat([plainBar('C5', '2024-05-11')]);
      assert.equal((await push(h.app, batch('etf_daily', bars, { source: 'test' }))).statusCode, 200);
      // The real store, its qualityChecks calls counted.
      const datasets = new Proxy(h.store.datasets, {
        get(target, prop, receiver) {
          const v: unknown = Reflect.get(target, prop, receiver);
          if (typeof v !== 'function') return v;
          if (prop !== 'qualityChecks') return v.bind(target);
          const fn = v as Store['datasets']['qualityChecks'];
          return (...args: Parameters<typeof fn>) => {
            calls.push([...args[1]]);
            return fn.apply(target, args);
          };
        },
      });
      service = new QualityService({ datasets }, CATALOG, { today: () => '2024-05-12' });
    });
    after(async () => h?.close());

    const page = (params: Record<string, string>): Promise<Json[]> =>
      service
        .report('etf_daily', { sort: 'code', order: 'asc', ...params })
        .then((p) => p.rows as unknown as Json[]);

    it('pages read only their own codes; a larger page or another order reads none again', async () => {
      const paged = [
        ...(await page({ limit: '2', offset: '0' })),
        ...(await page({ limit: '2', offset: '2' })),
        ...(await page({ limit: '2', offset: '4' })),
      ];
      assert.deepEqual(calls, [
        ['C1', 'C2'],
        ['C3', 'C4'],
        ['C5', 'C6'],
      ]);
      const whole = await page({ limit: '6' });
      const reversed = await page({ limit: '3', order: 'desc' });
      assert.equal(calls.length, 3, 'no check read again');
      assert.deepEqual(whole, paged);
      assert.deepEqual(reversed, whole.slice(3).reverse());
      const c3 = whole.find((r) => r.code === 'C3');
      assert.deepEqual(
        (c3?.jumps as Json[]).map((j) => j.date),
        ['2024-05-08'],
      );
      assert.deepEqual(whole.find((r) => r.code === 'C5')?.off_calendar_dates, ['2024-05-11']);
      // A fresh service (nothing cached) answers the same.
      const fresh = new QualityService(h.store, CATALOG, { today: () => '2024-05-12' });
      assert.deepEqual((await fresh.report('etf_daily', { sort: 'code', order: 'asc' })).rows, whole);
    });

    it('another jump_pct or a batch that changes the dataset reads the checks again', async () => {
      calls.length = 0;
      await page({ limit: '6', jump_pct: '60' });
      assert.deepEqual(calls, [CODES]);
      const fix = [plainBar('C3', '2024-05-08')];
      assert.equal((await push(h.app, batch('etf_daily', fix, { source: 'test' }))).statusCode, 200);
      calls.length = 0;
      const rows2 = await page({ limit: '6' });
      assert.deepEqual(calls, [CODES]);
      const c3 = rows2.find((r) => r.code === 'C3');
      assert.deepEqual(
        (c3?.jumps as Json[]).map((j) => j.date),
        ['2024-05-09'],
      );
    });
  });
}
