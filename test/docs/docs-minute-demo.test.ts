// docs/minute-bars.md, "On the demo data": every curl line run as written (the address and the key
// replaced) against a listening service seeded with the demo data, and what its comment says
// checked on the answer, so that the walk-through cannot drift from what the demo gives.
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { QUERY_KEY, type Harness } from '../helpers/harness.js';
import { listeningDemo } from '../helpers/demo-seed.js';
import { ROOT } from '../helpers/repo-root.js';

const DOC = readFileSync(path.join(ROOT, 'docs', 'minute-bars.md'), 'utf8');
const BLOCK = /```sh minute-demo\n([\s\S]*?)```/.exec(DOC)?.[1] ?? '';
const URLS = [...BLOCK.matchAll(/^curl -s '(localhost:8080\/[^']+)' -H "\$K"/gm)].map((m) => m[1] as string);

type Row = Record<string, unknown>;
interface Page {
  code: number;
  data: Row[];
  meta: Record<string, unknown>;
}

/** The HH:MM of a bar's end minute (`2026-11-27T10:30:00+08:00`). */
const hhmm = (row: Row): string => String(row.time).slice(11, 16);
const OHLCVA = ['date', 'open', 'high', 'low', 'close', 'volume', 'amount'] as const;

describe("docs/minute-bars.md's demo walk-through, on the demo data", () => {
  let h: Harness;
  let base: string;
  const get = async (url: string): Promise<Response> =>
    fetch(`http://${url.replace('localhost:8080', base)}`, { headers: { 'Q-API-KEY': QUERY_KEY } });
  const page = async (url: string): Promise<Page> => {
    const res = await get(url);
    assert.equal(res.status, 200, url);
    return (await res.json()) as Page;
  };

  before(async () => {
    ({ h, base } = await listeningDemo());
    base = base.replace('http://', '');
  });
  after(async () => h?.close());

  it('the doc holds the five lines, in this order', () => {
    assert.deepEqual(
      URLS.map((u) => new URL(`http://${u}`).pathname),
      [
        '/api/v1/etf/minute',
        '/api/v1/stock/minute',
        '/api/v1/stock/minute',
        '/api/v1/quality/stock_minute',
        '/api/v1/etf/minute',
      ],
    );
  });

  it('30m: the last day, its bars labelled by their end, none across the lunch break', async () => {
    const body = await page(URLS[0] as string);
    assert.deepEqual(body.data.map(hhmm), [
      '15:00',
      '14:30',
      '14:00',
      '13:30',
      '11:30',
      '11:00',
      '10:30',
      '10:00',
    ]);
    assert.equal(new Set(body.data.map((r) => String(r.time).slice(0, 10))).size, 1);
  });

  it('60m adjusted: four bars a day at 10:30, 11:30, 14:00, 15:00, with meta.adjust', async () => {
    const body = await page(URLS[1] as string);
    assert.equal(body.data.length, 15 * 4);
    assert.deepEqual(body.data.slice(0, 4).map(hhmm), ['15:00', '14:00', '11:30', '10:30']);
    assert.deepEqual(new Set(body.data.map(hhmm)), new Set(['10:30', '11:30', '14:00', '15:00']));
    assert.equal((body.meta.adjust as { method: string }).method, 'qfq');
  });

  it('1d: fifteen bars, each equal to the daily dataset of the same code and date', async () => {
    const body = await page(URLS[2] as string);
    assert.equal(body.data.length, 15);
    const daily = await page(
      `localhost:8080/api/v1/stock/daily?code=600519&date_from=${String(body.data.at(-1)?.date)}`,
    );
    const pick = (r: Row): Row => Object.fromEntries(OHLCVA.map((k) => [k, r[k]]));
    assert.deepEqual(body.data.map(pick), daily.data.map(pick));
  });

  it('the quality report: fifteen days compared with stock_daily, none mismatched', async () => {
    const body = await page(URLS[3] as string);
    assert.equal(body.meta.daily, 'stock_daily');
    assert.equal(body.data.length, 1);
    const report = body.data[0] as Row;
    assert.equal(report.days, 15);
    assert.equal(report.compared_days, 15);
    assert.equal(report.mismatched_days, 0);
    assert.equal(report.bars, 15 * 240);
  });

  it('5m as CSV: a header and 48 bars a day', async () => {
    const res = await get(URLS[4] as string);
    assert.equal(res.status, 200);
    const lines = (await res.text()).trim().split('\n');
    assert.match(lines[0] ?? '', /^code,date,time,open,high,low,close,volume,amount,/);
    assert.equal(lines.length, 1 + 15 * 48);
    assert.match(BLOCK, /> 510300-5m\.csv\s+# 48 bars a day, 720 lines/);
  });
});
