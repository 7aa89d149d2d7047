// Issue 6, bad input: a table-driven corpus of hostile and broken requests. Each case gets its
// documented 4xx and code (never a 5xx), stores nothing (dataset rows and the batch registry
// unchanged; a wholly rejected batch leaves only its "rejected" status record, as decided),
// and the service is healthy afterwards. On every backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  ADMIN_TOKEN,
  backends,
  get,
  INGEST_KEY,
  push,
  QUERY_KEY,
  startApp,
  type Harness,
} from '../helpers/harness.js';
import { batch, batchOfRecords, etfBar, record, uniqueId } from '../helpers/batches.js';
import { sha256Hex } from '../../src/ingest/checksum.js';

const BODY_LIMIT = 65_536;
const MAX_RECORDS = 50;
const INGEST = '/api/v1/upstream/ingest/batches';
const KLINE = '/api/v1/etf/kline';

type Rec = Record<string, unknown>;

interface Case {
  category: string;
  name: string;
  method: 'GET' | 'POST' | 'PATCH';
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
  status: number;
  code: number;
}

function meta(overrides: Rec = {}, count = 1): Rec {
  return {
    schema_version: '3.0',
    batch_id: uniqueId('bad'),
    source_system: 'upstream',
    source_run_id: 'run-1',
    dataset: 'etf_daily',
    table: 'etf_daily',
    operation: 'upsert',
    snapshot_type: 'incremental',
    business_date: '2024-01-02',
    source: 'eastmoney',
    record_count: count,
    send_time: '2024-01-02T08:00:00Z',
    ...overrides,
  };
}

/**
 * A batch body as text: `raw` replaces quoted placeholders ("@@name@@") with literal JSON text
 * (1e999, __proto__ keys...) and the checksum is the compact form of what the server will parse.
 */
function rawBody(records: unknown[], metaOverrides: Rec = {}, raw: Record<string, string> = {}): string {
  let text = JSON.stringify(records);
  for (const [k, v] of Object.entries(raw)) text = text.split(`"@@${k}@@"`).join(v);
  let sum: string;
  try {
    sum = sha256Hex(JSON.stringify(JSON.parse(text)));
  } catch {
    // Too deep even to stringify: the server must refuse it before the checksum anyway.
    sum = '0'.repeat(64);
  }
  return `{"meta":${JSON.stringify(meta(metaOverrides, records.length))},"records":${text},"checksum":{"sha256":"${sum}"}}`;
}

const bar = (extra: Rec = {}): Rec => etfBar('510300', '2024-01-02', extra);
/** One record whose data has `extra` merged in (unique_key derived from the good bar). */
const recWith = (extra: Rec): Rec => ({ ...record('etf_daily', bar()), data: bar(extra) });

const post = (category: string, name: string, payload: string, status: number, code: number): Case => ({
  category,
  name,
  method: 'POST',
  url: INGEST,
  headers: { 'content-type': 'application/json', 'up-api-key': INGEST_KEY },
  payload,
  status,
  code,
});
const oneRecord = (category: string, name: string, rec: unknown, raw: Record<string, string> = {}): Case =>
  post(category, name, rawBody([rec], {}, raw), 422, 4221);
const badMeta = (name: string, overrides: Rec): Case =>
  post('meta', name, rawBody([record('etf_daily', bar())], overrides), 400, 4001);
const query = (name: string, qs: string): Case => ({
  category: 'query parameters',
  name,
  method: 'GET',
  url: `${KLINE}?${qs}`,
  headers: { 'q-api-key': QUERY_KEY },
  status: 400,
  code: 4001,
});

const status = (name: string, id: string, code: number, appCode: number): Case => ({
  category: 'path parameters',
  name,
  method: 'GET',
  url: `${INGEST}/${id}`,
  headers: { 'up-api-key': INGEST_KEY },
  status: code,
  code: appCode,
});

