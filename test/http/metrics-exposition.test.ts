import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemoryLimiter } from '../../src/access/memory-limiter.js';
import { backends, get, push, startApp, type Harness } from '../helpers/harness.js';
import { batch, etfBar, record, batchOfRecords } from '../helpers/batches.js';

/** GET /metrics: Prometheus text exposition of requests, latency, batches, records and refusals. */

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A strict reader of the text format (0.0.4): every line is a comment or a valid sample. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) continue;
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      assert.ok(name && ['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(type ?? ''), line);
      types.set(name, type as string);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
    let lm: RegExpExecArray | null;
    let consumed = 0;
    while ((lm = re.exec(body)) !== null) {
      labels[lm[1] as string] = (lm[2] as string).replace(/\\(.)/g, '$1');
      consumed = re.lastIndex;
    }
    assert.equal(consumed, body.length, `bad labels in ${line}`);
    // Prometheus reads values with Go's ParseFloat: NaN and Inf in any case.
    const raw = (m[3] as string).toLowerCase();
    const value = raw === '+inf' || raw === 'inf' ? Infinity : raw === '-inf' ? -Infinity : Number(raw);
    assert.ok(!Number.isNaN(value) || raw === 'nan', line);
    const name = m[1] as string;
    const family = name.replace(/_(bucket|sum|count)$/, '');
    assert.ok(types.has(name) || types.has(family), `sample ${name} without # TYPE`);
    samples.push({ name, labels, value });
  }
  return samples;
}

function value(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    ?.value;
}

for (const backend of await backends()) {
  describe(`GET /metrics (${backend})`, () => {
    let h: Harness;
    before(async () => {
      // A fixed clock for the limiter: a minute turning over between the requests below would
      // let a refused one through.
      const at = Date.UTC(2030, 0, 15, 12, 0, 30);
      h = await startApp(
        backend,
        { MDS_STATIC_RATE_PER_MINUTE: '3' },
        { limiter: new MemoryLimiter({ now: () => at }) },
      );
    });
    after(async () => h?.close());

    test('exposes requests, latency, batches, records and rate-limit refusals', async () => {
      assert.equal(
        (
          await push(
            h.app,
            batch('etf_daily', [etfBar('510300', '2024-01-02'), etfBar('510300', '2024-01-03')]),
          )
        ).statusCode,
        200,
      );
      const partial = await push(
        h.app,
        batchOfRecords('etf_daily', [
          record('etf_daily', etfBar('510500', '2024-01-02')),
          record('etf_daily', etfBar('510500', '2024-01-03', { close: 'x' })),
        ]),
      );
      assert.equal(partial.statusCode, 207);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await get(h.app, '/api/v1/etf/kline?limit=1')).statusCode);
      assert.deepEqual(statuses, [200, 200, 200, 403, 403]);

      const res = await h.app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      const s = parseExposition(res.body);

      assert.equal(value(s, 'mds_ingest_batches_total', { dataset: 'etf_daily', status: 'accepted' }), 1);
      assert.equal(value(s, 'mds_ingest_batches_total', { dataset: 'etf_daily', status: 'partial' }), 1);
      assert.equal(value(s, 'mds_ingest_records_total', { dataset: 'etf_daily', outcome: 'accepted' }), 3);
      assert.equal(value(s, 'mds_ingest_records_total', { dataset: 'etf_daily', outcome: 'rejected' }), 1);
      const kline = { route: '/api/v1/etf/kline', method: 'GET' };
      assert.equal(value(s, 'mds_http_requests_total', { ...kline, status: '200' }), 3);
      assert.equal(value(s, 'mds_http_requests_total', { ...kline, status: '403' }), 2);
      assert.equal(
        value(s, 'mds_http_requests_total', { route: '/api/v1/upstream/ingest/batches', status: '207' }),
        1,
      );
      assert.equal(value(s, 'mds_rate_limit_refusals_total', { code: '4030' }), 2);
      assert.equal(value(s, 'mds_http_request_duration_seconds_count', kline), 5);
      assert.equal(value(s, 'mds_http_request_duration_seconds_bucket', { ...kline, le: '+Inf' }), 5);
      assert.ok(value(s, 'mds_process_resident_memory_bytes', {}) !== undefined, 'process metrics');
      // Where the two processed batches' time went, step by step; a step they skipped is absent.
      for (const step of ['parse', 'checksum', 'validation', 'rows', 'quality', 'periods', 'commit']) {
        assert.equal(value(s, 'mds_batch_step_seconds_count', { step }), 2, step);
        assert.ok((value(s, 'mds_batch_step_seconds_sum', { step }) ?? -1) >= 0, step);
      }
      assert.equal(value(s, 'mds_batch_step_seconds_count', { step: 'prune' }) ?? 0, 0);
    });

    test('unknown paths share one route label (no unbounded cardinality)', async () => {
      await h.app.inject({ method: 'GET', url: '/no/such/path/1' });
      await h.app.inject({ method: 'GET', url: '/no/such/path/2' });
      const s = parseExposition((await h.app.inject({ method: 'GET', url: '/metrics' })).body);
      assert.equal(value(s, 'mds_http_requests_total', { route: 'unmatched', status: '404' }), 2);
      assert.ok(!s.some((x) => x.labels.route?.startsWith('/no/such')));
    });
  });
}
