import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CATALOG, type Dataset } from '../../src/catalog/catalog.js';
import { QueryService } from '../../src/query/query-service.js';
import { rowJson, rowJsonFields } from '../../src/model/row-json.js';
import type { Value } from '../../src/model/values.js';
import { backends, push, startApp, type Harness } from '../helpers/harness.js';
import { adjFactor as factor, batch } from '../helpers/batches.js';

/**
 * Adjusted pages are adjusted in the process (query-service.ts, factors kept per factor
 * version) when the page is a page of the stored rows, and by the SQL (bars-sql.ts) otherwise:
 * both must give the same values, bit for bit. Prices with two decimals (not exact in binary),
 * factors with several digits, null prices and pre-closes, factors before the first bar and
 * after the last, a code without factors and one with factors from two sources; every page is
 * read both ways and compared with Object.is on each value.
 */

let seed = 17;
const rand = (): number => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};
const price = (): number => Math.round((1 + rand() * 20) * 100) / 100;

const DAYS: string[] = [];
for (let t = Date.parse('2024-01-02T00:00:00Z'); DAYS.length < 120; t += 86_400_000) {
  const d = new Date(t);
  if (d.getUTCDay() !== 0 && d.getUTCDay() !== 6) DAYS.push(d.toISOString().slice(0, 10));
}
const CODES = ['A', 'B', 'C', 'D', 'NOF', 'TWO'];

const bars = CODES.flatMap((symbol, c) =>
  DAYS.map((date, i) => {
    const close = price();
    const pre = i % 17 === 5 ? null : price();
    return {
      symbol,
      date,
      open: (i + c) % 11 === 3 ? null : price(),
      high: price(),
      low: price(),
      close,
      pre_close: pre,
      change: i % 13 === 7 ? null : pre === null ? Math.round(rand() * 100) / 100 : close - pre,
      pct_chg: 1.25,
      volume: 1000 + i,
      amount: 12345.67,
      source: 'test',
      updated_at: `${date}T08:30:00Z`,
    };
  }),
);

// Factor dates on bar days, between them, before the first bar and after the last.
const factors = [
  ...['A', 'B', 'C', 'D', 'TWO'].flatMap((symbol, c) =>
    [DAYS[10], '2024-02-17', DAYS[40 + c], DAYS[90], '2024-09-01']
      .filter((d, i) => symbol !== 'D' || i > 1)
      .map((date, i) => factor(symbol, date as string, 1 + i * 0.137 + c * 0.0713 + rand() / 7)),
  ),
  factor('C', '2023-12-01', 0.813),
  factor('TWO', DAYS[20] as string, 1.7, 'other'),
  factor('TWO', DAYS[60] as string, 2.9, 'other'),
];

for (const backend of await backends()) {
  describe(`adjusted pages: in process and in SQL alike (${backend})`, () => {
    let h: Harness;
    let inProcess: QueryService;
    let inSql: QueryService;
    const etf = CATALOG.byName.get('etf_daily') as Dataset;

    before(async () => {
      h = await startApp(backend);
      for (const b of [batch('etf_daily', bars), batch('adj_factor', factors)]) {
        const res = await push(h.app, b);
        assert.equal(res.statusCode, 200, res.body);
      }
      inProcess = new QueryService(h.store, CATALOG);
      inSql = new QueryService(h.store, CATALOG, { adjustInProcess: false });
    });
    after(async () => h?.close());

    const same = async (params: Record<string, string>): Promise<string | null> => {
      const version = await inSql.version(etf);
      const a = await inProcess.page(inProcess.parse(etf, params).plan, version);
      const b = await inSql.page(inSql.parse(etf, params).plan, version);
      assert.equal(b.rows.kind, 'objects');
      const rb = b.rows.rows as Record<string, unknown>[];
      const what = JSON.stringify(params);
      // Whole rows come as row JSON: the same text as the stored format gives the SQL's values.
      assert.equal(a.rows.kind, params.fields === undefined ? 'json' : 'objects', what);
      const ra =
        a.rows.kind === 'json'
          ? a.rows.rows.map((text, i) => {
              const o = rb[i] as Record<string, Value>;
              const columns = Object.fromEntries(etf.rowFields.map((f) => [f.name, o[f.apiName] ?? null]));
              assert.equal(text, `${rowJson(etf)(columns)},"created_at":"${String(o.created_at)}"}`, what);
              return JSON.parse(text) as Record<string, unknown>;
            })
          : (a.rows.rows as Record<string, unknown>[]);
      assert.equal(ra.length, rb.length, what);
      if (params.date_from !== '2030-01-01' && params.cursor === undefined)
        assert.ok(ra.length > 0, `${what}: no rows`);
      for (const [i, row] of ra.entries()) {
        const other = rb[i] as Record<string, unknown>;
        assert.deepEqual(Object.keys(row), Object.keys(other), what);
        for (const k of Object.keys(row)) {
          // JSON text has no -0: compared as text above.
          if (a.rows.kind === 'json' && row[k] === 0) continue;
          assert.ok(
            Object.is(row[k], other[k]),
            `${what} row ${i} ${k}: ${String(row[k])} vs ${String(other[k])}`,
          );
        }
      }
      assert.deepEqual(
        { ...a, rows: null },
        { ...b, rows: null },
        `${what}: total, paging, cursor and meta.adjust`,
      );
      return a.nextCursor;
    };

    test('every method, anchor, code, window, sort, page and projection', async () => {
      let compared = 0;
      for (const adjust of ['qfq', 'hfq']) {
        const anchors =
          adjust === 'qfq' ? [null, '2023-06-01', DAYS[10], '2024-03-03', '2025-01-01'] : [null];
        for (const anchor of anchors) {
          for (const code of [...CODES.filter((c) => c !== 'TWO'), null]) {
            const extras: Record<string, string>[] = [
              {},
              { date_from: DAYS[5] as string, date_to: DAYS[70] as string, limit: '25', offset: '10' },
              { sort: 'date', order: 'asc', limit: '30' },
              { sort: 'volume', order: 'desc', limit: '7' },
              { fields: 'date,change', limit: '40' },
              { fields: 'close,open', sort: 'date', order: 'asc', limit: '50', offset: '60' },
              { date_from: '2030-01-01' },
            ];
            for (const extra of extras) {
              const params: Record<string, string> = { adjust, ...extra };
              if (anchor !== null && anchor !== undefined) params.adjust_anchor = anchor;
              if (code !== null) params.code = code;
              else params.source = 'test';
              if (code === null) {
                // Without a code filter every code is checked for mixed sources: TWO has two.
                params.adjust_source = 'test';
              }
              const cursor = await same(params);
              compared++;
              if (cursor !== null) {
                await same({ ...params, cursor });
                compared++;
              }
            }
          }
        }
      }
      assert.ok(compared > 300, String(compared));
    });

    test('a code with factors of two sources, picked by adjust_source', async () => {
      for (const adjust of ['qfq', 'hfq']) {
        for (const source of ['test', 'other']) {
          await same({ code: 'TWO', adjust, adjust_source: source, limit: '200' });
          if (adjust === 'qfq')
            await same({ code: 'TWO', adjust, adjust_source: source, adjust_anchor: DAYS[30] as string });
        }
      }
    });

    test('a batch into the factors is seen by the next page (the kept factors follow its version)', async () => {
      const params = { code: 'A', adjust: 'qfq', limit: '200' };
      const version = await inSql.version(etf);
      const before = await inProcess.page(inProcess.parse(etf, params).plan, version);
      const res = await push(h.app, batch('adj_factor', [factor('A', DAYS[100] as string, 9.5)]));
      assert.equal(res.statusCode, 200, res.body);
      await same(params);
      const later = await inProcess.page(inProcess.parse(etf, params).plan, version);
      assert.notDeepEqual(later.rows, before.rows);
    });
  });
}

