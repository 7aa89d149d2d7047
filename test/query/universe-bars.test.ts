// universe=<index> on the daily bar endpoints over real HTTP on every backend, on the demo data
// (docs/universes.md): every row only where its code was a member on the row's date, equal to an
// independent join of the bars with the membership intervals; adjusted, resampled, exported, under
// as_of, and its answer's version following the intervals.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, push, type Harness, type Json } from '../helpers/harness.js';
import { batch } from '../helpers/batches.js';
import { listeningDemoOn, queryCalls } from '../helpers/demo-seed.js';

const DEMO = { end: '2026-12-04', days: 250, seed: 42 };
const RANGE = 'date_from=2026-01-01&date_to=2026-12-04';

interface Page {
  code: number;
  data: Json[];
  meta: Json & { next_cursor: string | null; total: number };
}

for (const backend of await backends()) {
  describe(`universe= on daily bars (${backend})`, () => {
    let h: Harness;
    let base: string;
    let seededAt: string;
    const { call, page, all } = queryCalls(() => base);
    const keys = (rows: Json[]): string[] => rows.map((r) => `${String(r.code)}|${String(r.date)}`).sort();

    /** The independent join: every stored bar in the range whose code has an interval covering its date. */
    const joined = async (): Promise<string[]> => {
      const spans = await all('/api/v1/index/members?index_code=000300');
      const bars = await all(`/api/v1/stock/daily?${RANGE}`);
      return keys(
        bars.filter((b) =>
          spans.some(
            (s) =>
              s.stock_code === b.code &&
              String(s.in_date) <= String(b.date) &&
              (s.out_date === null || String(b.date) <= String(s.out_date)),
          ),
        ),
      );
    };

    before(async () => {
      ({ h, base, seededAt } = await listeningDemoOn(backend, DEMO));
    });
    after(async () => h?.close());

    it('stock/daily?universe=000300 is the join of the bars with the membership intervals', async () => {
      const expected = await joined();
      const got = await all(`/api/v1/stock/daily?universe=000300&${RANGE}`);
      assert.deepEqual(keys(got), expected);
      // The exit and the re-entry are in it: 002594 has no bar between them, 600087 none after its exit.
      const byd = got.filter((r) => r.code === '002594').map((r) => String(r.date));
      assert.ok(byd.includes('2026-04-14') && byd.includes('2026-08-14'));
      assert.ok(!byd.some((d) => d > '2026-04-14' && d < '2026-08-14'));
      assert.ok(got.filter((r) => r.code === '600087').every((r) => String(r.date) <= '2026-02-03'));
      assert.ok(
        got.some((r) => r.code === '600087'),
        'a member before its exit',
      );
      const first = await page(`/api/v1/stock/daily?universe=000300.SH&${RANGE}&limit=10`);
      assert.equal(first.meta.total, expected.length);
    });

    it('adjusted and resampled: the same member days, meta.adjust there; a month counts only member days', async () => {
      const adjusted = await all(`/api/v1/stock/daily?universe=000300&adjust=qfq&${RANGE}`);
      assert.deepEqual(keys(adjusted), await joined());
      const one = await page(`/api/v1/stock/daily?universe=000300&adjust=qfq&code=002594&${RANGE}&limit=5`);
      assert.ok(one.meta.adjust);
      const months = await all(`/api/v1/stock/daily?universe=000300&interval=1M&code=002594&${RANGE}`);
      const members = (await all(`/api/v1/stock/daily?universe=000300&code=002594&${RANGE}`)).map((r) =>
        String(r.date),
      );
      for (const m of months) {
        const month = String(m.date).slice(0, 7);
        assert.equal(m.bar_count, members.filter((d) => d.startsWith(month)).length, month);
      }
      assert.ok(!months.some((m) => String(m.date).startsWith('2026-06')), 'no member day in June');
    });

    it('an export holds the same rows', async () => {
      const res = await call(`/api/v1/stock/daily?universe=000300&${RANGE}&format=csv&fields=code,date`);
      assert.equal(res.status, 200);
      const lines = (await res.text()).trim().split('\n').slice(1);
      assert.deepEqual(lines.map((l) => l.replace(',', '|')).sort(), await joined());
    });

    it('etf/kline and index/price take it too: no ETF or index is a CSI 300 stock', async () => {
      assert.equal((await page(`/api/v1/etf/kline?universe=000300&${RANGE}`)).meta.total, 0);
      assert.equal((await page(`/api/v1/index/price?universe=000300&${RANGE}`)).meta.total, 0);
    });

    it('a change of the intervals changes the answer, its ETag and total; as_of keeps the old one', async () => {
      const url = `/api/v1/stock/daily?universe=000300&code=000018&${RANGE}&limit=5`;
      const before = await call(url);
      const etag = before.headers.get('etag') ?? '';
      assert.equal(((await before.json()) as Page).meta.total, 0, '000018 was never a member');
      const same = await call(url, { 'if-none-match': etag });
      assert.equal(same.status, 304);
      const res = await push(
        h.app,
        batch('index_members', [
          {
            index_code: '000300',
            stock_code: '000018',
            in_date: '2026-07-01',
            out_date: '2026-07-31',
            source: 'demo',
          },
        ]),
      );
      assert.equal(res.statusCode, 200, res.body);
      const changed = await call(url, { 'if-none-match': etag });
      assert.equal(changed.status, 200);
      const body = (await changed.json()) as Page;
      assert.ok(body.meta.total > 0 && body.data.every((r) => String(r.date).startsWith('2026-07')));
      const then = await page(`${url}&as_of=${encodeURIComponent(seededAt)}`);
      assert.equal(then.meta.total, 0);
    });

    it('bad input: an index without intervals and a value that is not a code are 400 / 4001 naming universe', async () => {
      for (const q of ['universe=399006', 'universe=000905', 'universe=abc']) {
        for (const format of ['json', 'csv']) {
          const res = await call(`/api/v1/stock/daily?${q}&format=${format}`);
          const text = await res.text();
          assert.equal(res.status, 400, `${q} ${format}: ${text}`);
          const body = JSON.parse(text) as Json;
          assert.equal(body.code, 4001);
          assert.equal(body.parameter, 'universe');
        }
      }
      const res = await call('/api/v1/stock/spot?universe=000300');
      assert.equal(res.status, 400, 'a dataset without daily bars does not take it');
    });
  });
}
