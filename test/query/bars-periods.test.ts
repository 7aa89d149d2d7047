import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { createStore } from '../../src/storage/create-store.js';
import { batch, type Data } from '../helpers/batches.js';
import { computedStore } from '../helpers/computed-store.js';
import { backends, get, push, runSql, startApp, testConfig, type Harness } from '../helpers/harness.js';

/**
 * Weekly and monthly pages of one code over a date range read whole periods from the stored
 * period bars the batch transaction keeps (storage/periods.ts) and compute only the edge
 * periods from the daily rows. Their answers must be those of the same requests with every
 * period computed from the daily rows, byte for byte, on both backends, after every step of a
 * sequence: first bars, appends, corrections of older days, a second source, a full snapshot
 * deleting rows, a revert; and on a database upgraded from before the stored periods.
 *
 * Bars from 2023-11-27 to 2024-03-29 on weekdays, but for holidays: 2023-12-25 and 2024-01-01
 * (Mondays), Wednesday 2024-01-31 (January ends on a holiday), 2024-02-09 … 02-16 (a week with
 * one open day; February's week 05 … 11 spans a holiday). Prices and volumes with float noise, so
 * the sums depend on their order and on each database's own summation.
 */

const HOLIDAYS = new Set([
  '2023-12-25',
  '2024-01-01',
  '2024-01-31',
  '2024-02-09',
  '2024-02-12',
  '2024-02-13',
]);
HOLIDAYS.add('2024-02-14').add('2024-02-15').add('2024-02-16');

function calendarDays(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}
const ALL_DAYS = calendarDays('2023-11-20', '2024-04-07');
const OPEN = calendarDays('2023-11-27', '2024-03-29').filter(
  (d) => ![0, 6].includes(new Date(`${d}T00:00:00Z`).getUTCDay()) && !HOLIDAYS.has(d),
);

/** A deterministic generator (mulberry32): the same windows on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rnd = random(17);
/** A price like 9.420000000000002: not exact in binary. */
const price = (): number => Math.round((5 + rnd() * 10) * 1000) / 1000 + 0.1;

function bar(symbol: string, date: string, source = 'test', extra: Data = {}): Data {
  const close = price();
  const pre = price();
  return {
    symbol,
    date,
    open: price(),
    high: close + 1.1,
    low: close - 1.3,
    close,
    pre_close: pre,
    change: close - pre,
    pct_chg: ((close - pre) / pre) * 100,
    volume: Math.round(rnd() * 1e6) / 7,
    amount: rnd() * 1e7,
    turnover_rate: rnd() / 3,
    source,
    updated_at: `${date}T08:30:00Z`,
    ...extra,
  };
}

const CODES = ['X', 'Y', 'NONE'];
const FIELDS = [
  'date,close,pre_close,change,pct_chg',
  'period_start,bar_count,volume,amount',
  'code,source,date,high',
];

/** A random window: each side a random day (period boundaries among them), or none. */
function request(r: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const params = new URLSearchParams({ code: pick(CODES), interval: pick(['1w', '1M']) });
  const a = pick(ALL_DAYS);
  const b = pick(ALL_DAYS);
  const [from, to] = a <= b ? [a, b] : [b, a];
  if (r() < 0.85) params.set('date_from', from);
  if (r() < 0.85) params.set('date_to', to);
  if (r() < 0.5) params.set('sort', pick(['date', 'close', 'volume', 'bar_count']));
  if (r() < 0.5) params.set('order', pick(['asc', 'desc']));
  if (r() < 0.3) params.set('fields', pick(FIELDS));
  params.set('limit', String(1 + Math.floor(r() * 6)));
  if (r() < 0.15) params.set('format', 'csv');
  return `/api/v1/etf/kline?${params.toString()}`;
}

/** Windows on period boundaries and mid-period, the holiday week and month included. */
const FIXED = [
  'code=X&interval=1M&date_from=2024-01-01&date_to=2024-01-31',
  'code=X&interval=1M&date_from=2023-12-01&date_to=2024-02-29',
  'code=X&interval=1M&date_from=2023-12-02&date_to=2024-02-28',
  'code=X&interval=1M&date_from=2024-02-01&date_to=2024-02-01',
  'code=X&interval=1M&date_from=2024-01-15&date_to=2024-03-10',
  'code=X&interval=1w&date_from=2024-02-05&date_to=2024-02-18',
  'code=X&interval=1w&date_from=2024-02-12&date_to=2024-02-18',
  'code=X&interval=1w&date_from=2024-02-06&date_to=2024-02-17',
  'code=X&interval=1w&date_from=2023-12-25&date_to=2024-01-07',
  'code=Y&interval=1w&date_to=2024-01-14',
  'code=Y&interval=1M&date_from=2024-01-01',
  'code=X&interval=1M',
  'code=X&interval=1w&format=csv&limit=1000',
].map((p) => `/api/v1/etf/kline?${p}&limit=1000`);

