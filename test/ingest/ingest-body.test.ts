// Issue 14 items 9-11: what the ingest body may be, as bytes. The "hash what you send" checksum
// (decisions.md), Content-Encoding gzip/deflate with MDS_BODY_LIMIT on the decompressed size,
// bodies that are not UTF-8, and values JSON.parse alone lets through (a repeated key, an
// underflow to 0), 2^53 and beyond, empty key fields. On every backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import {
  backends,
  batchStatus,
  get,
  INGEST_KEY,
  startApp,
  type Harness,
  type Json,
} from '../helpers/harness.js';
import { batch, etfBar, record, uniqueId } from '../helpers/batches.js';
import { sampleRow } from '../helpers/sample-rows.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { batchChecksum } from '../../src/ingest/checksum.js';

const BODY_LIMIT = 65_536;
const INGEST = '/api/v1/upstream/ingest/batches';
const sha256 = (b: string | Buffer): string => createHash('sha256').update(b).digest('hex');

/** A body around `recordsText` exactly as given, its checksum over exactly those bytes. */
function bodyAround(
  recordsText: string,
  count: number,
  opts: { batchId?: string; sum?: string } = {},
): string {
  const meta = {
    ...(batch('etf_daily', []).meta as Json),
    batch_id: opts.batchId ?? uniqueId('body'),
    record_count: count,
  };
  const sum = opts.sum ?? sha256(Buffer.from(recordsText, 'utf8'));
  return `{"meta": ${JSON.stringify(meta)},\n "records": ${recordsText},\n "checksum": {"sha256": "${sum}"}}`;
}

/** etf_daily records as Python's json.dumps writes them (spaces, 5e-05, 684569.0, \\u escapes). */
function pythonStyleRecords(symbols: string[]): string {
  const recs = symbols.map(
    (s) =>
      `{"idempotency_key": "etf_daily:${s}:2024-01-02:eastmoney", "unique_key": {"symbol": "${s}", "date": "2024-01-02", "source": "eastmoney"}, ` +
      `"data": {"symbol": "${s}", "date": "2024-01-02", "open": 5e-05, "high": 684569.0, "low": 1.5, "close": 9007199254740993, ` +
      `"volume": 1e+21, "source": "eastmoney", "updated_at": "2024-01-02T10:00:00Z"}}`,
  );
  return `[${recs.join(', ')}]`;
}

