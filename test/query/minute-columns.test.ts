// Issue 30: the minute reads decode blocks into columns, resample, adjust and order them there,
// and answer JSON pages and Arrow exports from the same columns by two different paths. Here
// the shapes where they could part — the lunch break, a half day, a stock resuming at 13:00,
// null volumes, two sources of a code-day, hfq, as_of — on both backends: every resampled bar
// against bars computed here from the bars as sent, and every Arrow answer (read by
// apache-arrow) against the JSON answer of the same query, row by row.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tableFromIPC } from 'apache-arrow';
import { backends, get, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { adjFactor, batch } from '../helpers/batches.js';
import { dayBars, endpointReads } from '../helpers/minute-bars.js';
import { roundedSum } from '../../src/query/minute-sessions.js';

const STOCK = '/api/v1/stock/minute';
const INDEX = '/api/v1/index/minute';
const D1 = '2024-03-01';
type Bar = ReturnType<typeof dayBars>[number];

const morning = (b: Bar): boolean => b.time.slice(11, 16) <= '11:30';
const bars: Bar[] = [
  ...dayBars('600000', D1),
  // A second source of the same code-day, other prices.
  ...dayBars('600000', D1, 20, 'tushare'),
  // A half day: the morning session only.
  ...dayBars('600001', D1).filter(morning),
  // Resumes at 13:00, with a gap of ten minutes in the afternoon.
  ...dayBars('600002', D1).filter(
    (b) => !morning(b) && !(b.time.slice(11, 16) > '14:00' && b.time.slice(11, 16) <= '14:10'),
  ),
];
// An index day whose volume is missing on some bars and amount on all.
const indexBars = dayBars('000300', D1).map((b, i) => ({
  ...b,
  symbol: '000300',
  volume: i % 7 === 3 ? null : b.volume,
  amount: null,
}));

/** The session of an end minute "HH:MM" and the label of its k-minute period (k = 0: the day's). */
function label(hm: string, k: number, dayEnd: string): string {
  if (k === 0) return dayEnd;
  const m = Number(hm.slice(0, 2)) * 60 + Number(hm.slice(3));
  const [from, to] = m <= 690 ? [570, 690] : [780, 900];
  const end = Math.min(from + Math.ceil((m - from) / k) * k, to);
  return `${String(Math.floor(end / 60)).padStart(2, '0')}:${String(end % 60).padStart(2, '0')}`;
}

/** The bars of `k`-minute periods (0: 1d) of each code and source, computed from the bars as sent. */
function expected(sent: readonly Bar[] | typeof indexBars, k: number): Json[] {
  const groups = new Map<string, (typeof sent)[number][]>();
  for (const b of sent) {
    const g = groups.get(`${b.symbol}|${b.source}`) ?? [];
    g.push(b);
    groups.set(`${b.symbol}|${b.source}`, g);
  }
  const out: Json[] = [];
  for (const g of groups.values()) {
    const last = (g[g.length - 1] as (typeof sent)[number]).time.slice(11, 16);
    const dayEnd = last <= '11:30' ? '11:30' : '15:00';
    const periods = new Map<string, (typeof sent)[number][]>();
    for (const b of g) {
      const l = label(b.time.slice(11, 16), k, dayEnd);
      periods.set(l, [...(periods.get(l) ?? []), b]);
    }
    for (const [l, p] of periods) {
      const sum = (xs: (number | null)[]): number | null =>
        xs.reduce<number | null>(
          (a, x) => (x === null ? a : a === null ? x : Number((a + x).toFixed(6))),
          null,
        );
      out.push({
        time: `${D1}T${l}:00+08:00`,
        code: p[0]?.symbol as string,
        source: p[0]?.source as string,
        open: p[0]?.open as number,
        high: Math.max(...p.map((b) => b.high)),
        low: Math.min(...p.map((b) => b.low)),
        close: p[p.length - 1]?.close as number,
        volume: sum(p.map((b) => b.volume)),
        amount: sum(p.map((b) => b.amount)),
      });
    }
  }
  // The answer's order: time desc, then code, then source.
  const key = (r: Json): string => `${String(r.code)}|${String(r.source)}`;
  return out.sort((a, b) =>
    a.time === b.time ? (key(a) < key(b) ? -1 : 1) : String(a.time) < String(b.time) ? 1 : -1,
  );
}

/** An Arrow answer's rows, each value as the JSON answer has it (times and dates from their instants). */
async function arrowRows(h: Harness, url: string): Promise<Json[]> {
  const res = await get(h.app, url);
  assert.equal(res.statusCode, 200, res.body);
  const table = tableFromIPC(res.rawPayload);
  return table.toArray().map((row: { toJSON(): Record<string, unknown> }) => {
    const r = row.toJSON();
    const out: Json = {};
    for (const f of table.schema.fields) {
      const v = r[f.name];
      out[f.name] = typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.getTime() : (v as Json[string]);
    }
    return out;
  });
}

/** The JSON rows of `query` (every page, by cursor) with times and dates as epoch ms, as Arrow gives them. */
async function jsonRows(h: Harness, url: string, query: string): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(h.app, `${url}?${query}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    out.push(...(body.data as Json[]));
    cursor = (body.meta as Json).next_cursor as string | null;
  } while (cursor);
  return out.map((r) => {
    const o: Json = { ...r };
    for (const k of ['time', 'date', 'updated_at', 'created_at'])
      if (typeof o[k] === 'string') o[k] = Date.parse(o[k] as string);
    return o;
  });
}

for (const backend of await backends()) {
  describe(
    `minute reads from columns: JSON and Arrow agree, resampled bars as computed (${backend})`,
    { timeout: 180_000 },
    () => {
      let h: Harness;
      let asOf = '';
      const stock = endpointReads(() => h.app, STOCK);
      const index = endpointReads(() => h.app, INDEX);
      const same = async (url: string, query: string): Promise<Json[]> => {
        const fromJson = await jsonRows(h, url, query);
        const fromArrow = await arrowRows(h, `${url}?${query}&format=arrow`);
        assert.equal(fromArrow.length, fromJson.length, query);
        fromJson.forEach((r, i) => assert.deepEqual(fromArrow[i], r, `${query}: row ${i}`));
        return fromJson;
      };

      before(async () => {
        h = await startApp(backend);
        for (const source of ['eastmoney', 'tushare']) {
          const res = await push(
            h.app,
            batch(
              'stock_minute',
              bars.filter((b) => b.source === source),
              { source, businessDate: D1 },
            ),
          );
          assert.equal(res.statusCode, 200, res.body);
        }
        const idx = await push(h.app, batch('index_minute', indexBars, { businessDate: D1 }));
        assert.equal(idx.statusCode, 200, idx.body);
        const f = await push(h.app, batch('adj_factor', [adjFactor('600000', D1, 2.5, 'eastmoney')]));
        assert.equal(f.statusCode, 200, f.body);
        await new Promise((r) => setTimeout(r, 5));
        asOf = new Date().toISOString();
        await new Promise((r) => setTimeout(r, 5));
        // A correction after asOf: 600000's 10:00 bar from eastmoney.
        const fix = bars
          .filter((b) => b.symbol === '600000' && b.source === 'eastmoney' && b.time.includes('T10:00'))
          .map((b) => ({ ...b, close: 99.99, high: 99.99 }));
        const res = await push(h.app, batch('stock_minute', fix, { businessDate: D1 }));
        assert.equal(res.statusCode, 200, res.body);
      });
      after(async () => {
        await h.close();
      });

      const FIELDS = 'fields=time,code,source,open,high,low,close,volume,amount';
      for (const [interval, k] of [
        ['5m', 5],
        ['30m', 30],
        ['60m', 60],
        ['1d', 0],
      ] as const) {
        it(`interval=${interval} across the lunch break, a half day, a resumed afternoon and two sources (as_of)`, async () => {
          const q = `date=${D1}&interval=${interval}&${FIELDS}&as_of=${encodeURIComponent(asOf)}`;
          const got = await stock.rows(`${q}&limit=1000`);
          assert.deepEqual(got, expected(bars, k));
          await same(STOCK, q);
        });
      }

      it('1m: the correction now, the bar as sent as_of before; JSON and Arrow alike', async () => {
        const q = `code=600000&source=eastmoney&time_from=${encodeURIComponent(`${D1}T10:00:00+08:00`)}&time_to=${encodeURIComponent(`${D1}T10:00:00+08:00`)}`;
        assert.equal((await stock.rows(q))[0]?.close, 99.99);
        const sent = bars.find(
          (b) => b.symbol === '600000' && b.source === 'eastmoney' && b.time.includes('T10:00'),
        );
        assert.equal((await stock.rows(`${q}&as_of=${encodeURIComponent(asOf)}`))[0]?.close, sent?.close);
        await same(STOCK, `date=${D1}`);
        await same(STOCK, `date=${D1}&as_of=${encodeURIComponent(asOf)}&sort=close&order=asc`);
      });

      it('hfq: resampled, every price × the factor; JSON and Arrow alike', async () => {
        const q = `code=600000&interval=15m&adjust=hfq&adjust_source=eastmoney&as_of=${encodeURIComponent(asOf)}&${FIELDS}`;
        const got = await stock.rows(`${q}&limit=1000`);
        const plain = expected(
          bars.filter((b) => b.symbol === '600000'),
          15,
        );
        assert.equal(got.length, plain.length);
        got.forEach((r, i) => {
          const e = plain[i] as Json;
          for (const p of ['open', 'high', 'low', 'close'])
            assert.equal(r[p], (e[p] as number) * 2.5, `${i} ${p}`);
          assert.equal(r.volume, e.volume);
        });
        await same(STOCK, q);
      });

      it('null volumes and amounts: skipped by the sums, null in both answers', async () => {
        const fields = 'fields=time,index_code,source,open,high,low,close,volume,amount';
        const got = await index.rows(`date=${D1}&interval=30m&${fields}`);
        const want = expected(indexBars as unknown as Bar[], 30).map(({ code, ...r }): Json => ({
          ...r,
          index_code: code,
        }));
        const names = fields.slice('fields='.length).split(',');
        assert.deepEqual(
          got,
          want.map((r) => Object.fromEntries(names.map((f) => [f, r[f]]))),
        );
        const rows1m = await same(INDEX, `date=${D1}`);
        assert.equal(
          rows1m.filter((r) => r.volume === null).length,
          indexBars.filter((b) => b.volume === null).length,
        );
        await same(INDEX, `date=${D1}&interval=5m`);
      });

      it('an answer longer than one Arrow batch (8,192 rows): whole chunks passed on, short ones joined; JSON and Arrow alike', async () => {
        // 36 codes' day: 8,640 bars, so the export goes to the encoding thread in two batches,
        // and the two dates' answer joins D1's short table to D2's first chunk.
        const D2 = '2024-03-04';
        const many = Array.from({ length: 36 }, (_, i) => dayBars(String(601000 + i), D2)).flat();
        const res = await push(h.app, batch('stock_minute', many, { source: 'eastmoney', businessDate: D2 }));
        assert.equal(res.statusCode, 200, res.body);
        assert.equal((await same(STOCK, `date=${D2}&${FIELDS}`)).length, many.length);
        await same(STOCK, `date_from=${D1}&${FIELDS}&sort=time&order=asc`);
        await same(STOCK, `date_from=${D1}&interval=5m&${FIELDS}`);
      });
    },
  );
}

// The resampled sums' rounding (minute-sessions.ts roundedSum) is Number(sum.toFixed(6)) without
// the string, for every sum: decimals of every scale the blocks keep, magnitudes up to 10^15,
// negatives, halves, −0.
describe('roundedSum: the same double as Number(sum.toFixed(6))', () => {
  it('on 200,000 sums and the edges', () => {
    let seed = 30;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const cases = [0, -0, 5e-7, -5e-7, 1.5e-6, 2.5e-7, 0.1 + 0.2, 123.4565, 1e21, -1e-7, 2 ** 52 + 0.5];
    for (let i = 0; i < 200_000; i++) {
      const k = Math.floor(random() * 7);
      const mag = 10 ** Math.floor(random() * 16);
      const a = (Math.round(random() * mag * 10 ** k) / 10 ** k) * (random() < 0.1 ? -1 : 1);
      const b = Math.round(random() * mag * 10 ** k) / 10 ** k;
      cases.push(a + b, (random() - 0.5) * 10 ** (random() * 16));
    }
    for (const s of cases) assert.ok(Object.is(roundedSum(s), Number(s.toFixed(6))), String(s));
  });
});