for (const backend of await backends()) {
  describe(`stored period bars (${backend})`, () => {
    let h: Harness;
    let ref: FastifyInstance;

    /** Both apps answer each request (and every page after it by cursor) with the same bytes. */
    async function same(step: string, seed: number, n = 120): Promise<void> {
      const r = random(seed);
      const urls = [...FIXED, ...Array.from({ length: n }, () => request(r))];
      for (const first of urls) {
        let url: string | null = first;
        for (let page = 0; url && page < 40; page++) {
          const [a, b]: [LightMyRequestResponse, LightMyRequestResponse] = await Promise.all([
            get(h.app, url),
            get(ref, url),
          ]);
          assert.equal(a.statusCode, b.statusCode, `${step}: ${url}: ${a.body}`);
          assert.equal(a.body, b.body, `${step}: ${url}`);
          if (a.headers['content-type']?.toString().startsWith('text/csv')) break;
          const ja = a.json() as { data: Record<string, unknown>[]; meta: Record<string, unknown> };
          const jb = b.json() as typeof ja;
          assert.equal(ja.meta.total, jb.meta.total, `${step}: ${url}: total`);
          ja.data.forEach((row, i) => {
            for (const [k, v] of Object.entries(row)) {
              assert.ok(Object.is(v, jb.data[i]?.[k]), `${step}: ${url}: row ${i} ${k}: ${String(v)}`);
            }
          });
          const next = ja.meta.next_cursor;
          url = typeof next === 'string' ? `${first}&cursor=${encodeURIComponent(next)}` : null;
        }
      }
    }

    async function pushOk(body: Record<string, unknown>): Promise<void> {
      const res = await push(h.app, body);
      assert.equal(res.statusCode, 200, res.body);
    }

    before(async () => {
      h = await startApp(backend);
      const config = testConfig(h.databaseUrl);
      ref = await buildApp({ config, store: computedStore(h.store) });
      await ref.ready();
    });
    after(async () => {
      await ref?.close();
      await h?.close();
    });

    test('the stored periods answer as the daily rows after every kind of batch', async () => {
      const early = OPEN.filter((d) => d < '2024-03-01');
      await pushOk(
        batch('etf_daily', [
          ...early.map((d) => bar('X', d)),
          ...early.filter((_, i) => i % 3 !== 1).map((d) => bar('Y', d)),
        ]),
      );
      await same('first bars', 1);

      // Appends: March, in two batches (the second one mid-week).
      await pushOk(
        batch(
          'etf_daily',
          OPEN.filter((d) => d >= '2024-03-01' && d < '2024-03-20').map((d) => bar('X', d)),
        ),
      );
      await pushOk(
        batch(
          'etf_daily',
          OPEN.filter((d) => d >= '2024-03-20').flatMap((d) => [bar('X', d), bar('Y', d)]),
        ),
      );
      await same('appends', 2);

      // Corrections of older days, one of them a month's last bar and one a week's first.
      await pushOk(
        batch(
          'etf_daily',
          ['2023-12-04', '2024-01-30', '2024-02-08', '2024-02-19'].map((d) => bar('X', d)),
        ),
      );
      await same('corrections', 3);

      // A second source of X for part of the range: its own periods.
      await pushOk(
        batch(
          'etf_daily',
          OPEN.filter((d) => d >= '2024-01-10' && d <= '2024-02-20').map((d) => bar('X', d, 'other')),
        ),
      );
      await same('a second source', 4);

      // A full snapshot of 2024-02-08 from "test" holding only Y's bar: X's bar of the day goes
      // (the last open day of its week), and one holding nothing of 2024-01-02.
      await pushOk(
        batch('etf_daily', [bar('Y', '2024-02-08')], {
          snapshotType: 'full_snapshot',
          businessDate: '2024-02-08',
          source: 'test',
        }),
      );
      await same('a full snapshot', 5);

      // A revert puts back what the snapshot deleted.
      const [snapshot] = await h.store.batches.listBatches({ dataset: 'etf_daily', limit: 1 });
      assert.equal(snapshot?.pruned, 1);
      const reverted = await h.store.revisions.revertBatch(snapshot.batch_id, () => new Date().toISOString());
      assert.equal(reverted.kind, 'reverted');
      await same('a revert', 6);
    });

    /** A store migrated anew answers as the computed path. */
    async function migratedAnswersSame(step: string): Promise<void> {
      const store = await createStore(h.databaseUrl, CATALOG);
      try {
        await store.migrate();
        const config = testConfig(h.databaseUrl);
        const upgraded = await buildApp({ config, store });
        try {
          const r = random(7);
          for (const url of [...FIXED, ...Array.from({ length: 60 }, () => request(r))]) {
            const [a, b] = await Promise.all([get(upgraded, url), get(ref, url)]);
            assert.equal(a.body, b.body, `${step}: ${url}`);
          }
        } finally {
          await upgraded.close();
        }
      } finally {
        await store.close();
      }
    }

    test('a database from before the stored periods gets them built by migrate', async () => {
      await runSql(h.databaseUrl, [
        'DROP TABLE mds_periods_etf_daily',
        'DROP TABLE mds_period_state',
        'DELETE FROM mds_migrations WHERE version = 6',
      ]);
      await migratedAnswersSame('upgraded');
    });

    test('stored periods built under another shape are built again by migrate', async () => {
      // Stale rows under an older shape: migrate recreates the table and computes them again.
      await runSql(h.databaseUrl, [
        "UPDATE mds_periods_etf_daily SET close = 0, bar_count = 99 WHERE period >= '2024-02'",
        "UPDATE mds_period_state SET shape = 'an older release'",
      ]);
      await migratedAnswersSame('rebuilt');
    });
  });
}
