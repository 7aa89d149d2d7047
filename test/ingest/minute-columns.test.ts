// Issue 30: the columnar path of minute batches (src/ingest/minute-columns.ts). It reads the
// bars straight from the body's bytes and must give the record path's answers: which batches it
// takes, the bars it reads, the JCS checksum it writes, and — on both backends — the same 207
// per bar (code, index, field, reason) when a bad bar sits inside a block.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { planPush } from '../../src/client/push-plan.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { parseMinuteBatch } from '../../src/ingest/minute-columns.js';
import { batchChecksum } from '../../src/ingest/checksum.js';
import { buildBatch, toRecord, type RowData } from '../../src/client/batch-builder.js';
import { backends, INGEST_KEY, json, push, startApp, type Harness, type Json } from '../helpers/harness.js';
import { batch, batchOfRecords, record } from '../helpers/batches.js';
import { dayBars, endpointReads } from '../helpers/minute-bars.js';

const D = '2024-03-01';
const MAX = 200_000;
const stockMinute = CATALOG.byName.get('stock_minute');
if (!stockMinute) throw new Error('no stock_minute');

const text = (body: unknown): Buffer => Buffer.from(JSON.stringify(body));
const columns = (body: string | Buffer) =>
  parseMinuteBatch(typeof body === 'string' ? Buffer.from(body) : body, CATALOG, MAX);

/** The test helpers' batch (keys not in JCS order, JCS checksum) of `bars`. */
const helperBatch = (bars: Json[], opts = {}) => batch('stock_minute', bars, opts);

