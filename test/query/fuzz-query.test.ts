// Issue 6, bad input: property-based fuzzing of the query parameters (fast-check). Random
// endpoints, names and values — known names with hostile values, unknown names, raw query
// text — are never a 5xx and always answer in the query envelope. On every backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { backends, get, push, startApp, type Harness } from '../helpers/harness.js';
import { batch, days, etfBar } from '../helpers/batches.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { allowedParams } from '../../src/query/parse.js';
import { EXPORT_FORMATS } from '../../src/export/export-formats.js';

const RUNS = Number(process.env.MDS_FUZZ_RUNS ?? 200);
const ENDPOINTS = CATALOG.datasets.map((d) => d.endpoint);
const KNOWN_NAMES = [...new Set(CATALOG.datasets.flatMap((d) => allowedParams(d)))];
const HOSTILE = [
  '-1',
  '0',
  '1e9',
  '1.5',
  '9007199254740993',
  '',
  ' ',
  'asc',
  'desc',
  "' OR '1'='1",
  '1; DROP TABLE etf_daily; --',
  '2024-02-30',
  '2024-01-02',
  '0000-00-00',
  '%',
  '_',
  '\\',
  '\u0000',
  '\ud800',
  '__proto__',
  'constructor',
  'code,date,close',
  'csv',
  'ndjson',
  'x'.repeat(5000),
];

const value = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer({ min: -2_000_000, max: 2_000_000 }).map(String),
  fc.double().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
);
const name = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KNOWN_NAMES) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'sort[]', 'a.b', 'limit ', 'LIMIT') },
);
const params = fc.array(fc.tuple(name, value), { maxLength: 6 });
/** Query text as typed: percent signs, separators and brackets unencoded. */
const rawQuery = fc.string({
  unit: fc.constantFrom(...'abcdlimtofsrtc0123456789-=&%;[]+.,_ '.split('')),
  maxLength: 40,
});

interface Envelope {
  code: unknown;
  message: unknown;
  data: unknown;
  meta: { total: unknown; limit: unknown; offset: unknown; has_more: unknown } | null;
}

function checkAnswer(
  url: string,
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
) {
  assert.ok(res.statusCode < 500, `${url} → ${res.statusCode} ${res.body.slice(0, 300)}`);
  assert.ok([200, 304, 400].includes(res.statusCode), `${url} → ${res.statusCode}`);
  const type = String(res.headers['content-type'] ?? '');
  if (res.statusCode === 200 && !type.startsWith('application/json')) {
    // Not JSON: one of the export formats' media types (from their table, not a list here).
    const exports: string[] = Object.values(EXPORT_FORMATS).map((f) => f.mediaType);
    assert.ok(exports.includes(type.split(';')[0]?.trim() ?? ''), `${url}: ${type}: exports only`);
    return;
  }
  if (res.statusCode === 304) return;
  const env = JSON.parse(res.body) as Envelope;
  assert.equal(typeof env.code, 'number', url);
  assert.equal(typeof env.message, 'string', url);
  assert.ok(Array.isArray(env.data), url);
  assert.ok(env.meta && typeof env.meta === 'object', url);
  assert.equal(typeof env.meta.total, 'number', url);
  assert.equal(typeof env.meta.limit, 'number', url);
  assert.equal(typeof env.meta.offset, 'number', url);
  assert.equal(typeof env.meta.has_more, 'boolean', url);
  assert.equal(env.code === 0, res.statusCode === 200, `${url}: code agrees with status`);
}

for (const backend of await backends()) {
  describe(`fuzz: query parameters (${backend}, ${RUNS} runs per property)`, { timeout: 300_000 }, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend, { MDS_AUTH_FAILURES_PER_MINUTE: '100000' });
      const rows = days('2024-01-01', 30).flatMap((d) => [etfBar('510300', d), etfBar('510500', d)]);
      assert.equal((await push(h.app, batch('etf_daily', rows))).statusCode, 200);
    });
    after(async () => h.close());

    it('random names and values: never a 5xx, always the envelope', async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...ENDPOINTS), params, async (endpoint, ps) => {
          const qs = new URLSearchParams(ps).toString();
          const url = qs ? `${endpoint}?${qs}` : endpoint;
          checkAnswer(url, await get(h.app, url));
        }),
        { numRuns: RUNS },
      );
    });

    it('raw query text: never a 5xx, always the envelope', async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...ENDPOINTS), rawQuery, async (endpoint, q) => {
          const url = `${endpoint}?${q.replace(/ /g, '+')}`;
          checkAnswer(url, await get(h.app, url));
        }),
        { numRuns: RUNS },
      );
    });

    it('valid parameters on the kline endpoint: 200 and a consistent page', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            limit: fc.integer({ min: 1, max: 2000 }),
            offset: fc.integer({ min: 0, max: 100 }),
            order: fc.constantFrom('asc', 'desc'),
            sort: fc.constantFrom('date', 'close', 'code', 'volume'),
          }),
          async (p) => {
            const url = `/api/v1/etf/kline?${new URLSearchParams(Object.entries(p).map(([k, v]): [string, string] => [k, String(v)]))}`;
            const res = await get(h.app, url);
            assert.equal(res.statusCode, 200, res.body);
            const env = JSON.parse(res.body) as {
              data: unknown[];
              meta: { total: number; limit: number; has_more: boolean };
            };
            assert.equal(env.meta.total, 60);
            assert.equal(env.meta.limit, Math.min(p.limit, 1000));
            assert.equal(env.data.length, Math.max(0, Math.min(env.meta.limit, 60 - p.offset)));
            assert.equal(env.meta.has_more, p.offset + env.data.length < 60);
          },
        ),
        { numRuns: Math.min(RUNS, 100) },
      );
    });
  });
}