for (const backend of await backends()) {
  describe(`ingest body [${backend}]`, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend, { MDS_BODY_LIMIT: String(BODY_LIMIT) });
    });
    after(async () => h.close());

    const send = (payload: string | Buffer, headers: Record<string, string> = {}) =>
      h.app.inject({
        method: 'POST',
        url: INGEST,
        headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY, ...headers },
        payload,
      });
    const rowsOf = async (qs: string): Promise<Json[]> =>
      (await get(h.app, `/api/v1/etf/kline?${qs}`)).json<{ data: Json[] }>().data;

    describe('checksum: hash what you send', () => {
      it('accepts the SHA-256 of the records bytes as sent (Python formatting, 5e-05, 684569.0, 2^53+1)', async () => {
        const res = await send(bodyAround(pythonStyleRecords(['560001', '560002']), 2));
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json<Json>().status, 'accepted');
        const [row] = await rowsOf('code=560001');
        assert.equal(row?.open, 5e-5);
        assert.equal(row?.close, 9007199254740992, 'a number, as a 64-bit float holds it');
      });

      it('covers exactly [ to ]: one byte more or less is a mismatch (422 / 4220)', async () => {
        const text = pythonStyleRecords(['560003']);
        for (const wrong of [` ${text}`, text.slice(0, -1), `${text},`]) {
          const res = await send(bodyAround(text, 1, { sum: sha256(wrong) }));
          assert.equal(res.statusCode, 422, res.body);
          assert.equal(res.json<Json>().code, 4220);
        }
      });

      it('non-ASCII sent raw or escaped: each is its own bytes', async () => {
        const name = (raw: boolean) =>
          `[{"idempotency_key": "k", "unique_key": {"symbol": "${raw ? 'é' : '\\u00e9'}", "date": "2024-01-03", "source": "eastmoney"}, ` +
          `"data": {"symbol": "${raw ? 'é' : '\\u00e9'}", "date": "2024-01-03", "close": 1, "volume": 2, "source": "eastmoney", "updated_at": "2024-01-02T10:00:00Z"}}]`;
        for (const raw of [true, false]) {
          const res = await send(bodyAround(name(raw), 1));
          assert.equal(res.statusCode, 200, res.body);
        }
        assert.equal((await rowsOf(`code=${encodeURIComponent('é')}`)).length, 1);
      });
      it('the same records under another accepted form are a duplicate, not a 409', async () => {
        const text = pythonStyleRecords(['560004', '560005']);
        const parsed = JSON.parse(text) as unknown[];
        const id = uniqueId('forms');
        const sent = await send(bodyAround(text, 2, { batchId: id }));
        assert.equal(sent.json<Json>().status, 'accepted', sent.body);
        for (const sum of [batchChecksum(parsed), sha256(JSON.stringify(parsed))]) {
          const again = await send(bodyAround(text, 2, { batchId: id, sum }));
          assert.equal(again.statusCode, 200, again.body);
          assert.equal(again.json<Json>().status, 'duplicate');
          assert.equal(again.json<Json>().checksum, sent.json<Json>().checksum, 'the original record');
        }
        // First sent as JCS, then re-sent as "the bytes sent" and re-formatted: a duplicate too.
        const jcsFirst = batch('etf_daily', [etfBar('560006', '2024-01-02')], { batchId: uniqueId('forms') });
        assert.equal((await send(JSON.stringify(jcsFirst))).statusCode, 200);
        const spaced = JSON.stringify(jcsFirst.records, null, 2);
        const meta = jcsFirst.meta as Json;
        const resent = await send(bodyAround(spaced, 1, { batchId: meta.batch_id as string }));
        assert.equal(resent.json<Json>().status, 'duplicate', resent.body);
        // Other records under the same id: still 409 / 4090, in every form.
        const other = pythonStyleRecords(['560007', '560005']);
        for (const sum of [undefined, batchChecksum(JSON.parse(other))]) {
          const conflict = await send(bodyAround(other, 2, { batchId: id, ...(sum ? { sum } : {}) }));
          assert.equal(conflict.statusCode, 409, conflict.body);
          assert.equal(conflict.json<Json>().code, 4090);
        }
      });
    });

    describe('Content-Encoding', () => {
      const good = (): string => JSON.stringify(batch('etf_daily', [etfBar('560010', '2024-01-04')]));

      for (const [encoding, compress] of [
        ['gzip', zlib.gzipSync],
        ['deflate', zlib.deflateSync],
      ] as const) {
        it(`accepts a ${encoding} body`, async () => {
          const res = await send(compress(good()), { 'content-encoding': encoding });
          assert.equal(res.statusCode, 200, res.body);
          assert.equal(res.json<Json>().status, 'accepted');
        });
      }

      it('the "hash what you send" checksum covers the decompressed bytes', async () => {
        const text = bodyAround(pythonStyleRecords(['560011']), 1);
        const res = await send(zlib.gzipSync(text), { 'content-encoding': 'gzip' });
        assert.equal(res.statusCode, 200, res.body);
      });

      it('refuses an unsupported encoding with 415 / 4151', async () => {
        for (const encoding of ['br', 'compress', 'gzip, gzip', 'zstd']) {
          const res = await send(good(), { 'content-encoding': encoding });
          assert.equal(res.statusCode, 415, `${encoding}: ${res.body}`);
          assert.equal(res.json<Json>().code, 4151);
        }
      });

      it('a decompression bomb gets 413 / 4130: the limit applies to the decompressed size', async () => {
        // 64 MiB of spaces inside a valid body compress to about 64 KB... of which the server
        // reads only until MDS_BODY_LIMIT (64 KB) of output.
        const bomb = zlib.gzipSync(
          Buffer.concat([Buffer.from('{"meta":'), Buffer.alloc(64 << 20, 0x20), Buffer.from('1}')]),
        );
        assert.ok(bomb.length < BODY_LIMIT * 2);
        const res = await send(bomb, { 'content-encoding': 'gzip' });
        assert.equal(res.statusCode, 413, res.body);
        assert.equal(res.json<Json>().code, 4130);
        // A body within the limit compressed but over it decompressed: the same.
        const wide = zlib.gzipSync(bodyAround(`[${' '.repeat(BODY_LIMIT)}]`, 0));
        assert.ok(wide.length < BODY_LIMIT);
        assert.equal((await send(wide, { 'content-encoding': 'gzip' })).statusCode, 413);
      });

      it('a body that is not gzip although declared so: 400 / 4001', async () => {
        const res = await send(good(), { 'content-encoding': 'gzip' });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json<Json>().code, 4001);
      });
    });

    describe('bytes that are not UTF-8: 400 / 4002, never a checksum error, nothing stored', () => {
      for (const [name, bad] of [
        ['a Latin-1 é', Buffer.from([0xe9])],
        ['a lone continuation byte', Buffer.from([0x80])],
        ['an encoded surrogate (CESU)', Buffer.from([0xed, 0xa0, 0x80])],
        ['an overlong encoding', Buffer.from([0xc0, 0xaf])],
      ] as const) {
        it(name, async () => {
          const id = uniqueId('utf8');
          const text = bodyAround(pythonStyleRecords(['56002X']), 1, { batchId: id });
          const at = text.indexOf('56002X') + 5;
          const body = Buffer.concat([Buffer.from(text.slice(0, at)), bad, Buffer.from(text.slice(at + 1))]);
          const res = await send(body);
          assert.equal(res.statusCode, 400, res.body);
          assert.equal(res.json<Json>().code, 4002);
          assert.equal((await batchStatus(h.app, id)).statusCode, 404);
        });
      }
    });

    describe('values', () => {
      it('numbers of 2^53 and beyond are numbers like any other', async () => {
        const big = [2 ** 53, 2 ** 60, 1e21, 1.7976931348623157e308];
        const res = await h.app.inject({
          method: 'POST',
          url: INGEST,
          headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
          payload: JSON.stringify(
            batch(
              'etf_daily',
              big.map((v, i) => etfBar(`56003${i}`, '2024-01-05', { volume: v })),
            ),
          ),
        });
        assert.equal(res.statusCode, 200, res.body);
        const rows = await rowsOf('date_from=2024-01-05&date_to=2024-01-05&sort=code');
        assert.deepEqual(
          rows.map((r) => r.volume),
          big,
        );
      });

      it('an integer field holds exact integers only: beyond 2^53 − 1 the record is rejected', async () => {
        const d = CATALOG.byName.get('etf_holders');
        assert.ok(d);
        const ok = sampleRow(d, 0);
        const over = { ...sampleRow(d, 1), holder_count: 2 ** 53 };
        const res = await h.app.inject({
          method: 'POST',
          url: INGEST,
          headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
          payload: JSON.stringify(batch('etf_holders', [ok, over])),
        });
        assert.equal(res.statusCode, 207, res.body);
        const [e] = res.json<{ errors: Json[] }>().errors;
        assert.equal(e?.index, 1);
        assert.equal(e?.field, 'holder_count');
        assert.match(String(e?.reason), /2\^53/);
      });

      it('1e-400 (underflow) is a rejected record, not a 0 stored', async () => {
        const recs = [
          record('etf_daily', etfBar('560040', '2024-01-06')),
          record('etf_daily', etfBar('560041', '2024-01-06', { close: 7 })),
        ];
        const text = JSON.stringify(recs).replace('"close":7', '"close":1e-400');
        const res = await send(bodyAround(text, 2));
        assert.equal(res.statusCode, 207, res.body);
        const [e] = res.json<{ errors: Json[] }>().errors;
        assert.deepEqual([e?.index, e?.field], [1, 'close']);
        assert.match(String(e?.reason), /too small/);
        assert.equal((await rowsOf('code=560041')).length, 0);
        // 0, 0.0, 0e-5 and the smallest subnormal are fine.
        const fine = JSON.stringify([
          record('etf_daily', etfBar('560042', '2024-01-06', { close: 7, open: 8, low: 9 })),
        ])
          .replace('"close":7', '"close":0e-5')
          .replace('"open":8', '"open":5e-324')
          .replace('"low":9', '"low":-0.0');
        assert.equal((await send(bodyAround(fine, 1))).statusCode, 200);
      });

      it('1e-400 outside the records: 400 / 4001', async () => {
        const text = JSON.stringify([record('etf_daily', etfBar('560043', '2024-01-06'))]);
        const body = bodyAround(text, 1).replace('"meta": {', '"meta": {"extra": 1e-400, ');
        const res = await send(body);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json<Json>().code, 4001);
      });

      it('a key repeated in the body or meta: 400 / 4001, the batch_id not used up', async () => {
        const id = uniqueId('dupkey');
        const text = JSON.stringify([record('etf_daily', etfBar('560050', '2024-01-07'))]);
        const good = bodyAround(text, 1, { batchId: id });
        for (const bad of [
          good.replace('"meta": {', '"meta": {"source": "other", '),
          good.replace('"records":', '"checksum": {"sha256": "x"}, "records":'),
          good.replace('"checksum": {', '"checksum": {"sha256": "0", '),
        ]) {
          const res = await send(bad);
          assert.equal(res.statusCode, 400, res.body);
          assert.equal(res.json<Json>().code, 4001);
          assert.match(res.json<Json>().message as string, /repeats the key/);
        }
        assert.equal((await send(good)).statusCode, 200);
      });

      it('a key repeated inside a record: that record is rejected, the rest proceeds', async () => {
        const recs = [
          record('etf_daily', etfBar('560051', '2024-01-07')),
          record('etf_daily', etfBar('560052', '2024-01-07', { close: 7 })),
          record('etf_daily', etfBar('560053', '2024-01-07')),
        ];
        const text = JSON.stringify(recs)
          .replace('"close":7', '"close":7,"close":8')
          .replace('"unique_key":{"symbol":"560053"', '"unique_key":{"symbol":"560053","symbol":"560053"');
        const res = await send(bodyAround(text, 3));
        assert.equal(res.statusCode, 207, res.body);
        const errors = res.json<{ errors: Json[] }>().errors;
        assert.deepEqual(
          errors.map((e) => [e.index, e.field, e.idempotency_key]),
          [
            [1, 'close', 'etf_daily:560052:2024-01-07:eastmoney'],
            [2, 'unique_key.symbol', 'etf_daily:560053:2024-01-07:eastmoney'],
          ],
        );
        assert.deepEqual(
          (await rowsOf('date_from=2024-01-07&date_to=2024-01-07&sort=code')).map((r) => r.code),
          ['560050', '560051'],
        );
      });

      it('an empty string is not a key field value', async () => {
        const res = await h.app.inject({
          method: 'POST',
          url: INGEST,
          headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
          payload: JSON.stringify(batch('etf_daily', [etfBar('', '2024-01-08')])),
        });
        assert.equal(res.statusCode, 422, res.body);
        const [e] = res.json<{ errors: Json[] }>().errors;
        assert.equal(e?.field, 'symbol');
      });

      it('a checksum of the parsed forms still works (JCS)', async () => {
        const b = batch('etf_daily', [etfBar('560060', '2024-01-09')]);
        assert.equal((b.checksum as Json).sha256, batchChecksum(b.records));
        const res = await send(JSON.stringify(b));
        assert.equal(res.statusCode, 200, res.body);
      });
    });
  });
}