describe('minute batches: what the columnar path takes', () => {
  it('reads the push client batch into columns: codes normalised, minutes, values, nulls', () => {
    const bars: RowData[] = dayBars('600000', D).slice(0, 3);
    bars[0] = { ...bars[0], symbol: 'sh600000' };
    bars[1] = { ...bars[1], updated_at: '2024-03-01T16:00:00+08:00' };
    const body = buildBatch(
      stockMinute,
      bars.map((b) => toRecord(stockMinute, b)),
      { source: 'eastmoney', businessDate: D, snapshotType: 'incremental', runId: 'r' },
    );
    const m = columns(text(body));
    assert.ok(m, 'the push client batch takes the columnar path');
    assert.equal(m.bars.count, 3);
    assert.deepEqual(m.bars.code, ['600000', '600000', '600000']);
    assert.deepEqual([...m.bars.minutes], [571, 572, 573]);
    assert.deepEqual(m.bars.updated, [null, '2024-03-01T08:00:00.000Z', null]);
    assert.deepEqual(
      m.bars.values.map((c) => c[2]),
      ['open', 'high', 'low', 'close', 'volume', 'amount'].map((f) => bars[2]?.[f]),
    );
    // The records value as sent is what the checksum covers.
    assert.equal(m.recordsBytes.toString(), JSON.stringify(body.records));

    const indexBars = dayBars('000300', D)
      .slice(0, 2)
      .map((b) => ({ ...b, volume: null, amount: undefined }));
    const im = columns(text(batch('index_minute', indexBars)));
    assert.ok(im);
    assert.ok(Number.isNaN(im.bars.values[4]?.[0]) && Number.isNaN(im.bars.values[5]?.[1]), 'nulls are NaN');
  });

  it('writes the JCS text of records sent in another key order, odd numbers included', () => {
    const bars: Json[] = dayBars('600001', D).slice(0, 8);
    const odd = [1e-7, 0.0000012, 1e21, 0.1 + 0.2, 123456789012345680, -0, 5e-324];
    odd.forEach((v, i) => (bars[i] = { ...bars[i], open: v }));
    bars[7] = { ...bars[7], amount: null };
    const body = text(helperBatch(bars))
      .toString()
      .replace('"high":', '"high": ')
      .replace(/"close":(\d+\.\d+)/, '"close":$10')
      .replace(/"low":[\d.]+/, '"low":1.00000000000000001');
    const m = columns(body);
    assert.ok(m);
    const records = (JSON.parse(body) as { records: unknown[] }).records;
    assert.equal(m.jcsSha256(), batchChecksum(records));
  });

  it('leaves every other batch to the record path', () => {
    const good = text(helperBatch(dayBars('600002', D).slice(0, 4))).toString();
    assert.ok(columns(good));
    const cases: [string, string][] = [
      [
        'an escape in a string',
        good.replace('"idempotency_key":"stock_minute', '"idempotency_key":"\\u0073tock_minute'),
      ],
      ['a repeated data field', good.replace('"open":', '"open":1,"open":')],
      ['a null repeated', good.replace('"amount":', '"amount":null,"amount":')],
      ['an unknown field', good.replace('"open":', '"opening":1,"open":')],
      ['a required field null', good.replace(/"volume":\d+/, '"volume":null')],
      ['a number as text', good.replace(/"open":([\d.]+)/, '"open":"$1"')],
      ['an underflow', good.replace(/"open":([\d.]+)/, '"open":1e-400')],
      ['a non-finite number', good.replace(/"open":([\d.]+)/, '"open":1e400')],
      ['a number with a leading zero', good.replace(/"volume":(\d+)/, '"volume":0$1')],
      [
        'unique_key disagreeing',
        good.replace('"unique_key":{"symbol":"600002"', '"unique_key":{"symbol":"600003"'),
      ],
      ['a time outside the sessions', good.replace('T09:31:00+08:00","open"', 'T12:00:00+08:00","open"')],
      ['a record member repeated', good.replace('"data":{', '"idempotency_key":"x","data":{')],
      ['an empty idempotency_key', good.replace(/"idempotency_key":"[^"]*"/, '"idempotency_key":""')],
      ['a bar given twice', good.replace(/T09:32:00/g, 'T09:31:00')],
      ['a record count that differs', good.replace('"record_count":4', '"record_count":5')],
      ['a trailing comma', good.replace('}],"checksum"', '},],"checksum"')],
      ['no records', text(helperBatch([])).toString()],
    ];
    for (const [what, body] of cases) {
      assert.notEqual(body, good, what);
      const m = columns(body);
      // A bar given twice is found when the bars are grouped (ingest-service.ts), not here.
      if (what === 'a bar given twice') assert.ok(m, what);
      else assert.equal(m, null, what);
    }
    const full = text(
      helperBatch(dayBars('600002', D).slice(0, 2), {
        snapshotType: 'full_snapshot',
        businessDate: '2024-03-04',
      }),
    );
    assert.equal(columns(full), null, 'a bar outside the snapshot partition');
    assert.equal(columns(text(batch('stock_daily', []))), null, 'not a minute dataset');
  });
});

describe('mds push of a minute file', () => {
  it('sends whole blocks, 100,000 bars a batch by default, each block once', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-minute-push-'));
    try {
      // Time-major, as a vendor's minute snapshots come: every code's 09:31, then 09:32, …
      const days = ['600020', '600021', '600022'].map((c) => dayBars(c, D));
      const lines = (days[0] ?? []).flatMap((_, i) =>
        days.map((bars) => {
          const b = bars[i] as Json;
          return ['symbol', 'date', 'time', 'open', 'high', 'low', 'close', 'volume', 'amount']
            .map((f) => String(b[f]))
            .join(',');
        }),
      );
      const file = path.join(dir, 'minutes.csv');
      fs.writeFileSync(file, `code,date,time,open,high,low,close,volume,amount\n${lines.join('\n')}\n`);
      const opts = { dataset: 'stock_minute', file, source: 'vendor' };
      const one = planPush(opts);
      assert.deepEqual(
        one.batches.map((b) => b.records.length),
        [720],
      );
      const split = planPush({ ...opts, batchSize: 500 });
      assert.deepEqual(
        split.batches.map((b) => b.records.length),
        [480, 240],
      );
      // Each block in one batch, its bars in the file's order.
      const codesOf = split.batches.map((b) => [...new Set(b.records.map((r) => r.data.symbol))]);
      assert.deepEqual(codesOf, [['600020', '600021'], ['600022']]);
      const times = split.batches[1]?.records.map((r) => r.data.time);
      assert.deepEqual(
        times,
        dayBars('600022', D).map((b) => b.time),
      );
      // The service takes these batches on the columnar path.
      assert.ok(columns(text(split.batches[0])));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

for (const backend of await backends()) {
  describe(`minute batches through the columnar path (${backend})`, { timeout: 180_000 }, () => {
    let h: Harness;
    const { rows } = endpointReads(() => h.app, '/api/v1/stock/minute');
    const pushText = async (body: string) =>
      h.app.inject({
        method: 'POST',
        url: '/api/v1/upstream/ingest/batches',
        headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
        payload: body,
      });

    before(async () => {
      h = await startApp(backend);
    });
    after(async () => {
      await h.close();
    });

    it('a bad bar inside a block: 207 with the record path answer, the other bars stored', async () => {
      const bars: Json[] = ['600010', '600011', '600012'].flatMap((c) => dayBars(c, D));
      bars[300] = { ...bars[300], time: `${D}T12:00:00+08:00` };
      bars[500] = { ...bars[500], open: 'x' };
      bars[610] = { ...bars[610], volume: null };
      const records = bars.map((b) => record('stock_minute', b));
      records[20] = {
        ...records[20],
        unique_key: { symbol: '600010', time: `${D}T09:31:00+08:00`, source: 'eastmoney' },
      };
      const res = await push(h.app, batchOfRecords('stock_minute', records));
      assert.equal(res.statusCode, 207, res.body);
      const body = json(res);
      assert.equal(body.accepted, 716);
      assert.deepEqual(
        (body.errors as Json[]).map((e) => [e.index, e.field, e.reason, e.idempotency_key]),
        [
          [20, 'unique_key.time', 'does not agree with data', records[20]?.idempotency_key],
          [
            300,
            'time',
            'time 12:00 is not the end minute of a bar in a session: bars end at 09:31–11:30, 13:01–15:00 (+08:00); the opening call auction belongs to the first bar',
            records[300]?.idempotency_key,
          ],
          [500, 'open', 'must be a finite number', records[500]?.idempotency_key],
          [610, 'volume', 'must not be null', records[610]?.idempotency_key],
        ],
      );
      assert.equal((await rows('code=600011&limit=500')).length, 239);
    });

    it('bars given twice in a block: the same as sent counted duplicate, a differing one refused', async () => {
      const bars: Json[] = dayBars('600013', D);
      const same = await push(h.app, helperBatch([...bars, bars[5] as Json]));
      assert.equal(same.statusCode, 200, same.body);
      assert.deepEqual([json(same).accepted, json(same).duplicate], [240, 1]);
      const other = await push(
        h.app,
        helperBatch([...dayBars('600014', D), { ...bars[5], symbol: '600014', close: 99 }]),
      );
      assert.equal(other.statusCode, 207, other.body);
      assert.deepEqual(
        (json(other).errors as Json[]).map((e) => [e.index, e.field, e.reason]),
        [[240, 'unique_key', 'conflicting duplicate key in batch']],
      );
    });

    it('stores what the record path stores: the same bars, counts and revisions', async () => {
      const bars = dayBars('600015', D);
      const viaColumns = text(
        helperBatch(
          bars.map((b) => ({ ...b, source: 'cols' })),
          { source: 'cols' },
        ),
      ).toString();
      assert.ok(columns(viaColumns));
      // An escape sends the same records down the record path.
      const viaRecords = text(
        helperBatch(
          bars.map((b) => ({ ...b, source: 'recs' })),
          { source: 'recs' },
        ),
      )
        .toString()
        .replace('"idempotency_key":"stock_minute', '"idempotency_key":"\\u0073tock_minute');
      assert.equal(columns(viaRecords), null);
      for (const body of [viaColumns, viaRecords]) {
        const res = await pushText(body);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual([json(res).accepted, json(res).duplicate], [240, 0]);
      }
      const strip = (rs: Json[]) => rs.map(({ source: _s, created_at: _c, updated_at: _u, ...r }) => r);
      const cols = await rows('code=600015&source=cols&limit=500');
      assert.equal(cols.length, 240);
      assert.deepEqual(strip(cols), strip(await rows('code=600015&source=recs&limit=500')));
      // A correction through each path: one changed bar accepted, the rest duplicates.
      for (const source of ['cols', 'recs']) {
        const changed = bars.map((b, i) => ({ ...b, source, ...(i === 7 ? { close: 11.11 } : {}) }));
        const sent = text(helperBatch(changed, { source })).toString();
        const res = await pushText(
          source === 'cols'
            ? sent
            : sent.replace('"idempotency_key":"stock_minute', '"idempotency_key":"\\u0073tock_minute'),
        );
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual([json(res).accepted, json(res).duplicate], [1, 239]);
      }
      assert.deepEqual(
        strip(await rows('code=600015&source=cols&limit=500')),
        strip(await rows('code=600015&source=recs&limit=500')),
      );
    });
  });
}
