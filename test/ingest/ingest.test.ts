// Issue 2: the batch ingest interface (spec 2.3, 2.4, 3, 4.4, 4.5, 5, 7.2; decisions.md "Ingest"),
// over HTTP, on every backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  backends,
  batchStatus,
  get,
  json,
  push,
  QUERY_KEY,
  startApp,
  type Harness,
  type Json,
} from '../helpers/harness.js';
import { batch, batchOfRecords, days, etfBar, record, uniqueId } from '../helpers/batches.js';
import { batchChecksum } from '../../src/ingest/checksum.js';
import { PRUNE_SKIPPED } from '../../src/ingest/ingest-service.js';

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const STATUS_FIELDS = [
  'code',
  'message',
  'batch_id',
  'dataset',
  'source',
  'operation',
  'snapshot_type',
  'business_date',
  'source_system',
  'source_run_id',
  'record_count',
  'checksum',
  'status',
  'accepted',
  'rejected',
  'duplicate',
  'errors',
  'created_at',
  'processed_at',
];

const rowsOf = async (h: Harness, url: string): Promise<Json[]> => json(await get(h.app, url)).data as Json[];
const totalOf = async (h: Harness, url: string): Promise<number> =>
  (json(await get(h.app, url)).meta as { total: number }).total;
const idOf = (b: Json): string => (b.meta as Json).batch_id as string;

