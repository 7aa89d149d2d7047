// Issue 30: a minute page's rows are written as JSON straight from the decoded columns
// (minute-columns.ts rowJsonWriter), not as objects through the route's response serialiser.
// The answer must be the same bytes: here every body of the route, on both backends, against
// the envelope the serialiser makes of the object rows of the same plan — projections in any
// order, resampled and adjusted bars, null volumes and amounts, several days and sources, as_of,
// value sorts, time bounds and cursors.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import build from 'fast-json-stringify';
import { backends, get, push, startApp, type Harness } from '../helpers/harness.js';
import { adjFactor, batch } from '../helpers/batches.js';
import { dayBars } from '../helpers/minute-bars.js';
import { CATALOG, type Dataset } from '../../src/catalog/catalog.js';
import { envelopeSchema } from '../../src/contract/envelope.js';
import { rowSchema } from '../../src/contract/rows.js';
import { success } from '../../src/http/envelope.js';
import { pageMeta } from '../../src/query/query-page.js';

const D1 = '2024-03-01';
const D2 = '2024-03-04';
const morning = (b: { time: string }): boolean => b.time.slice(11, 16) <= '11:30';
const stockBars = [
  ...dayBars('600000', D1),
  ...dayBars('600000', D2),
  // A half day.
  ...dayBars('600001', D1).filter(morning),
];
const tushareBars = dayBars('600000', D1, 20, 'tushare');
// Volume missing on some bars, amount on all.
const indexBars = dayBars('000300', D1).map((b, i) => ({
  ...b,
  volume: i % 7 === 3 ? null : b.volume,
  amount: null,
}));

function dataset(name: string): Dataset {
  const d = CATALOG.byName.get(name);
  if (!d) throw new Error(name);
  return d;
}

for (const backend of await backends()) {
  describe(`minute pages: rows written from the columns, the serialiser's bytes (${backend})`, () => {
    let h: Harness;
    let asOf = '';

    before(async () => {
      h = await startApp(backend);
      for (const [name, rows, source] of [
        ['stock_minute', stockBars, 'eastmoney'],
        ['stock_minute', tushareBars, 'tushare'],
        ['index_minute', indexBars, 'eastmoney'],
      ] as const) {
        for (const day of [D1, D2]) {
          const onDay = (rows as readonly { date: string }[]).filter((b) => b.date === day);
          if (onDay.length === 0) continue;
          const res = await push(h.app, batch(name, [...onDay], { source, businessDate: day }));
          assert.equal(res.statusCode, 200, res.body);
        }
      }
      const f = await push(h.app, batch('adj_factor', [adjFactor('600000', D1, 2.5, 'eastmoney')]));
      assert.equal(f.statusCode, 200, f.body);
      await new Promise((r) => setTimeout(r, 5));
      asOf = encodeURIComponent(new Date().toISOString());
      await new Promise((r) => setTimeout(r, 5));
      const fix = stockBars
        .filter((b) => b.symbol === '600000' && b.date === D1 && b.time.includes('T10:00'))
        .map((b) => ({ ...b, close: 99.99, high: 99.99 }));
      const res = await push(h.app, batch('stock_minute', fix, { source: 'eastmoney', businessDate: D1 }));
      assert.equal(res.statusCode, 200, res.body);
    });
    after(async () => {
      await h.close();
    });

    /** The route's body for `query`, and the serialiser's envelope of the same plan's object rows. */
    async function compare(name: string, path: string, query: string): Promise<void> {
      const d = dataset(name);
      const res = await get(h.app, `${path}?${query}`);
      assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
      const minute = h.app.services.minute;
      const json = await minute.jsonPage(
        minute.parse(d, Object.fromEntries(new URLSearchParams(query))).plan,
        0,
      );
      // The test is only worth its name where the rows are written as JSON.
      assert.equal(json.rows.kind, 'json', query);
      const plan = minute.parse(d, Object.fromEntries(new URLSearchParams(query))).plan;
      const page = await minute.page(plan, 0);
      assert.equal(page.rows.kind, 'objects');
      // What the route adds to every reader's page (answer-notes.ts: several sources of a key).
      await h.app.services.query.annotate(plan, page);
      const meta = pageMeta(page);
      const serialise = build(envelopeSchema(rowSchema(d)) as Parameters<typeof build>[0]);
      const want = serialise(success({ data: page.rows.rows, meta }));
      assert.ok(page.total > 0, query);
      assert.equal(res.body, want, query);
    }

    const cases: [string, string, string][] = [
      ['stock_minute', '/api/v1/stock/minute', `code=600000&date=${D1}&limit=1000`],
      ['stock_minute', '/api/v1/stock/minute', `code=600001&date=${D1}`],
      ['stock_minute', '/api/v1/stock/minute', `date=${D1}&limit=1000`],
      ['stock_minute', '/api/v1/stock/minute', `date_from=${D1}&limit=700&offset=3`],
      ['stock_minute', '/api/v1/stock/minute', `code=600000&sort=time&order=asc&limit=300`],
      ['stock_minute', '/api/v1/stock/minute', `code=600000&fields=close,time,amount,code`],
      ['stock_minute', '/api/v1/stock/minute', `code=600000&fields=updated_at,created_at,date,source`],
      ['stock_minute', '/api/v1/stock/minute', `date=${D1}&as_of=${asOf}&sort=close&order=asc`],
      ['stock_minute', '/api/v1/stock/minute', `date=${D1}&interval=5m&limit=1000`],
      ['stock_minute', '/api/v1/stock/minute', `code=600000&interval=1d`],
      ['stock_minute', '/api/v1/stock/minute', `code=600000&date=${D1}&adjust=hfq&adjust_source=eastmoney`],
      [
        'stock_minute',
        '/api/v1/stock/minute',
        `code=600000&interval=15m&adjust=qfq&adjust_source=eastmoney&fields=time,open,close`,
      ],
      [
        'stock_minute',
        '/api/v1/stock/minute',
        `code=600000&time_from=${encodeURIComponent(`${D1}T10:00:00+08:00`)}&time_to=${encodeURIComponent(`${D1}T13:30:00+08:00`)}`,
      ],
      ['index_minute', '/api/v1/index/minute', `date=${D1}`],
      ['index_minute', '/api/v1/index/minute', `date=${D1}&interval=30m&fields=volume,amount,time`],
    ];
    for (const [name, path, query] of cases) {
      it(`${path}?${query}`, async () => {
        // as_of is known only once the data is in.
        await compare(name, path, query.replace('as_of=&', `as_of=${asOf}&`));
      });
    }

    it('a page after a cursor, and its next cursor', async () => {
      const first = await get(h.app, `/api/v1/stock/minute?date=${D1}&limit=100`);
      const cursor = (JSON.parse(first.body) as { meta: { next_cursor: string } }).meta.next_cursor;
      assert.ok(cursor);
      await compare('stock_minute', '/api/v1/stock/minute', `date=${D1}&limit=100&cursor=${cursor}`);
    });
  });
}