describe('stored row JSON read back and written over (row-json.ts)', () => {
  test('escaped strings, keys inside strings, nulls, exponents', () => {
    const etf = CATALOG.byName.get('etf_daily') as Dataset;
    const row: Record<string, Value> = {
      symbol: 'a"b\\c,"open":1,"x\u00e9\n',
      date: '2024-01-02',
      open: null,
      high: 1e21,
      low: 5e-7,
      close: 0.1,
      pre_close: 3,
      change: -2.9,
      pct_chg: null,
      volume: 7,
      amount: null,
      turnover_rate: 1.5,
      source: 's,"close":9}',
      updated_at: '2024-01-02T00:00:00Z',
    };
    const json = `${rowJson(etf)(row)},"created_at":"2024-01-03T00:00:00Z"}`;
    const fields = etf.fields.filter((f) =>
      ['symbol', 'date', 'open', 'high', 'close', 'change'].includes(f.name),
    );
    const io = rowJsonFields(etf, fields);
    const { values, at } = io.read(json);
    fields.forEach((f, i) => assert.ok(Object.is(values[i], row[f.name]), f.name));
    const written = [...values];
    [written[2], written[4], written[5]] = [2.5, 1 / 3, null];
    const out = io.write(json, at, written, [2, 4, 5]);
    const parsed = JSON.parse(out) as Record<string, unknown>;
    const expected = JSON.parse(json) as Record<string, unknown>;
    assert.deepEqual(parsed, { ...expected, open: 2.5, close: 1 / 3, change: null });
    assert.equal(
      out
        .replace('"open":2.5', '"open":null')
        .replace(`"close":${1 / 3}`, '"close":0.1')
        .replace('"change":null', '"change":-2.9'),
      json,
    );
  });
  test('numbers read back are the doubles Number() reads from their text', () => {
    const etf = CATALOG.byName.get('etf_daily') as Dataset;
    const fields = etf.fields.filter((f) => ['open', 'high', 'low', 'close'].includes(f.name));
    const io = rowJsonFields(etf, fields);
    // Plain decimals of up to 15 digits take the fast path; the rest (exponents, 16-17 digits,
    // -0) must come back as Number() reads them all the same.
    let seed = 7;
    const random = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const numbers: number[] = [0, -0, 1, -1, 0.1, 0.2 + 0.1, 1 / 3, 2 ** 53, 2 ** 53 + 2, 123456789012345];
    numbers.push(999999999999999, 0.000001, 1e-7, 1e21, 4.35, 3.4567, -12.5, 1.7976931348623157e308);
    for (let i = 0; i < 20_000; i++) {
      const scale = 10 ** Math.floor(random() * 12 - 4);
      const v = random() * scale;
      // Prices as stored (a few decimals), and as computed (up to 17 digits).
      numbers.push(Math.round(v * 1000) / 1000, v, -Math.round(v * 100) / 100);
    }
    for (let i = 0; i < numbers.length; i += 4) {
      const [open, high, low, close] = [0, 1, 2, 3].map((k) => numbers[i + k] ?? null);
      const json = `${rowJson(etf)({ symbol: 'x', date: '2024-01-02', open, high, low, close } as Record<string, Value>)}}`;
      const { values } = io.read(json);
      [open, high, low, close].forEach((v, k) => {
        const text = v === null ? 'null' : `${v}`;
        assert.ok(
          Object.is(values[k], v === null ? null : Number(text)),
          `${text} read as ${String(values[k])}`,
        );
      });
    }
  });
});