for (const backend of await backends()) {
  describe(`ingest [${backend}]`, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend, { MDS_MAX_RECORDS: '5000' });
    });
    after(async () => h.close());

    it('accepts a batch (200, code 0) and its status record has every field of spec 2.4', async () => {
      const b = batch('etf_daily', [etfBar('510300', '2024-01-02'), etfBar('510300', '2024-01-03')]);
      const res = await push(h.app, b);
      assert.equal(res.statusCode, 200);
      const body = json(res);
      assert.equal(body.code, 0);
      assert.equal(body.status, 'accepted');
      assert.deepEqual([body.accepted, body.duplicate, body.rejected], [2, 0, 0]);
      const st = await batchStatus(h.app, idOf(b));
      assert.equal(st.statusCode, 200);
      const rec = json(st);
      for (const f of STATUS_FIELDS) assert.ok(f in rec, `status record has ${f}`);
      assert.equal(rec.code, 0);
      assert.equal(rec.status, 'accepted');
      assert.equal(rec.checksum, (b.checksum as Json).sha256);
      assert.equal(rec.record_count, 2);
      assert.deepEqual(rec.errors, []);
      assert.match(rec.created_at as string, ISO_Z);
      assert.match(rec.processed_at as string, ISO_Z);
      assert.equal(rec.business_date, '2024-01-02');
    });

    it('answers "duplicate" for the same batch again and changes nothing', async () => {
      const b = batch('etf_daily', [etfBar('510301', '2024-01-02')]);
      assert.equal((await push(h.app, b)).statusCode, 200);
      const again = await push(h.app, b);
      assert.equal(again.statusCode, 200);
      const body = json(again);
      assert.equal(body.status, 'duplicate');
      assert.equal(body.code, 0);
      assert.equal(body.accepted, 1, 'repeats the original record');
      assert.equal(json(await batchStatus(h.app, idOf(b))).status, 'accepted');
      assert.equal(await totalOf(h, '/api/v1/etf/kline?code=510301'), 1);
    });

    it('refuses a reused batch_id with other content: 409 / 4090, nothing changed', async () => {
      const id = uniqueId();
      assert.equal(
        (await push(h.app, batch('etf_daily', [etfBar('510302', '2024-01-02')], { batchId: id }))).statusCode,
        200,
      );
      const res = await push(
        h.app,
        batch('etf_daily', [etfBar('510302', '2024-01-02', { close: 99 })], { batchId: id }),
      );
      assert.equal(res.statusCode, 409);
      assert.equal(json(res).code, 4090);
      const rows = await rowsOf(h, '/api/v1/etf/kline?code=510302');
      assert.equal(rows[0]?.close, 9.420000000000002);
    });

    it('answers 207 / 2070 "partial" with per-record errors {index, idempotency_key, field, reason}', async () => {
      const good = record('etf_daily', etfBar('510303', '2024-01-02'));
      const bad = record('etf_daily', etfBar('510303', '2024-01-03', { close: 'high' }));
      const b = batchOfRecords('etf_daily', [good, bad]);
      const res = await push(h.app, b);
      assert.equal(res.statusCode, 207);
      const body = json(res);
      assert.equal(body.code, 2070);
      assert.equal(body.status, 'partial');
      assert.deepEqual([body.accepted, body.duplicate, body.rejected], [1, 0, 1]);
      assert.deepEqual(body.errors, [
        { index: 1, idempotency_key: bad.idempotency_key, field: 'close', reason: 'must be a finite number' },
      ]);
      assert.equal(json(await batchStatus(h.app, idOf(b))).status, 'partial');
    });

    it('answers 422 / 4221 when every record is rejected, records it, and lets a corrected batch reuse the id', async () => {
      const id = uniqueId();
      const bad = batch('etf_daily', [etfBar('510304', '2024-02-30')], { batchId: id });
      const res = await push(h.app, bad);
      assert.equal(res.statusCode, 422);
      assert.equal(json(res).code, 4221);
      assert.equal(json(res).status, 'rejected');
      const st = json(await batchStatus(h.app, id));
      assert.equal(st.status, 'rejected');
      assert.equal((st.errors as Json[])[0]?.field, 'date');
      const fixed = await push(h.app, batch('etf_daily', [etfBar('510304', '2024-02-29')], { batchId: id }));
      assert.equal(fixed.statusCode, 200);
      assert.equal(json(await batchStatus(h.app, id)).status, 'accepted');
    });

    describe('400 / 4001 for a malformed body or meta, and the batch_id is not used up', () => {
      const base = (): Json => batch('etf_daily', [etfBar('510305', '2024-01-02')]);
      const cases: [string, (b: Json) => unknown][] = [
        ['missing meta', (b) => ({ records: b.records, checksum: b.checksum })],
        ['missing records', (b) => ({ meta: b.meta, checksum: b.checksum })],
        ['missing checksum', (b) => ({ meta: b.meta, records: b.records })],
        ['records not an array', (b) => ({ ...b, records: {} })],
        ['body an array', () => []],
        ['unknown dataset', (b) => ({ ...b, meta: { ...(b.meta as Json), dataset: 'nope', table: 'nope' } })],
        ['table differs from dataset', (b) => ({ ...b, meta: { ...(b.meta as Json), table: 'etf_basic' } })],
        ['schema_version 2.0', (b) => ({ ...b, meta: { ...(b.meta as Json), schema_version: '2.0' } })],
        ['source_system other', (b) => ({ ...b, meta: { ...(b.meta as Json), source_system: 'other' } })],
        ['operation delete', (b) => ({ ...b, meta: { ...(b.meta as Json), operation: 'delete' } })],
        ['snapshot_type bad', (b) => ({ ...b, meta: { ...(b.meta as Json), snapshot_type: 'weekly' } })],
        [
          'business_date impossible',
          (b) => ({ ...b, meta: { ...(b.meta as Json), business_date: '2024-02-30' } }),
        ],
        [
          'send_time without offset',
          (b) => ({ ...b, meta: { ...(b.meta as Json), send_time: '2024-01-02T08:00:00' } }),
        ],
        ['record_count mismatch', (b) => ({ ...b, meta: { ...(b.meta as Json), record_count: 2 } })],
        ['record_count a string', (b) => ({ ...b, meta: { ...(b.meta as Json), record_count: '1' } })],
        ['empty batch_id', (b) => ({ ...b, meta: { ...(b.meta as Json), batch_id: '' } })],
        // The service's own revision batch ids (docs/point-in-time.md) are not a client's to take.
        ['batch_id baseline', (b) => ({ ...b, meta: { ...(b.meta as Json), batch_id: 'baseline' } })],
        ['batch_id revert:…', (b) => ({ ...b, meta: { ...(b.meta as Json), batch_id: 'revert:b1' } })],
      ];
      for (const field of [
        'schema_version',
        'batch_id',
        'source_system',
        'source_run_id',
        'dataset',
        'table',
        'operation',
        'snapshot_type',
        'business_date',
        'source',
        'record_count',
        'send_time',
      ]) {
        cases.push([
          `meta.${field} missing`,
          (b) => {
            const meta = { ...(b.meta as Json) };
            delete meta[field];
            return { ...b, meta };
          },
        ]);
      }
      for (const [name, mutate] of cases) {
        it(name, async () => {
          const b = base();
          const res = await push(h.app, mutate(b));
          assert.equal(res.statusCode, 400, res.body);
          assert.equal(json(res).code, 4001);
          assert.equal(typeof json(res).message, 'string');
          if (typeof (b.meta as Json).batch_id === 'string') {
            assert.equal((await batchStatus(h.app, idOf(b))).statusCode, 404);
            assert.equal(
              (await push(h.app, b)).statusCode,
              200,
              'the corrected batch is accepted with the same id',
            );
          }
        });
      }
      it('an empty full snapshot', async () => {
        const res = await push(h.app, batch('etf_daily', [], { snapshotType: 'full_snapshot' }));
        assert.equal(res.statusCode, 400);
        assert.equal(json(res).code, 4001);
      });
      it('more records than MDS_MAX_RECORDS', async () => {
        const rows = days('2000-01-01', 5001).map((d) => etfBar('510306', d));
        const res = await push(h.app, batch('etf_daily', rows));
        assert.equal(res.statusCode, 400);
        assert.equal(json(res).code, 4001);
      });
    });

    describe('checksum', () => {
      it('accepts the JCS form and the compact form in the order sent; refuses anything else with 422 / 4220', async () => {
        const jcs = batch('etf_daily', [etfBar('510307', '2024-01-02')]);
        assert.equal((await push(h.app, jcs)).statusCode, 200);

        // Keys deliberately not sorted: the compact form hashes them in the order sent.
        const records = [
          {
            unique_key: { symbol: '510307', date: '2024-01-03', source: 'eastmoney' },
            idempotency_key: 'etf_daily:510307:2024-01-03:eastmoney',
            data: etfBar('510307', '2024-01-03'),
          },
        ];
        const compact = batchOfRecords('etf_daily', records);
        (compact.checksum as Json).sha256 = createHash('sha256')
          .update(JSON.stringify(records))
          .digest('hex');
        assert.notEqual((compact.checksum as Json).sha256, batchChecksum(records));
        assert.equal((await push(h.app, compact)).statusCode, 200);

        const wrong = batch('etf_daily', [etfBar('510307', '2024-01-04')]);
        (wrong.checksum as Json).sha256 = 'f'.repeat(64);
        const res = await push(h.app, wrong);
        assert.equal(res.statusCode, 422);
        assert.equal(json(res).code, 4220);
        assert.equal(await totalOf(h, '/api/v1/etf/kline?code=510307'), 2);
        // Not used up: the corrected batch goes through under the same id.
        (wrong.checksum as Json).sha256 = batchChecksum(wrong.records);
        assert.equal((await push(h.app, wrong)).statusCode, 200);
      });
      it('is the hex SHA-256 of the canonical JSON of records (worked example in the docs)', () => {
        const records = [{ idempotency_key: 'k', unique_key: { b: 1, a: 2 }, data: { z: 1.5, y: 'é' } }];
        const expected = createHash('sha256')
          .update('[{"data":{"y":"é","z":1.5},"idempotency_key":"k","unique_key":{"a":2,"b":1}}]')
          .digest('hex');
        assert.equal(batchChecksum(records), expected);
      });
    });

    describe('authentication (401)', () => {
      it('missing UP-API-KEY → 4010, invalid → 4012, a query key → 4012, and nothing is stored', async () => {
        const b = batch('etf_daily', [etfBar('510308', '2024-01-02')]);
        const missing = await h.app.inject({
          method: 'POST',
          url: '/api/v1/upstream/ingest/batches',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(b),
        });
        assert.equal(missing.statusCode, 401);
        assert.equal(json(missing).code, 4010);
        const wrong = await push(h.app, b, 'not-a-key');
        assert.equal(wrong.statusCode, 401);
        assert.equal(json(wrong).code, 4012);
        const queryKey = await push(h.app, b, QUERY_KEY);
        assert.equal(queryKey.statusCode, 401);
        assert.equal(json(queryKey).code, 4012);
        assert.equal((await batchStatus(h.app, idOf(b), 'not-a-key')).statusCode, 401);
        assert.equal(await totalOf(h, '/api/v1/etf/kline?code=510308'), 0);
      });
      it('GET of an unknown batch → 404 / 4040', async () => {
        const res = await batchStatus(h.app, 'no-such-batch');
        assert.equal(res.statusCode, 404);
        assert.equal(json(res).code, 4040);
      });
    });

    it('refuses a body that is not application/json with 415 / 4150', async () => {
      const b = batch('etf_daily', [etfBar('510309', '2024-01-02')]);
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/v1/upstream/ingest/batches',
        headers: {
          'content-type': 'text/plain',
          'up-api-key': (await import('../helpers/harness.js')).INGEST_KEY,
        },
        payload: JSON.stringify(b),
      });
      assert.equal(res.statusCode, 415);
      assert.equal(json(res).code, 4150);
    });

    it('refuses malformed JSON with 400 / 4001', async () => {
      const { INGEST_KEY } = await import('../helpers/harness.js');
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/v1/upstream/ingest/batches',
        headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
        payload: '{"meta": {',
      });
      assert.equal(res.statusCode, 400);
      assert.equal(json(res).code, 4001);
    });

    describe('record validation', () => {
      const cases: [string, Json, string][] = [
        ['wrong type', { ...etfBar('X', '2024-01-02'), volume: '12' }, 'volume'],
        ['missing required', (({ close: _c, ...r }) => r)(etfBar('X', '2024-01-02')), 'close'],
        ['null required', { ...etfBar('X', '2024-01-02'), close: null }, 'close'],
        ['impossible date', etfBar('X', '2023-02-29'), 'date'],
        ['month 13', etfBar('X', '2023-13-01'), 'date'],
        [
          'timestamp without offset',
          { ...etfBar('X', '2024-01-02'), updated_at: '2024-01-02T10:00:00' },
          'updated_at',
        ],
        ['unknown field', { ...etfBar('X', '2024-01-02'), colour: 'red' }, 'colour'],
        [
          'server-set created_at',
          { ...etfBar('X', '2024-01-02'), created_at: '2024-01-02T10:00:00Z' },
          'created_at',
        ],
        ['an empty key field', etfBar('', '2024-01-02'), 'symbol'],
      ];
      for (const [name, data, field] of cases) {
        it(`rejects ${name} (field ${field})`, async () => {
          const good = etfBar('510310', '2024-01-02');
          const res = await push(h.app, batch('etf_daily', [good, data]));
          assert.equal(res.statusCode, 207, res.body);
          const errors = json(res).errors as Json[];
          assert.equal(errors.length, 1);
          assert.equal(errors[0]?.index, 1);
          assert.equal(errors[0]?.field, field);
        });
      }
      it('rejects NUL and unpaired surrogates in strings', async () => {
        const nul: Json = { ...record('etf_daily', etfBar('510315', '2024-01-03')), idempotency_key: 'k1' };
        (nul.data as Json).source = 'east\u0000money';
        (nul.unique_key as Json).source = 'east\u0000money';
        const lone: Json = { ...record('etf_daily', etfBar('510315', '2024-01-04')), idempotency_key: 'k2' };
        (lone.data as Json).symbol = '510\ud800';
        (lone.unique_key as Json).symbol = '510\ud800';
        const res = await push(
          h.app,
          batchOfRecords('etf_daily', [record('etf_daily', etfBar('510315', '2024-01-02')), nul, lone]),
        );
        assert.equal(res.statusCode, 207, res.body);
        assert.deepEqual(
          (json(res).errors as Json[]).map((e) => e.field),
          ['source', 'symbol'],
        );
      });
      it('rejects a record with a non-finite number (1e999 in the JSON text)', async () => {
        const b = batch('etf_daily', [
          etfBar('510311', '2024-01-02'),
          etfBar('510311', '2024-01-03', { close: 7 }),
        ]);
        const { INGEST_KEY } = await import('../helpers/harness.js');
        const text = JSON.stringify(b).replace('"close":7', '"close":1e999');
        const recs = JSON.parse(text).records as unknown[];
        const payload = text.replace(
          /"sha256":"[0-9a-f]+"/,
          `"sha256":"${createHash('sha256').update(JSON.stringify(recs)).digest('hex')}"`,
        );
        const res = await h.app.inject({
          method: 'POST',
          url: '/api/v1/upstream/ingest/batches',
          headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
          payload,
        });
        assert.equal(res.statusCode, 207, res.body);
        assert.equal((json(res).errors as Json[])[0]?.field, 'close');
      });
      it('requires unique_key to hold exactly the key fields and agree with data', async () => {
        const r1 = record('etf_daily', etfBar('510312', '2024-01-02'));
        const r2 = {
          ...record('etf_daily', etfBar('510312', '2024-01-03')),
          unique_key: { symbol: '510312', date: '2024-01-04', source: 'eastmoney' },
        };
        const r3 = {
          ...record('etf_daily', etfBar('510312', '2024-01-05')),
          unique_key: { symbol: '510312', date: '2024-01-05' },
        };
        const r4 = {
          ...record('etf_daily', etfBar('510312', '2024-01-06')),
          unique_key: { symbol: '510312', date: '2024-01-06', source: 'eastmoney', close: 1 },
        };
        const r5 = { ...record('etf_daily', etfBar('510312', '2024-01-07')), idempotency_key: '' };
        const res = await push(h.app, batchOfRecords('etf_daily', [r1, r2, r3, r4, r5]));
        assert.equal(res.statusCode, 207);
        const fields = (json(res).errors as Json[]).map((e) => e.field);
        assert.deepEqual(fields, [
          'unique_key.date',
          'unique_key.source',
          'unique_key.close',
          'idempotency_key',
        ]);
      });
      it('rejects the later of two conflicting records with one key; counts an identical repeat as duplicate', async () => {
        const a = etfBar('510313', '2024-01-02');
        const res = await push(
          h.app,
          batch('etf_daily', [a, { ...a, close: 1 }, a, etfBar('510313', '2024-01-03')]),
        );
        assert.equal(res.statusCode, 207);
        const body = json(res);
        assert.deepEqual([body.accepted, body.duplicate, body.rejected], [2, 1, 1]);
        assert.deepEqual(
          (body.errors as Json[]).map((e) => [e.index, e.reason]),
          [[1, 'conflicting duplicate key in batch']],
        );
        const rows = await rowsOf(h, '/api/v1/etf/kline?code=510313&date=2024-01-02');
        assert.equal(rows[0]?.close, a.close);
      });
    });

    it('counts accepted = written, duplicate = identical to what is stored, and sums to record_count', async () => {
      const rows = [etfBar('510314', '2024-01-02'), etfBar('510314', '2024-01-03')];
      assert.equal(json(await push(h.app, batch('etf_daily', rows))).accepted, 2);
      const again = json(await push(h.app, batch('etf_daily', [...rows, etfBar('510314', '2024-01-04')])));
      assert.deepEqual([again.accepted, again.duplicate, again.rejected], [1, 2, 0]);
      const changed = json(
        await push(h.app, batch('etf_daily', [{ ...rows[0], close: 10.5 }, rows[1] as Json])),
      );
      assert.deepEqual([changed.accepted, changed.duplicate], [1, 1]);
      const rowsBack = await rowsOf(h, '/api/v1/etf/kline?code=510314&date=2024-01-02');
      assert.equal(rowsBack[0]?.close, 10.5);
    });

    it('fills an absent optional updated_at with server time, and a re-push of the same data is a duplicate', async () => {
      const row = { symbol: 'USDCNY', date: '2024-01-02', close: 7.1, source: 'pboc' };
      const first = json(await push(h.app, batch('fx', [row])));
      assert.equal(first.accepted, 1);
      const [stored] = await rowsOf(h, '/api/v1/market/fx?code=USDCNY');
      assert.match(stored?.updated_at as string, ISO_Z);
      const again = json(await push(h.app, batch('fx', [row])));
      assert.deepEqual([again.accepted, again.duplicate], [0, 1]);
    });

    describe('full_snapshot', () => {
      it('replaces its partition atomically and leaves other dates and sources alone', async () => {
        const day = '2024-03-01';
        await push(
          h.app,
          batch('etf_daily', [
            etfBar('F1', day),
            etfBar('F2', day),
            etfBar('F3', day),
            etfBar('F1', '2024-03-02'),
          ]),
        );
        await push(h.app, batch('etf_daily', [etfBar('F1', day, { source: 'sina' })], { source: 'sina' }));
        const res = await push(
          h.app,
          batch('etf_daily', [etfBar('F1', day, { close: 2 }), etfBar('F4', day)], {
            snapshotType: 'full_snapshot',
            businessDate: day,
          }),
        );
        assert.equal(res.statusCode, 200, res.body);
        const body = json(res);
        assert.deepEqual([body.accepted, body.duplicate, body.rejected, body.pruned], [2, 0, 0, 2]);
        const eastmoney = await rowsOf(
          h,
          `/api/v1/etf/kline?date=${day}&source=eastmoney&sort=code&order=asc`,
        );
        assert.deepEqual(
          eastmoney.map((r) => [r.code, r.close]),
          [
            ['F1', 2],
            ['F4', 9.420000000000002],
          ],
        );
        assert.equal(await totalOf(h, `/api/v1/etf/kline?date=${day}&source=sina`), 1);
        assert.equal(await totalOf(h, '/api/v1/etf/kline?date=2024-03-02'), 1);
      });
      it('rejects a record outside the partition and then prunes nothing', async () => {
        const day = '2024-04-01';
        await push(h.app, batch('etf_daily', [etfBar('G1', day), etfBar('G2', day)]));
        const res = await push(
          h.app,
          batch(
            'etf_daily',
            [etfBar('G1', day), etfBar('G3', '2024-04-02'), etfBar('G4', day, { source: 'sina' })],
            { snapshotType: 'full_snapshot', businessDate: day },
          ),
        );
        assert.equal(res.statusCode, 207);
        const body = json(res);
        assert.equal(body.status, 'partial');
        assert.equal(body.pruned, 0);
        const errors = body.errors as Json[];
        assert.deepEqual(
          errors.map((e) => e.field),
          ['date', 'source', null],
        );
        assert.equal(errors[2]?.reason, PRUNE_SKIPPED);
        assert.equal(await totalOf(h, `/api/v1/etf/kline?date=${day}`), 2, 'G2 was not deleted');
      });
      it('treats a dataset without a partition field as one partition per source (etf_price) or one table (etf_basic)', async () => {
        const price = (code: string, source: string) => ({ code, price: 1.5, source });
        await push(h.app, batch('etf_price', [price('P1', 'a'), price('P2', 'a'), price('P1', 'b')]));
        const res = await push(
          h.app,
          batch('etf_price', [price('P3', 'a')], { snapshotType: 'full_snapshot', source: 'a' }),
        );
        assert.equal(json(res).pruned, 2);
        assert.deepEqual(
          (await rowsOf(h, '/api/v1/etf/price')).map((r) => `${r.code}/${r.source}`),
          ['P1/b', 'P3/a'],
        );
        await push(
          h.app,
          batch('etf_basic', [
            { code: 'B1', name: 'one' },
            { code: 'B2', name: 'two' },
          ]),
        );
        await push(
          h.app,
          batch('etf_basic', [{ code: 'B2', name: 'two' }], { snapshotType: 'full_snapshot' }),
        );
        assert.deepEqual(
          (await rowsOf(h, '/api/v1/etf/basic')).map((r) => r.code),
          ['B2'],
        );
      });
    });

    it('stores a few thousand real-looking daily bars and reads back exactly the values sent', async () => {
      const dates = days('2015-01-01', 3000);
      let price = 3.1;
      const rows = dates.map((date, i) => {
        price = price * (1 + Math.sin(i) / 50);
        return etfBar('510500', date, {
          open: price * 0.99,
          high: price * 1.01,
          low: price * 0.98,
          close: price,
          volume: 1000 + i,
          amount: price * (1000 + i),
          pct_chg: Math.sin(i) * 2,
        });
      });
      const res = await push(h.app, batch('etf_daily', rows));
      assert.equal(json(res).accepted, 3000);
      const back: Json[] = [];
      for (let offset = 0; offset < 3000; offset += 1000) {
        back.push(
          ...(await rowsOf(
            h,
            `/api/v1/etf/kline?code=510500&sort=date&order=asc&limit=1000&offset=${offset}`,
          )),
        );
      }
      assert.equal(back.length, 3000);
      back.forEach((r, i) => {
        const sent = rows[i] as Json;
        for (const f of ['open', 'high', 'low', 'close', 'volume', 'amount', 'pct_chg'])
          assert.equal(r[f], sent[f], `${f} of row ${i}`);
        assert.equal(r.date, sent.date);
      });
    });

    it('applies the same batch pushed 20 times at once exactly once', async () => {
      const b = batch(
        'etf_daily',
        days('2010-01-01', 500).map((d) => etfBar('510600', d)),
      );
      const answers = await Promise.all(Array.from({ length: 20 }, () => push(h.app, b)));
      const statuses = answers.map((a) =>
        a.statusCode === 200 ? (json(a).status as string) : `${a.statusCode}/${String(json(a).code)}`,
      );
      assert.equal(statuses.filter((s) => s === 'accepted').length, 1, statuses.join(','));
      for (const s of statuses) assert.ok(['accepted', 'duplicate', '409/4091'].includes(s), s);
      assert.equal(await totalOf(h, '/api/v1/etf/kline?code=510600'), 500);
    });

    it('purges status records older than the retention period', async () => {
      const b = batch('etf_daily', [etfBar('510700', '2024-01-02')]);
      await push(h.app, b);
      assert.equal(await h.store.batches.purgeBatches('2000-01-01T00:00:00.000Z'), 0);
      assert.ok((await h.store.batches.purgeBatches('2999-01-01T00:00:00.000Z')) >= 1);
      assert.equal((await batchStatus(h.app, idOf(b))).statusCode, 404);
    });
  });
}
