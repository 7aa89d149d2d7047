// docs/universes.md, "On the demo data": every curl line run as written (the address and the key
// replaced) against a listening service seeded with the demo data up to the doc's end day, and
// what its comment says checked on the answer, so that the walk-through cannot drift.
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { QUERY_KEY, startApp, type Harness } from '../helpers/harness.js';
import { seedDemoStore } from '../helpers/demo-seed.js';
import { defaultDemoOptions } from '../../src/demo/seed.js';
import { ROOT } from '../helpers/repo-root.js';

const DOC = readFileSync(path.join(ROOT, 'docs', 'universes.md'), 'utf8');
const BLOCK = /```sh universes-demo\n([\s\S]*?)```/.exec(DOC)?.[1] ?? '';
const URLS = [...BLOCK.matchAll(/^curl -s '(localhost:8080\/[^']+)' -H "\$K"/gm)].map((m) => m[1] as string);
/** The seed command the doc gives, with its end day. */
const END = /npx mds seed --demo --end (\d{4}-\d{2}-\d{2})/.exec(DOC)?.[1] ?? '';

type Row = Record<string, unknown>;
interface Page {
  data: Row[];
  meta: Row & { warnings: string[]; total: number };
}

describe("docs/universes.md's demo walk-through, on the demo data", () => {
  let h: Harness;
  let base: string;
  const answer = (i: number): Promise<Response> =>
    fetch(`http://${(URLS[i] as string).replace('localhost:8080', base)}`, {
      headers: { 'Q-API-KEY': QUERY_KEY },
    });
  const page = async (i: number): Promise<Page> => {
    const res = await answer(i);
    assert.equal(res.status, 200, URLS[i]);
    return (await res.json()) as Page;
  };
  const codes = (p: Page): string[] => p.data.map((r) => String(r.code));
  const row = (p: Page, code: string): Row | undefined => p.data.find((r) => r.code === code);

  before(async () => {
    assert.equal(END, '2026-12-04', 'the doc names its seed command');
    h = await startApp('sqlite');
    await seedDemoStore(h.store, defaultDemoOptions({ end: END }));
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  });
  after(async () => h?.close());

  it('the doc holds the sixteen lines', () => {
    assert.equal(URLS.length, 16);
  });

  it('a past day: the codes delisted since are there, the code listed later is not', async () => {
    const p = await page(0);
    assert.equal(p.meta.total, 13);
    const st = row(p, '600087');
    assert.deepEqual([st?.name, st?.is_st, st?.delist_date], ['*ST长油', true, '2026-06-08']);
    assert.ok(row(p, '000018'));
    assert.equal(row(p, '688981'), undefined);
  });

  it('the last day: the delisted codes gone, the new listing there', async () => {
    const p = await page(1);
    assert.equal(p.meta.total, 12);
    assert.equal(row(p, '600087'), undefined);
    assert.equal(row(p, '000018'), undefined);
    assert.ok(row(p, '688981'));
  });

  it('list_status=D: the day’s codes delisted since', async () => {
    assert.deepEqual(codes(await page(2)), ['000018', '600087']);
  });

  it('include_st=false leaves out the two ST codes of the day', async () => {
    const p = await page(3);
    assert.equal(p.meta.total, 12);
    assert.equal(row(p, '600610'), undefined);
    assert.equal(row(p, '600087'), undefined);
  });

  it('CSI 300 before its exit, after it, and after the re-entry', async () => {
    const early = await page(4);
    assert.equal(early.meta.total, 10);
    assert.ok(row(early, '002594'));
    assert.equal(row(early, '600087'), undefined);
    assert.ok(early.data.every((r) => r.weight === null));
    assert.ok(early.meta.warnings.some((w) => w.includes('weights are null')));
    const out = await page(5);
    assert.equal(out.meta.total, 9);
    assert.equal(row(out, '002594'), undefined);
    const back = await page(6);
    assert.equal(back.meta.total, 10);
    assert.equal(back.meta.snapshot_date, '2026-12-04');
    assert.equal(row(back, '002594')?.in_date, '2026-08-14');
    assert.ok(back.data.every((r) => typeof r.weight === 'number'));
  });

  it('an index with only snapshots, and one with neither', async () => {
    const snap = await page(7);
    assert.deepEqual(
      [snap.meta.membership, snap.meta.snapshot_date, snap.meta.total],
      ['snapshots', '2026-11-06', 10],
    );
    const none = await page(8);
    assert.equal(none.meta.membership, 'none');
    assert.deepEqual(none.data, []);
    assert.equal(none.meta.warnings.length, 1);
  });

  it('the rename in stock_names', async () => {
    const p = await page(9);
    assert.deepEqual(
      p.data.map((r) => [r.name, r.start_date, r.end_date]),
      [
        ['隆基绿能', '2026-05-04', null],
        ['隆基股份', '2012-04-11', '2026-04-30'],
      ],
    );
  });

  it('universe= on bars: the exit and the re-entry, a day of members adjusted, an index without intervals', async () => {
    const dates = (await page(10)).data.map((r) => String(r.date));
    assert.ok(dates.includes('2026-04-14') && dates.includes('2026-08-14'));
    assert.ok(!dates.some((d) => d > '2026-04-14' && d < '2026-08-14'));
    const day = await page(11);
    assert.equal(day.meta.total, 10);
    assert.ok(day.data.some((r) => r.code === '002594'));
    assert.ok(day.meta.adjust);
    const bad = await answer(12);
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as Row).code, 4001);
  });

  it('latest_on: the last bars with their staleness, max_stale_days, and the members of a day', async () => {
    const last = await page(13);
    assert.equal(last.meta.total, 14);
    const suspended = row(last, '600610');
    assert.deepEqual([suspended?.date, suspended?.stale_days], ['2026-11-26', 6]);
    assert.equal(row(last, '600087')?.date, '2026-06-05');
    assert.equal(row(last, '000018')?.date, '2026-08-13');
    assert.deepEqual(Object.keys(last.data[0] as Row), ['code', 'date', 'close', 'stale_days']);
    const fresh = await page(14);
    assert.equal(fresh.meta.total, 11);
    assert.equal((fresh.meta.latest_on as Row).left_out, 3);
    const members = await page(15);
    assert.equal(members.meta.total, 10);
    assert.ok(members.data.every((r) => String(r.date) <= '2026-03-02' && typeof r.stale_days === 'number'));
    assert.ok(row(members, '002594'));
    assert.ok(members.meta.adjust);
  });
});
