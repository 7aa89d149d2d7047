// Issue 30: minute bars. Ingest through the batch interface (checksum, idempotency, 207 per bar,
// full snapshot of a trading date, merge of incremental batches, revisions and revert), reads with
// the common parameters, time_from/time_to, as_of, and interval resampled by session — on both
// backends (docs/minute-bars.md).
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {
  ADMIN_TOKEN,
  backends,
  batchStatus,
  get,
  json,
  push,
  startApp,
  type Harness,
  type Json,
} from '../helpers/harness.js';
import { batch, uniqueId } from '../helpers/batches.js';
import { decodedBlocks } from '../../src/query/minute-query.js';
import { endpointReads, expectParameterErrors, dayBars, sessionMinutes } from '../helpers/minute-bars.js';
import { ROOT } from '../helpers/repo-root.js';

const MINUTE = '/api/v1/stock/minute';
const D1 = '2024-03-01';
const D2 = '2024-03-04';

for (const backend of await backends()) {
  describe(`minute bars (${backend})`, { timeout: 180_000 }, () => {
    let h: Harness;
    const { page, rows, error } = endpointReads(() => h.app, MINUTE);
    const pushed = async (body: unknown, status = 200): Promise<Json> => {
      const res = await push(h.app, body);
      assert.equal(res.statusCode, status, res.body);
      return json(res);
    };

    before(async () => {
      h = await startApp(backend);
      // 600000: two full days; 600001: the first day only (suspended on the second).
      await pushed(batch('stock_minute', [...dayBars('600000', D1), ...dayBars('600001', D1)]));
      await pushed(batch('stock_minute', dayBars('600000', D2)));
    });
    after(async () => {
      await h.close();
    });

    it('a day of 240 bars, labelled by their end minute with the exchange offset, newest first', async () => {
      const body = await page(`code=600000&date=${D1}&limit=1000`);
      const data = body.data as Json[];
      assert.equal((body.meta as Json).total, 240);
      assert.equal(data[0]?.time, `${D1}T15:00:00+08:00`);
      assert.equal(data[239]?.time, `${D1}T09:31:00+08:00`);
      assert.deepEqual(Object.keys(data[0] ?? {}), [
        'code',
        'date',
        'time',
        'open',
        'high',
        'low',
        'close',
        'volume',
        'amount',
        'source',
        'updated_at',
        'created_at',
      ]);
      // No bar inside the lunch break.
      assert.ok(data.every((r) => !/T1(1:3[1-9]|1:[45]\d|2:\d\d|3:00)/.test(String(r.time))));
      const sent = dayBars('600000', D1).find((b) => b.time === `${D1}T10:00:00+08:00`);
      const got = data.find((r) => r.time === `${D1}T10:00:00+08:00`);
      for (const k of ['open', 'high', 'low', 'close', 'volume', 'amount'] as const)
        assert.equal(got?.[k], sent?.[k]);
    });

    it('the same batch again is a duplicate; the same bars in a new batch count as duplicates', async () => {
      const body = batch('stock_minute', dayBars('600002', D1));
      const first = await pushed(body);
      assert.equal(first.accepted, 240);
      const again = await push(h.app, body);
      assert.equal(again.statusCode, 200);
      assert.equal(json(again).status, 'duplicate');
      const repeat = await pushed(batch('stock_minute', dayBars('600002', D1)));
      assert.deepEqual([repeat.accepted, repeat.duplicate], [0, 240]);
    });

    it('an incremental batch merges into the stored day: morning then afternoon make 240 bars', async () => {
      const bars = dayBars('600003', D1);
      await pushed(batch('stock_minute', bars.slice(0, 120)));
      const second = await pushed(batch('stock_minute', bars.slice(100)));
      assert.deepEqual([second.accepted, second.duplicate], [120, 20]);
      assert.equal(((await page(`code=600003`)).meta as Json).total, 240);
    });

    it('207: a bar in the lunch break, an auction bar, a bar off its date, a half minute; the rest stored', async () => {
      const good = dayBars('600004', D1).slice(0, 3);
      const bad = [
        { ...good[0], time: `${D1}T12:00:00+08:00` },
        { ...good[0], time: `${D1}T09:25:00+08:00` },
        { ...good[0], time: `${D2}T09:31:00+08:00` },
        { ...good[0], time: `${D1}T09:40:30+08:00` },
      ];
      const res = await push(h.app, batch('stock_minute', [...good, ...bad]));
      assert.equal(res.statusCode, 207, res.body);
      const body = json(res);
      assert.equal(body.accepted, 3);
      const errors = body.errors as Json[];
      assert.deepEqual(
        errors.map((e) => [e.index, e.field]),
        [3, 4, 5, 6].map((i) => [i, 'time']),
      );
      assert.match(
        String(errors[0]?.reason),
        /12:00 is not the end minute of a bar in a session: bars end at 09:31–11:30, 13:01–15:00 \(\+08:00\)/,
      );
      assert.match(String(errors[1]?.reason), /call auction belongs to the first bar/);
      assert.match(String(errors[2]?.reason), /falls on 2024-03-04/);
      assert.match(String(errors[3]?.reason), /whole minute/);
      assert.equal(((await page('code=600004')).meta as Json).total, 3);
    });

    it('a full snapshot of a trading date replaces its blocks and prunes the codes it lacks', async () => {
      const day = '2024-03-05';
      await pushed(
        batch(
          'stock_minute',
          [...dayBars('600010', day, 10, 'snap'), ...dayBars('600011', day, 10, 'snap')],
          { source: 'snap' },
        ),
      );
      const res = await pushed(
        batch('stock_minute', dayBars('600010', day, 10, 'snap').slice(0, 10), {
          source: 'snap',
          snapshotType: 'full_snapshot',
          businessDate: day,
        }),
      );
      assert.equal(res.pruned, 1);
      assert.equal(((await page(`date=${day}&source=snap&code=600010`)).meta as Json).total, 10);
      assert.equal(((await page(`date=${day}&source=snap&code=600011`)).meta as Json).total, 0);
    });

    it('a corrected bar: the new close now, the old one as_of before; revert puts it back', async () => {
      const day = '2024-03-06';
      const bars = dayBars('600020', day);
      await pushed(batch('stock_minute', bars));
      await new Promise((r) => setTimeout(r, 5));
      const before = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      const at = `${day}T10:00:00+08:00`;
      const fix = bars.filter((b) => b.time === at).map((b) => ({ ...b, close: 99.99, high: 99.99 }));
      const id = uniqueId('fix');
      const res = await pushed(batch('stock_minute', fix, { batchId: id }));
      assert.deepEqual([res.accepted, res.duplicate], [1, 0]);
      const q = `code=600020&time_from=${encodeURIComponent(at)}&time_to=${encodeURIComponent(at)}`;
      assert.equal((await rows(q))[0]?.close, 99.99);
      assert.equal((await rows(`${q}&as_of=${before}`))[0]?.close, bars.find((b) => b.time === at)?.close);
      assert.equal((await rows(`code=600020&as_of=${before}`)).length, 100);
      const revert = await h.app.inject({
        method: 'POST',
        url: `/admin/api/batches/${id}/revert`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(revert.statusCode, 200, revert.body);
      assert.equal((await rows(q))[0]?.close, bars.find((b) => b.time === at)?.close);
      const status = json(await batchStatus(h.app, id));
      assert.ok(status.reverted_at);
    });

    it('interval=5m and 60m by session: labels at period ends, none across the lunch break', async () => {
      const five = await rows(`code=600000&date=${D1}&interval=5m&sort=time&order=asc&limit=1000`);
      assert.equal(five.length, 48);
      const times = five.map((r) => String(r.time).slice(11, 16));
      assert.deepEqual(times.slice(0, 2), ['09:35', '09:40']);
      assert.ok(times.includes('11:30') && times.includes('13:05') && !times.includes('13:00'));
      const hour = await rows(`code=600000&date=${D1}&interval=60m&sort=time&order=asc`);
      assert.deepEqual(
        hour.map((r) => String(r.time).slice(11, 16)),
        ['10:30', '11:30', '14:00', '15:00'],
      );
      const bars = dayBars('600000', D1);
      const first = bars.slice(0, 60);
      assert.equal(hour[0]?.open, first[0]?.open);
      assert.equal(hour[0]?.close, first[59]?.close);
      assert.equal(hour[0]?.high, Math.max(...first.map((b) => b.high)));
      assert.equal(hour[0]?.low, Math.min(...first.map((b) => b.low)));
      assert.equal(
        hour[0]?.volume,
        first.reduce((s, b) => s + b.volume, 0),
      );
    });

    it('a half day (morning session only): 1d ends at 11:30, 60m has two bars', async () => {
      const day = '2024-03-07';
      await pushed(batch('stock_minute', dayBars('600030', day).slice(0, 120)));
      const d = await rows(`code=600030&interval=1d`);
      assert.deepEqual(
        d.map((r) => r.time),
        [`${day}T11:30:00+08:00`],
      );
      assert.equal((await rows(`code=600030&interval=60m`)).length, 2);
    });

    it('a suspended stock has no bars that day; 1d gives one bar per traded day', async () => {
      const body = await page(`code=600001&date_from=${D1}&date_to=${D2}&interval=1d`);
      assert.deepEqual(
        ((body.data as Json[]) ?? []).map((r) => r.date),
        [D1],
      );
      assert.equal(
        ((await page(`code=600000&date_from=20240301&date_to=20240304&interval=1d`)).meta as Json).total,
        2,
      );
    });

    it('interval=1d equals the daily dataset of the same source', async () => {
      const bars = dayBars('600000', D1);
      const daily = {
        symbol: '600000',
        date: D1,
        open: bars[0]?.open,
        high: Math.max(...bars.map((b) => b.high)),
        low: Math.min(...bars.map((b) => b.low)),
        close: bars[239]?.close,
        volume: bars.reduce((s, b) => s + b.volume, 0),
        amount: Number(bars.reduce((s, b) => s + b.amount, 0).toFixed(2)),
        source: 'eastmoney',
      };
      await pushed(batch('stock_daily', [daily]));
      const [fromMinutes] = await rows(`code=600000&date=${D1}&interval=1d`);
      const [stored] = json(await get(h.app, `/api/v1/stock/daily?code=600000&date=${D1}`)).data as Json[];
      for (const k of ['open', 'high', 'low', 'close', 'volume', 'amount'] as const)
        assert.equal(fromMinutes?.[k], stored?.[k], k);
    });

    it('code spellings, YYYYMMDD dates, time bounds with offset or Z, fields, offset and cursor', async () => {
      for (const code of ['600000', '600000.SH', 'sh600000']) {
        assert.equal(((await page(`code=${code}&date=20240301`)).meta as Json).total, 240);
      }
      const from = encodeURIComponent(`${D1}T13:01:00+08:00`);
      const to = `${D1}T05:10:00Z`; // 13:10 at +08:00
      const win = await rows(`code=600000&time_from=${from}&time_to=${to}&sort=time&order=asc`);
      assert.deepEqual(
        win.map((r) => String(r.time).slice(11, 16)),
        ['13:01', '13:02', '13:03', '13:04', '13:05', '13:06', '13:07', '13:08', '13:09', '13:10'],
      );
      const narrow = await rows(`code=600000&date=${D1}&fields=time,close&limit=2`);
      assert.deepEqual(Object.keys(narrow[0] ?? {}), ['time', 'close']);
      const p1 = await page(`code=600000&limit=100`);
      const p2 = await page(`code=600000&limit=100&cursor=${String((p1.meta as Json).next_cursor)}`);
      const off = await rows(`code=600000&limit=100&offset=100`);
      assert.deepEqual(p2.data, off);
      assert.equal((p1.meta as Json).total, 480);
    });

    it('source_priority: per code-day block, the first listed source that has it', async () => {
      const day = '2024-03-08';
      await pushed(batch('stock_minute', dayBars('600040', day, 10, 'a'), { source: 'a' }));
      await pushed(batch('stock_minute', dayBars('600040', day, 20, 'b'), { source: 'b' }));
      const r = await rows(`code=600040&source_priority=b,a&limit=1`);
      assert.equal(r[0]?.source, 'b');
      assert.equal(((await page(`code=600040&source_priority=b,a`)).meta as Json).total, 240);
    });

    it('exports: csv and ndjson carry the same rows as the page', async () => {
      const res = await get(h.app, `${MINUTE}?code=600000&date=${D1}&format=csv&interval=30m`);
      assert.equal(res.statusCode, 200);
      const lines = res.body.trim().split('\n');
      assert.equal(lines[0], 'code,date,time,open,high,low,close,volume,amount,source,updated_at,created_at');
      assert.equal(lines.length, 1 + 8);
      const nd = await get(h.app, `${MINUTE}?code=600000&format=ndjson&sort=time&order=asc`);
      const first = JSON.parse(nd.body.split('\n')[0] ?? '{}') as Json;
      assert.equal(first.time, `${D1}T09:31:00+08:00`);
      assert.equal(nd.body.trim().split('\n').length, 480);
      const arrow = await get(h.app, `${MINUTE}?code=600000&format=arrow`);
      assert.equal(arrow.statusCode, 200);
      assert.ok(arrow.rawPayload.length > 1000);
    });

    it('a page in time order decodes only the days it covers, with the same rows and total', async () => {
      const month: string[] = [];
      for (let t = Date.parse('2024-04-01T00:00:00Z'); month.length < 21; t += 86_400_000) {
        const d = new Date(t);
        if (d.getUTCDay() !== 0 && d.getUTCDay() !== 6) month.push(d.toISOString().slice(0, 10));
      }
      await pushed(
        batch(
          'stock_minute',
          month.flatMap((d) => dayBars('600050', d)),
        ),
      );
      const decoded = async (query: string): Promise<{ body: Json; blocks: number }> => {
        const before = decodedBlocks.count;
        const body = await page(query);
        return { body, blocks: decodedBlocks.count - before };
      };
      // Every bar in time order, through the export (which reads day by day, not by page).
      const nd = await get(h.app, `${MINUTE}?code=600050&format=ndjson&sort=time&order=asc`);
      const all = nd.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Json);
      assert.equal(all.length, 21 * 240);
      for (const [query, blocks] of [
        ['limit=10', 1],
        ['limit=10&order=asc', 1],
        ['limit=10&offset=235', 2],
        ['limit=10&order=asc&offset=1000', 1],
        ['limit=10&sort=date&order=asc&offset=479', 2],
      ] as const) {
        const got = await decoded(`code=600050&${query}`);
        assert.equal(got.blocks, blocks, query);
        assert.equal((got.body.meta as Json).total, 21 * 240, query);
        const ordered = query.includes('order=asc') ? all : [...all].reverse();
        const offset = Number(/offset=(\d+)/.exec(query)?.[1] ?? 0);
        assert.deepEqual(
          (got.body.data as Json[]).map((r) => r.time),
          ordered.slice(offset, offset + 10).map((r) => r.time),
          query,
        );
      }
      // Past the last bar: an empty page, no block decoded.
      const past = await decoded('code=600050&limit=10&offset=6000');
      assert.deepEqual([past.blocks, (past.body.data as Json[]).length], [0, 0]);
      // Resampled or time-bounded pages still decode every block they select.
      assert.equal((await decoded('code=600050&limit=10&interval=5m')).blocks, 21);
    });

    it("a page of a market day in time order decodes only the blocks it needs: every day's first codes, and the blocks whose minutes their bar count does not tell", async () => {
      const D = '2024-05-06';
      const codes = Array.from({ length: 30 }, (_, i) => String(602000 + i));
      const sent = codes.flatMap((c) => {
        const day = dayBars(c, D);
        // 602010: a half day; 602020: its 10:00 bar missing. Any minutes, as far as a count tells.
        if (c === '602010') return day.filter((b) => b.time.slice(11, 16) <= '11:30');
        if (c === '602020') return day.filter((b) => !b.time.includes('T10:00'));
        return day;
      });
      await pushed(batch('stock_minute', sent, { businessDate: D }));
      // 602005 from a second source too: its blocks come by code, both sources.
      await pushed(
        batch('stock_minute', dayBars('602005', D, 7, 'tushare'), { source: 'tushare', businessDate: D }),
      );
      const decoded = async (query: string): Promise<{ body: Json; blocks: number }> => {
        const before = decodedBlocks.count;
        const body = await page(query);
        return { body, blocks: decodedBlocks.count - before };
      };
      const exported = async (query: string): Promise<Json[]> => {
        const nd = await get(h.app, `${MINUTE}?${query}&format=ndjson`);
        assert.equal(nd.statusCode, 200, nd.body);
        return nd.body
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Json);
      };
      const key = (r: Json): string => `${String(r.time)} ${String(r.code)} ${String(r.source)}`;
      for (const [query, blocks] of [
        // The first 10 whole blocks in code and source order (9 codes, 602005 twice) and the two others.
        ['limit=10', 12],
        ['limit=5&sort=time&order=asc', 7],
        ['limit=10&offset=3', 15],
        // Past the whole blocks' count: every block of the day.
        ['limit=10&offset=25', 31],
        ['limit=10&order=asc&offset=7000', 31],
      ] as const) {
        const got = await decoded(`date=${D}&${query}`);
        assert.equal(got.blocks, blocks, query);
        assert.equal((got.body.meta as Json).total, sent.length + 240, query);
        const all = await exported(`date=${D}&${query.replace(/(^|&)(limit|offset)=\d+/g, '')}`);
        const offset = Number(/offset=(\d+)/.exec(query)?.[1] ?? 0);
        const limit = Number(/limit=(\d+)/.exec(query)?.[1]);
        assert.deepEqual(
          (got.body.data as Json[]).map(key),
          all.slice(offset, offset + limit).map(key),
          query,
        );
        assert.deepEqual(got.body.data, all.slice(offset, offset + limit), query);
      }
    });

    it('bad input is a 400 / 4001 naming the parameter', async () => {
      await expectParameterErrors(h.app, `${MINUTE}?code=600000&`, [
        ['interval=2m', 'interval'],
        ['interval=1w', 'interval'],
        ['time_from=yesterday', 'time_from'],
        ['time_to=2024-03-01T09:31:00', 'time_to'],
        ['bogus=1', 'bogus'],
        ['cursor=abc', 'cursor'],
        ['date_from=2024-02-30', 'date_from'],
      ]);
      const p1 = await page('code=600000&limit=10');
      const foreign = await error(`code=600001&limit=10&cursor=${String((p1.meta as Json).next_cursor)}`);
      assert.match(String(foreign.message), /different query/);
      const noTime = await push(
        h.app,
        batch('stock_minute', [{ ...dayBars('600000', D1)[0], time: undefined }]),
      );
      assert.equal(noTime.statusCode, 422, noTime.body);
    });

    it('docs/minute-bars.md: the worked example, pushed and asked as written', async () => {
      const doc = fs.readFileSync(path.join(ROOT, 'docs', 'minute-bars.md'), 'utf8');
      const block = (name: string): unknown =>
        JSON.parse(new RegExp(`\`\`\`json ${name}\n([\\s\\S]*?)\`\`\``).exec(doc)?.[1] ?? 'null');
      const records = block('minute-example-records') as Json[];
      await pushed(batch('stock_minute', records, { source: 'doc' }));
      const url = /`(GET \/api\/v1\/stock\/minute\?[^`]+)`/.exec(doc)?.[1]?.slice(4) ?? '';
      const res = await get(h.app, url);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res).data, block('minute-example-answer'));
    });

    it('the session minutes are 09:31–11:30 and 13:01–15:00', () => {
      const m = sessionMinutes();
      assert.equal(m.length, 240);
      assert.deepEqual([m[0], m[119], m[120], m[239]], ['09:31', '11:30', '13:01', '15:00']);
    });
  });
}