/** An admin route with the admin token; a payload is sent as JSON. */
const admin = (
  name: string,
  method: Case['method'],
  url: string,
  code: number,
  appCode: number,
  payload?: string,
): Case => ({
  category: 'path parameters',
  name,
  method,
  url,
  headers: {
    authorization: `Bearer ${ADMIN_TOKEN}`,
    ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
  },
  ...(payload !== undefined ? { payload } : {}),
  status: code,
  code: appCode,
});

/** An admin request body the key service must refuse: 400 / 4001 before anything is stored. */
const adminBody = (name: string, method: Case['method'], url: string, payload: string): Case => ({
  ...admin(name, method, url, 400, 4001, payload),
  category: 'admin bodies',
});

const good = JSON.stringify(batch('etf_daily', [bar()]));
const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n);

const CORPUS: Case[] = [
  // Body size and content type.
  post(
    'body limit',
    `body over MDS_BODY_LIMIT (${BODY_LIMIT} B)`,
    rawBody(
      Array.from({ length: 40 }, (_, i) =>
        record(
          'etf_daily',
          etfBar(`5${String(i).padStart(5, '0')}`, '2024-01-02', { source: 'x'.repeat(2000) }),
        ),
      ),
    ),
    413,
    4130,
  ),
  {
    ...post('content type', 'text/plain', good, 415, 4150),
    headers: { 'content-type': 'text/plain', 'up-api-key': INGEST_KEY },
  },
  {
    ...post('content type', 'form-urlencoded', 'a=1', 415, 4150),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'up-api-key': INGEST_KEY },
  },
  {
    ...post('content type', 'multipart', good, 415, 4150),
    headers: { 'content-type': 'multipart/form-data; boundary=x', 'up-api-key': INGEST_KEY },
  },
  { ...post('content type', 'no content type', good, 415, 4150), headers: { 'up-api-key': INGEST_KEY } },
  // Malformed JSON.
  post('malformed JSON', 'unterminated object', '{"meta":', 400, 4001),
  post('malformed JSON', 'truncated valid batch', good.slice(0, Math.floor(good.length / 2)), 400, 4001),
  post('malformed JSON', 'empty body', '', 400, 4001),
  post('malformed JSON', 'trailing garbage', `${good}xyz`, 400, 4001),
  post('malformed JSON', 'single quotes', "{'meta': {}}", 400, 4001),
  post('malformed JSON', 'NaN literal', good.replace('9.420000000000002', 'NaN'), 400, 4001),
  post('malformed JSON', 'array body', '[]', 400, 4001),
  post('malformed JSON', 'string body', '"batch"', 400, 4001),
  post('malformed JSON', 'null body', 'null', 400, 4001),
  // Deep nesting.
  post(
    'deep nesting',
    'records nested 10,000 deep',
    rawBody([recWith({}), '@@deep@@'], {}, { deep: deep(10_000) }),
    400,
    4001,
  ),
  post(
    'deep nesting',
    'data nested 100 deep',
    rawBody([recWith({ close: '@@deep@@' })], {}, { deep: deep(100) }),
    400,
    4001,
  ),
  post(
    'deep nesting',
    'meta field nested 10,000 deep',
    rawBody([record('etf_daily', bar())], { source: '@@deep@@' }).replace('"@@deep@@"', deep(10_000)),
    400,
    4001,
  ),
  // Prototype pollution.
  post('prototype keys', '__proto__ at the top', `{"__proto__":{"polluted":1},${good.slice(1)}`, 400, 4001),
  post(
    'prototype keys',
    '__proto__ in meta',
    good.replace('"meta":{', '"meta":{"__proto__":{"x":1},'),
    400,
    4001,
  ),
  post(
    'prototype keys',
    '__proto__ in data',
    rawBody([recWith({ '@@p@@': { admin: true } })], {}, { p: '"__proto__"' }),
    400,
    4001,
  ),
  post(
    'prototype keys',
    '__proto__ in unique_key',
    rawBody([{ ...record('etf_daily', bar()), unique_key: { '@@p@@': {} } }], {}, { p: '"__proto__"' }),
    400,
    4001,
  ),
  post(
    'prototype keys',
    'constructor.prototype in data',
    rawBody([recWith({ constructor: { prototype: { x: 1 } } })]),
    400,
    4001,
  ),
  oneRecord('prototype keys', 'constructor as a data field', recWith({ constructor: 'x' })),
  // Numbers.
  oneRecord('numbers', 'close 1e999 (Infinity)', recWith({ close: '@@inf@@' }), { inf: '1e999' }),
  oneRecord('numbers', 'close -1e999', recWith({ close: '@@inf@@' }), { inf: '-1e999' }),
  // Numbers of 2^53 and beyond are numbers like any other: test/ingest-values.test.ts.
  oneRecord('numbers', 'close as a string', recWith({ close: '9.42' })),
  oneRecord('numbers', 'close as a boolean', recWith({ close: true })),
  badMeta('record_count 1e999', { record_count: '@@inf@@' }),
  // Strings.
  oneRecord('strings', 'NUL in a string field', recWith({ symbol: '510\u0000300' })),
  oneRecord('strings', 'lone high surrogate', recWith({ symbol: '510\ud800' })),
  oneRecord('strings', 'lone low surrogate', recWith({ symbol: '\udc00' })),
  oneRecord('strings', 'NUL in idempotency_key', {
    ...record('etf_daily', bar()),
    idempotency_key: 'a\u0000b',
  }),
  badMeta('NUL in meta.batch_id', { batch_id: 'b\u0000x' }),
  badMeta('lone surrogate in meta.source', { source: 'src\ud800' }),
  badMeta('meta.batch_id of 300 characters', { batch_id: 'b'.repeat(300) }),
  // Dates and timestamps.
  oneRecord('dates', 'date 2024-02-30', { ...record('etf_daily', etfBar('510300', '2024-02-30')) }),
  oneRecord('dates', 'date 2023-02-29', { ...record('etf_daily', etfBar('510300', '2023-02-29')) }),
  oneRecord('dates', 'date 2024-1-2', { ...record('etf_daily', etfBar('510300', '2024-1-2')) }),
  oneRecord('dates', 'updated_at without offset', recWith({ updated_at: '2024-01-02T10:00:00' })),
  oneRecord('dates', 'updated_at hour 25', recWith({ updated_at: '2024-01-02T25:00:00Z' })),
  oneRecord('dates', 'updated_at as epoch number', recWith({ updated_at: 1704189600 })),
  badMeta('business_date 2024-02-30', { business_date: '2024-02-30' }),
  badMeta('send_time without offset', { send_time: '2024-01-02T08:00:00' }),
  // Meta and counts.
  badMeta('record_count huge (1e15)', { record_count: 1e15 }),
  badMeta('record_count negative', { record_count: -1 }),
  badMeta('record_count fractional', { record_count: 1.5 }),
  badMeta('record_count as a string', { record_count: '1' }),
  badMeta('unknown dataset', {
    dataset: 'etf_daily; DROP TABLE etf_daily',
    table: 'etf_daily; DROP TABLE etf_daily',
  }),
  badMeta('table differs from dataset', { table: 'stock_daily' }),
  badMeta('schema_version 2.0', { schema_version: '2.0' }),
  badMeta('snapshot_type delta', { snapshot_type: 'delta' }),
  badMeta('batch_id a number', { batch_id: 42 }),
  post('meta', 'meta missing', JSON.stringify({ records: [], checksum: { sha256: 'x' } }), 400, 4001),
  post(
    'meta',
    'records not an array',
    JSON.stringify({ meta: meta(), records: {}, checksum: { sha256: 'x' } }),
    400,
    4001,
  ),
  post(
    'meta',
    'checksum.sha256 a number',
    JSON.stringify({ meta: meta(), records: [], checksum: { sha256: 1 } }),
    400,
    4001,
  ),
  post(
    'meta',
    'checksum mismatch',
    JSON.stringify({ ...batch('etf_daily', [bar()]), checksum: { sha256: '0'.repeat(64) } }),
    422,
    4220,
  ),
  post(
    'meta',
    'empty full snapshot',
    JSON.stringify(batchOfRecords('etf_daily', [], { snapshotType: 'full_snapshot' })),
    400,
    4001,
  ),
  post(
    'record limit',
    `records beyond MDS_MAX_RECORDS (${MAX_RECORDS + 1})`,
    JSON.stringify(
      batch(
        'etf_daily',
        Array.from({ length: MAX_RECORDS + 1 }, (_, i) => etfBar(String(500000 + i), '2024-01-02')),
      ),
    ),
    400,
    4001,
  ),
  // Key fields and record shape.
  oneRecord('key fields', 'symbol a number', {
    ...record('etf_daily', bar()),
    data: bar({ symbol: 510300 }),
    unique_key: { symbol: 510300, date: '2024-01-02', source: 'eastmoney' },
  }),
  oneRecord('key fields', 'unique_key disagrees with data', {
    ...record('etf_daily', bar()),
    unique_key: { symbol: '510301', date: '2024-01-02', source: 'eastmoney' },
  }),
  oneRecord('key fields', 'unique_key missing a field', {
    ...record('etf_daily', bar()),
    unique_key: { symbol: '510300', date: '2024-01-02' },
  }),
  oneRecord('key fields', 'unique_key with an extra field', {
    ...record('etf_daily', bar()),
    unique_key: { symbol: '510300', date: '2024-01-02', source: 'eastmoney', close: 1 },
  }),
  oneRecord('key fields', 'unique_key an array', { ...record('etf_daily', bar()), unique_key: ['510300'] }),
  oneRecord('key fields', 'date a number', {
    ...record('etf_daily', bar()),
    data: bar({ date: 20240102 }),
    unique_key: { symbol: '510300', date: 20240102, source: 'eastmoney' },
  }),
  oneRecord('key fields', 'idempotency_key empty', { ...record('etf_daily', bar()), idempotency_key: '' }),
  oneRecord('key fields', 'idempotency_key a number', { ...record('etf_daily', bar()), idempotency_key: 7 }),
  oneRecord('key fields', 'required field null', recWith({ close: null })),
  oneRecord('key fields', 'unknown data field', recWith({ password: 'x' })),
  oneRecord('key fields', 'unknown record field', { ...record('etf_daily', bar()), extra: 1 }),
  oneRecord('key fields', 'record a string', 'etf_daily:510300'),
  oneRecord('key fields', 'data an array', { ...record('etf_daily', bar()), data: [1, 2] }),
  // Path parameters.
  status('batch_id with NUL', '%00', 404, 4040),
  status('batch_id of 300 characters', 'b'.repeat(300), 404, 4040),
  status('batch_id of 5,000 characters', 'b'.repeat(5000), 400, 4001),
  status('batch_id with invalid percent-encoding', '%ED%A0%80', 400, 4001),
  status('batch_id with SQL', "x'%20OR%20'1'%3D'1", 404, 4040),
  // The admin API's routes take ids too (on PostgreSQL a NUL reached the database: 500).
  admin('admin batch id with NUL', 'GET', '/admin/api/batches/%00', 404, 4040),
  admin('admin changes of an id with NUL', 'GET', '/admin/api/batches/a%00b/changes', 404, 4040),
  admin('admin revert of an id with NUL', 'POST', '/admin/api/batches/a%00b/revert', 404, 4040),
  admin('admin key id with NUL', 'GET', '/admin/api/keys/a%00b', 404, 4041),
  admin('admin revoke of a key id with NUL', 'POST', '/admin/api/keys/a%00b/revoke', 404, 4041),
  admin('admin quality of a dataset with NUL', 'GET', '/admin/api/quality/etf%00daily', 404, 4041),
  admin('admin change of a key id with NUL', 'PATCH', '/admin/api/keys/a%00b', 404, 4041, '{"name":"x"}'),
  // A JSON escape of an unpaired surrogate: both drivers would have stored U+FFFD (answered 201).
  adminBody(
    'key named an unpaired surrogate',
    'POST',
    '/admin/api/keys',
    '{"scope":"query","name":"a\\ud800"}',
  ),
  adminBody('key renamed to an unpaired surrogate', 'PATCH', '/admin/api/keys/x', '{"name":"\\udc00"}'),
  admin('admin batch id of 300 characters', 'GET', `/admin/api/batches/${'b'.repeat(300)}`, 404, 4040),
  // Query parameter abuse.
  query('limit -1', 'limit=-1'),
  query('limit 0', 'limit=0'),
  query('limit 1e9', 'limit=1e9'),
  query('limit 1.5', 'limit=1.5'),
  query('limit empty', 'limit='),
  query('limit text', 'limit=ten'),
  query('limit NUL', 'limit=%00'),
  query('batch_id NUL', 'batch_id=a%00b'),
  query('adjust_source NUL', 'adjust=hfq&adjust_source=a%00b'),
  query('cursor NUL', 'cursor=a%00b'),
  query('source_priority NUL', 'source_priority=a%00b'),
  query('offset -1', 'offset=-1'),
  query('offset 1.5', 'offset=1.5'),
  query('limit repeated', 'limit=10&limit=20'),
  query('sort repeated', 'sort=close&sort=open'),
  query('1,001 codes', `code=${Array.from({ length: 1001 }, (_, i) => String(510000 + i)).join(',')}`),
  query('unknown sort field', 'sort=password'),
  query('SQL in sort', 'sort=close%3B%20DROP%20TABLE%20etf_daily'),
  query('order sideways', 'order=up'),
  query('SQL in order', 'order=asc%2C(SELECT%201)'),
  query('unknown parameter', 'foo=1'),
  query('SQL in a parameter name', "code'%20OR%20'1'%3D'1=x"),
  query('__proto__ parameter', '__proto__=1'),
  query('constructor parameter', 'constructor=1'),
  query('bracket parameter', 'sort[]=date'),
  query('date_from impossible', 'date_from=2024-02-30'),
  query('date_from short', 'date_from=2024-1-1'),
  query('date_to a word', 'date_to=yesterday'),
  query('date filter month 13', 'date=2024-13-01'),
  query('fields unknown', 'fields=close,password'),
  query('format xml', 'format=xml'),
  query('cursor garbage', 'cursor=%27%3B--'),
];

