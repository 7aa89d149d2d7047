import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { CATALOG } from '../../src/catalog/catalog.js';
import { IngestService } from '../../src/ingest/ingest-service.js';
import { generateDemo } from '../../src/demo/generators.js';
import { seedDemo, type Sender } from '../../src/demo/seed.js';
import { backends, freshDatabaseUrl, get, json, startApp, type Harness } from '../helpers/harness.js';
import { CLI_MAIN } from '../helpers/built.js';

/** `mds seed --demo` fills every catalog endpoint; a second run changes nothing. */

const run = promisify(execFile);
const DEMO = { end: '2025-06-30', days: 60, seed: 7 };

test('demo generators: every catalog dataset, plausible OHLC, deterministic', () => {
  const a = generateDemo(DEMO);
  assert.deepEqual([...a.keys()].sort(), CATALOG.datasets.map((d) => d.name).sort());
  for (const [name, rows] of a) assert.ok(rows.length > 0, `${name} has rows`);
  for (const r of a.get('etf_daily') ?? []) {
    const [o, h, l, c] = [r.open, r.high, r.low, r.close] as number[];
    assert.ok(
      (h as number) >= Math.max(o as number, c as number) &&
        (l as number) <= Math.min(o as number, c as number),
    );
    assert.ok((l as number) > 0);
  }
  const weights = new Map<string, number>();
  for (const r of a.get('etf_holdings') ?? []) {
    const k = `${String(r.code)}|${String(r.report_period)}`;
    weights.set(k, (weights.get(k) ?? 0) + (r.weight_pct as number));
  }
  for (const [k, w] of weights) assert.ok(w > 50 && w < 70, `top-10 weights of ${k} sum to ${w}`);
  assert.deepEqual(generateDemo(DEMO).get('stock_daily'), a.get('stock_daily'), 'same seed, same data');
  // No macro figure released after the demo's last day (it would be read before it exists):
  // on 2025-06-05 May's figures (released on the 10th) are not out yet, April's are.
  const macro = generateDemo({ ...DEMO, end: '2025-06-05' }).get('macro_indicator') ?? [];
  const late = macro.filter((r) => String(r.release_date) > '2025-06-05');
  assert.deepEqual(late, []);
  assert.ok(macro.some((r) => r.period === '2025-04' && r.release_date === '2025-05-10'));
  assert.ok(!macro.some((r) => r.period === '2025-05'));
});

for (const backend of await backends()) {
  describe(`mds seed --demo (${backend})`, () => {
    let h: Harness;
    let drop: () => Promise<void>;
    let url: string;

    before(async () => {
      const db = await freshDatabaseUrl(backend);
      url = db.url;
      drop = db.drop;
      const { stdout } = await run(
        process.execPath,
        [
          CLI_MAIN,
          'seed',
          '--demo',
          '--database-url',
          url,
          '--end',
          DEMO.end,
          '--days',
          String(DEMO.days),
          '--seed',
          String(DEMO.seed),
        ],
        { cwd: process.cwd(), env: { ...process.env, LOG_LEVEL: 'silent', PORT: '18765' } },
      );
      assert.match(stdout, new RegExp(`seeded \\d+ demo rows into ${CATALOG.datasets.length} datasets`));
      assert.doesNotMatch(stdout, /rejected!/);
      // The hint reads the configured port, not a hard-coded one.
      assert.match(stdout, /next: npm start, then curl .*'http:\/\/127\.0\.0\.1:18765\/api\/v1\/etf\/kline/);
      h = await startApp(backend, {}, { databaseUrl: url });
    });
    after(async () => {
      await h?.close();
      await drop?.();
    });

    test('every catalog endpoint returns rows', async () => {
      for (const d of CATALOG.datasets) {
        const res = await get(h.app, `${d.endpoint}?limit=5`);
        assert.equal(res.statusCode, 200, `${d.endpoint}: ${res.body}`);
        const body = json(res) as { data: unknown[]; meta: { total: number } };
        assert.ok(body.data.length >= 1, `${d.endpoint} returns rows`);
        assert.ok(body.meta.total >= body.data.length);
      }
      const kline = json(await get(h.app, '/api/v1/etf/kline?code=510300&limit=1000')) as { data: unknown[] };
      assert.equal(kline.data.length, DEMO.days);
    });

    test('seeding again is all duplicates: nothing written', async () => {
      const ingest = new IngestService(CATALOG, h.store, { maxRecords: 100_000 });
      const send: Sender = async (b) => {
        const o = await ingest.ingest(b);
        return {
          status: o.kind === 'duplicate' ? 'duplicate' : o.record.status,
          accepted: 0,
          duplicate: 0,
          rejected: 0,
          errors: [],
        };
      };
      const results = await seedDemo(CATALOG, send, DEMO);
      for (const r of results) assert.equal(r.status, 'duplicate', r.dataset);
    });
  });
}
