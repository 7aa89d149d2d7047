// GET /api/v1/universe over real HTTP on every backend, on the demo data of a fixed end day
// (docs/universes.md): delisted codes in a past universe and not in today's, an ST span, a
// rename, an index exit and re-entry, the snapshot fallback, and what meta says it could not judge.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, push, QUERY_KEY, type Harness, type Json } from '../helpers/harness.js';
import { batch } from '../helpers/batches.js';
import { listeningDemoOn } from '../helpers/demo-seed.js';

const DEMO = { end: '2026-12-04', days: 250, seed: 42 };

interface Answer {
  code: number;
  data: Json[];
  meta: Json & { warnings: string[]; no_basic: string[]; no_name: string[]; no_weight: string[] };
}

for (const backend of await backends()) {
  describe(`GET /api/v1/universe (${backend})`, () => {
    let h: Harness;
    let base: string;
    let seededAt: string;
    const call = (query: string): Promise<Response> =>
      fetch(`${base}/api/v1/universe?${query}`, { headers: { 'q-api-key': QUERY_KEY } });
    const universe = async (query: string): Promise<Answer> => {
      const res = await call(query);
      const text = await res.text();
      assert.equal(res.status, 200, `${query}: ${text}`);
      return JSON.parse(text) as Answer;
    };
    const codes = (a: Answer): string[] => a.data.map((r) => String(r.code));
    const row = (a: Answer, code: string): Json | undefined => a.data.find((r) => r.code === code);

    before(async () => {
      ({ h, base, seededAt } = await listeningDemoOn(backend, DEMO, { MDS_REVISIONS_KEEP_DAYS: '30' }));
    });
    after(async () => h?.close());

    it('a delisted code is in a past universe and not in the last day’s; a code listed later is not in the past', async () => {
      const past = await universe('date=2026-03-02');
      const p = row(past, '600087');
      assert.ok(p, '600087 listed on 2026-03-02');
      assert.equal(p.delist_date, '2026-06-08');
      assert.equal(p.list_status, 'D');
      assert.ok(row(past, '000018'));
      assert.equal(row(past, '688981'), undefined, 'listed on 2026-03-27');
      assert.equal(past.meta.calendar, 'open');
      assert.deepEqual(past.meta.warnings, []);

      const last = await universe('date=2026-12-04');
      assert.equal(row(last, '600087'), undefined);
      assert.equal(row(last, '000018'), undefined);
      assert.equal(row(last, '688981')?.board, 'star');
      assert.equal(last.meta.total, 12);
      // The day before the delisting day is the last listed one; the delisting day is not.
      assert.ok(row(await universe('date=2026-06-05'), '600087'));
      assert.equal(row(await universe('date=2026-06-08'), '600087'), undefined);
      // list_status selects by today's status: the codes of that day delisted since.
      assert.deepEqual(codes(await universe('date=2026-03-02&list_status=D')), ['000018', '600087']);
    });

    it('an ST span: is_st and the ST name inside it, not before nor after; include_st=false leaves it out', async () => {
      const before = row(await universe('date=2026-03-26'), '600610');
      assert.deepEqual([before?.name, before?.is_st], ['中毅达', false]);
      const inside = await universe('date=2026-04-15');
      assert.deepEqual([row(inside, '600610')?.name, row(inside, '600610')?.is_st], ['ST中毅', true]);
      assert.deepEqual([row(inside, '600087')?.name, row(inside, '600087')?.is_st], ['*ST长油', true]);
      const noSt = await universe('date=2026-04-15&include_st=false');
      assert.equal(row(noSt, '600610'), undefined);
      assert.equal(row(noSt, '600087'), undefined);
      assert.equal(noSt.meta.total, (inside.meta.total as number) - 2);
      const afterSpan = row(await universe('date=2026-05-20'), '600610');
      assert.deepEqual([afterSpan?.name, afterSpan?.is_st], ['中毅达', false]);
    });

    it('a rename: the old name on an old day, the new one after', async () => {
      assert.equal(row(await universe('date=2026-03-02'), '601012')?.name, '隆基股份');
      assert.equal(row(await universe('date=2026-05-04'), '601012')?.name, '隆基绿能');
    });

    it('an index exit and re-entry, from the membership intervals, with weights from the last snapshot', async () => {
      const early = await universe('date=2026-01-05&index=000300');
      assert.equal(early.meta.membership, 'members');
      assert.ok(row(early, '600087'), 'a member until 2026-02-03');
      assert.equal(row(early, '300750'), undefined, 'enters on 2026-02-20');
      assert.equal(row(early, '002594')?.in_date, '2011-12-12');
      assert.equal(early.meta.snapshot_date, null);
      assert.ok(early.meta.warnings.some((w) => w.includes('weights are null')));

      const out = await universe('date=2026-06-01&index=000300.SH');
      assert.equal(out.meta.index, '000300');
      assert.equal(row(out, '002594'), undefined, 'out after 2026-04-14');
      assert.equal(row(out, '600087'), undefined);
      assert.ok(row(out, '300750'));
      // The last day of an interval is a member's day.
      assert.ok(row(await universe('date=2026-04-14&index=000300'), '002594'));

      const back = await universe('date=2026-12-04&index=000300');
      assert.equal(row(back, '002594')?.in_date, '2026-08-14');
      assert.equal(back.meta.snapshot_date, '2026-12-04');
      assert.equal(back.meta.total, 10);
      assert.ok(back.data.every((r) => typeof r.weight === 'number' && r.index_code === '000300'));
      assert.deepEqual(back.meta.no_weight, []);
      // Filters of stock_basic apply to members too.
      assert.deepEqual(codes(await universe('date=2026-12-04&index=000300&board=chinext')), ['300750']);
    });

    it('an index with only snapshots: the last snapshot on or before the day, said in meta', async () => {
      const a = await universe('date=2026-11-20&index=000905');
      assert.equal(a.meta.membership, 'snapshots');
      assert.equal(a.meta.snapshot_date, '2026-11-06');
      assert.equal(a.meta.total, 10);
      const before = await universe('date=2026-09-01&index=000905');
      assert.equal(before.meta.membership, 'snapshots');
      assert.deepEqual(before.data, []);
      assert.ok(
        before.meta.warnings.some((w) => w.includes('no constituents snapshot on or before 2026-09-01')),
      );
    });

    it('meta says what it could not judge: an index with neither, a day outside the calendar, a closed day', async () => {
      const none = await universe('date=2026-12-04&index=399006');
      assert.equal(none.meta.membership, 'none');
      assert.deepEqual(none.data, []);
      assert.ok(none.meta.warnings.some((w) => w.includes('neither membership intervals nor constituents')));

      const outside = await universe('date=2025-06-02');
      assert.equal(outside.meta.calendar, 'outside');
      assert.ok(outside.meta.warnings.some((w) => w.includes('outside the stored trading calendar')));
      assert.ok(row(outside, '600519'), 'the listings still answer');
      assert.equal((await universe('date=2026-12-05')).meta.calendar, 'closed');
    });

    it('a member without a stock_basic row is kept and named in meta.no_basic (left out under a listing filter)', async () => {
      const res = await push(
        h.app,
        batch('index_members', [
          { index_code: '000016', stock_code: '600000', in_date: '2020-01-02', source: 'test' },
          { index_code: '000016', stock_code: '600519', in_date: '2020-01-02', source: 'test' },
        ]),
      );
      assert.equal(res.statusCode, 200, res.body);
      const a = await universe('date=2026-12-04&index=000016');
      assert.deepEqual(codes(a), ['600000', '600519']);
      assert.deepEqual(a.meta.no_basic, ['600000']);
      assert.deepEqual(a.meta.no_name, ['600000']);
      assert.deepEqual(
        [row(a, '600000')?.name, row(a, '600000')?.is_st, row(a, '600000')?.list_date],
        [null, null, null],
      );
      const filtered = await universe('date=2026-12-04&index=000016&exchange=SH');
      assert.deepEqual(codes(filtered), ['600519']);
      assert.deepEqual(filtered.meta.no_basic, ['600000']);
    });

    it('as_of: the universe as the stored data gave it at that instant', async () => {
      const res = await push(
        h.app,
        batch('index_members', [
          { index_code: '000300', stock_code: '000018', in_date: '2026-01-05', source: 'demo' },
        ]),
      );
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(row(await universe('date=2026-03-02&index=000300'), '000018'));
      const then = await universe(`date=2026-03-02&index=000300&as_of=${encodeURIComponent(seededAt)}`);
      assert.equal(row(then, '000018'), undefined);
      assert.ok(row(then, '600519'));
    });

    it('pages: limit and offset over the whole universe, total unchanged', async () => {
      const all = await universe('date=2026-03-02');
      const page = await universe('date=2026-03-02&limit=5&offset=5');
      assert.deepEqual(codes(page), codes(all).slice(5, 10));
      assert.equal(page.meta.total, all.meta.total);
      assert.equal(page.meta.has_more, true);
    });

    it('bad input: 400 with its code, naming the parameter', async () => {
      for (const [query, code, mention] of [
        ['', 4001, 'date'],
        ['date=2026-13-01', 4001, 'date'],
        ['date=2026-02-30', 4001, 'date'],
        ['date=2026-12-04&index=abc', 4001, 'index'],
        ['date=2026-12-04&include_st=maybe', 4001, 'include_st'],
        ['date=2026-12-04&board=nasdaq', 4001, 'board'],
        ['date=2026-12-04&limit=0', 4001, 'limit'],
        ['date=2026-12-04&colour=red', 4001, 'colour'],
        ['date=2026-12-04&as_of=yesterday', 4001, 'as_of'],
        ['date=2026-12-04&as_of=2000-01-01T00:00:00Z', 4005, 'horizon'],
      ] as const) {
        const res = await call(query);
        const body = (await res.json()) as Json;
        assert.equal(res.status, 400, `${query}: ${JSON.stringify(body)}`);
        assert.equal(body.code, code, query);
        assert.match(String(body.message), new RegExp(mention), query);
      }
    });
  });
}