/** Refusal of an oversized declared body, read over a real socket before any body byte is sent. */
function declaredTooLarge(port: number, headers: string): Promise<{ raw: string; bodyBytesSent: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let raw = '';
    socket.setTimeout(10_000, () => {
      socket.destroy();
      reject(new Error('no answer before the body'));
    });
    socket.on('data', (c: Buffer) => {
      raw += c.toString('utf8');
      if (raw.includes('\r\n\r\n')) {
        socket.destroy();
        resolve({ raw, bodyBytesSent: 0 });
      }
    });
    socket.on('error', reject);
    socket.write(
      `POST ${INGEST} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${headers}\r\n`,
    );
  });
}

for (const backend of await backends()) {
  describe(`bad input: ${CORPUS.length + 2}-case corpus (${backend})`, { timeout: 300_000 }, () => {
    let h: Harness;
    let port: number;
    let rowsBefore: number;
    let batchesBefore: number;
    let keysBefore: number;

    const totals = async (): Promise<{ rows: number; batches: number; keys: number }> => {
      const cov = await h.store.datasets.coverage();
      const batches = await h.store.batches.listBatches({ limit: 100_000 });
      return {
        rows: cov.reduce((n, c) => n + c.rows, 0),
        batches: batches.filter((b) => b.status !== 'rejected').length,
        keys: (await h.store.keys.listKeys()).length,
      };
    };

    before(async () => {
      h = await startApp(backend, {
        MDS_BODY_LIMIT: String(BODY_LIMIT),
        MDS_MAX_RECORDS: String(MAX_RECORDS),
        MDS_AUTH_FAILURES_PER_MINUTE: '100000',
      });
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      port = (h.app.server.address() as net.AddressInfo).port;
      const seeded = await push(h.app, batch('etf_daily', [etfBar('510300', '2024-01-02')]));
      assert.equal(seeded.statusCode, 200, seeded.body);
      ({ rows: rowsBefore, batches: batchesBefore, keys: keysBefore } = await totals());
    });
    after(async () => h.close());

    const checkNothingStored = async (): Promise<void> => {
      const now = await totals();
      assert.equal(now.rows, rowsBefore, 'dataset rows unchanged');
      assert.equal(now.batches, batchesBefore, 'no batch registered (beyond "rejected" records)');
      assert.equal(now.keys, keysBefore, 'no key created');
      const health = await h.app.inject({ method: 'GET', url: '/health' });
      assert.equal(health.statusCode, 200, 'healthy after');
    };

    for (const c of CORPUS) {
      it(`[${c.category}] ${c.name} → ${c.status} / ${c.code}`, async () => {
        const res = await h.app.inject({
          method: c.method,
          url: c.url,
          headers: c.headers ?? {},
          ...(c.payload !== undefined ? { payload: c.payload } : {}),
        });
        assert.ok(res.statusCode < 500, `never a 5xx: ${res.statusCode} ${res.body}`);
        assert.equal(res.statusCode, c.status, res.body.slice(0, 500));
        const body = res.json() as { code: number; message: string; data?: unknown; meta?: unknown };
        assert.equal(body.code, c.code, res.body.slice(0, 500));
        assert.equal(typeof body.message, 'string');
        if (c.url.startsWith('/api/v1/etf/')) {
          assert.deepEqual(body.data, [], 'the query envelope, data empty');
          assert.equal(typeof body.meta, 'object');
        }
        await checkNothingStored();
      });
    }

    it('[body limit] a declared Content-Length over the limit is refused before the body is sent → 413 / 4130', async () => {
      const { raw } = await declaredTooLarge(
        port,
        `UP-API-KEY: ${INGEST_KEY}\r\nContent-Length: ${BODY_LIMIT * 100}\r\n`,
      );
      assert.match(raw, /^HTTP\/1\.1 413 /, raw);
      await checkNothingStored();
    });

    it('[body limit] a chunked body over the limit is cut off → 413 / 4130', async () => {
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const socket = net.connect({ host: '127.0.0.1', port });
        let raw = '';
        socket.on('data', (c: Buffer) => (raw += c.toString('utf8')));
        socket.on('close', () => resolve({ status: Number(raw.slice(9, 12)), body: raw }));
        socket.on('error', reject);
        socket.write(
          `POST ${INGEST} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
            `UP-API-KEY: ${INGEST_KEY}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
        );
        const chunk = 'x'.repeat(16_384);
        let sent = 0;
        const pump = (): void => {
          if (socket.destroyed || sent > BODY_LIMIT * 4) return void socket.end('0\r\n\r\n');
          sent += chunk.length;
          if (socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)) setImmediate(pump);
          else socket.once('drain', pump);
        };
        pump();
      });
      assert.equal(res.status, 413, res.body.slice(0, 300));
      assert.match(res.body, /"code":4130/);
      await checkNothingStored();
    });

    it('SQL in a filter value is data, not code: 200 with no rows, the table intact', async () => {
      const res = await get(h.app, `${KLINE}?code=${encodeURIComponent("510300' OR '1'='1")}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((res.json() as { meta: { total: number } }).meta.total, 0);
      const all = await get(h.app, `${KLINE}?code=510300`);
      assert.equal((all.json() as { meta: { total: number } }).meta.total, 1);
    });

    it('a limit over 1000 is clamped, not refused', async () => {
      const res = await get(h.app, `${KLINE}?limit=1000000000`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((res.json() as { meta: { limit: number } }).meta.limit, 1000);
    });

    it('NUL and lone surrogates in filter values never reach the database as errors', async () => {
      // Bytes that are not UTF-8, sent percent-encoded, are refused like raw ones (issue 24).
      for (const v of ['%00', '%ED%A0%80', '%C0%80', '%FF', '%ZZ', '%']) {
        const res = await get(h.app, `${KLINE}?code=${v}`);
        assert.equal(res.statusCode, 400, `${v}: ${res.statusCode} ${res.body}`);
        assert.equal((res.json() as { code: unknown }).code, 4001, 'the envelope');
      }
      assert.equal((await get(h.app, `${KLINE}?code=%F0%9F%98%80`)).statusCode, 200);
    });
  });
}
