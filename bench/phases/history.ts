import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BATCH_SIZE, INGEST_KEY, QUERY_KEY, QUICK, log, startService } from '../context.js';
import { batchBody, code, codeRows, rng, tradingDays, type EtfRow, type IngestBatch } from '../data.js';
import { pushOne } from '../ingest.js';
import type { Row } from '../table.js';

/**
 * Point in time (issue 16), against one service process (SQLite, or DATABASE_URL's PostgreSQL
 * through `url`):
 * - a batch updating every row of 10,000 against a batch of 10,000 new rows (goal ≤ 1.5×);
 * - re-pushing unchanged data adds no revision (storage grows with changes, not pushes);
 * - random `as_of` kline pages against current pages of the same codes, over a table with
 *   4 revisions per key (goal ≥ 0.5×).
 * Current queries read the same table with the same statements as before history existed
 * (docs/point-in-time.md); their speed is the query phase's.
 * BENCH_QUICK=1: 100 codes × 100 days and 3 rounds (a smoke run).
 */
const SIZES = QUICK
  ? { codes: 100, days: 100, pages: 300, rounds: 3 }
  : { codes: 1000, days: 250, pages: 3000, rounds: 5 };

/** The same rows with every price moved, so each record is a real change. */
function restated(rows: readonly EtfRow[], k: number): EtfRow[] {
  return rows.map((r) => ({
    ...r,
    close: Math.round(Number(r.close) * (1 + 0.001 * k) * 100) / 100 + 0.01 * k,
  }));
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(url, { headers: { 'q-api-key': QUERY_KEY } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** ms per page, sequential (one connection: the ratio, not the throughput, is the figure). */
async function pageMs(urls: readonly string[]): Promise<number> {
  for (const u of urls.slice(0, 20)) await getJson(u); // warm-up
  const t = performance.now();
  for (const u of urls) {
    const r = await getJson(u);
    if (r.status !== 200) throw new Error(`history: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  }
  return (performance.now() - t) / urls.length;
}

export async function historyPhase(rows: Row[], url: string | null = null, label = 'SQLite'): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-bench-history-'));
  const svc = await startService(url ?? path.join(dir, 'history.db'), 1);
  try {
    // 1. Ingest: new rows against updates of the same number of rows, alternating rounds.
    const days = tradingDays(BATCH_SIZE / 100);
    const newMs: number[] = [];
    const updMs: number[] = [];
    for (let round = 0; round < SIZES.rounds; round++) {
      const base: EtfRow[] = [];
      for (let i = 0; i < 100; i++)
        base.push(...codeRows(code(round * 100 + i, '8'), days, 31 * (i + 1) + round));
      const fresh: IngestBatch = { body: batchBody(`hist-new-${round}-${process.pid}`, base), rows: base };
      const moved = restated(base, 1);
      const update: IngestBatch = { body: batchBody(`hist-upd-${round}-${process.pid}`, moved), rows: moved };
      newMs.push(BATCH_SIZE / (await pushOne(svc.url, INGEST_KEY, fresh)));
      updMs.push(BATCH_SIZE / (await pushOne(svc.url, INGEST_KEY, update)));
    }
    const newRate = BATCH_SIZE / median(newMs);
    const updRate = BATCH_SIZE / median(updMs);
    const phase = `history: ingest 10k-record batches (${label})`;
    log(`${phase}: new ${newRate.toFixed(0)} rec/s, updates ${updRate.toFixed(0)} rec/s`);
    rows.push({
      phase,
      server: 'service: 10,000 new rows (each its own open revision)',
      rate: newRate,
      unit: 'rec/s',
    });
    rows.push({
      phase,
      server: 'service: 10,000 updated rows (each keeps the version it replaced)',
      rate: updRate,
      unit: 'rec/s',
      ratio: newRate / updRate,
      vs: 'time ÷ new rows',
      goal: '≤ 1.5× the time of new rows',
      met: newRate / updRate <= 1.5,
    });

    // 2. Re-pushing unchanged data: duplicates, no revision.
    const trailTotal = async (): Promise<number> =>
      Number(
        ((await getJson(`${svc.url}/api/v1/revisions/etf_daily?limit=1`)).body.meta as { total: number })
          .total,
      );
    const before = await trailTotal();
    const again: EtfRow[] = [];
    for (let i = 0; i < 100; i++) again.push(...codeRows(code(i, '8'), days, 31 * (i + 1)));
    const repeat = batchBody(`hist-repeat-${process.pid}`, restated(again, 1));
    const r = await fetch(`${svc.url}/api/v1/upstream/ingest/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'UP-API-KEY': INGEST_KEY },
      body: repeat,
    });
    const dup = (await r.json()) as { duplicate?: number };
    const added = (await trailTotal()) - before;
    rows.push({
      phase: `history: storage (${label})`,
      server: `re-push of ${BATCH_SIZE} unchanged rows: ${dup.duplicate ?? '?'} duplicates, ${added} revisions added`,
      rate: null,
      goal: 'no revision for unchanged data',
      met: added === 0,
    });

    // 3. A table with 4 revisions per key (an insert and 3 restatements), then random pages.
    const qDays = tradingDays(SIZES.days);
    const perBatch = Math.max(1, Math.floor(BATCH_SIZE / SIZES.days));
    const instants: string[] = [];
    for (let k = 0; k < 4; k++) {
      for (let c0 = 0; c0 < SIZES.codes; c0 += perBatch) {
        const part: EtfRow[] = [];
        for (let c = c0; c < Math.min(SIZES.codes, c0 + perBatch); c++) {
          const base = codeRows(code(c, '6'), qDays, 97 * (c + 1));
          part.push(...(k === 0 ? base : restated(base, k)));
        }
        await pushOne(svc.url, INGEST_KEY, {
          body: batchBody(`hist-q-${k}-${c0}-${process.pid}`, part),
          rows: part,
        });
      }
      instants.push(new Date().toISOString());
      await new Promise((res) => setTimeout(res, 5));
    }
    const rand = rng(42);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
    const current: string[] = [];
    const asOf: string[] = [];
    for (let i = 0; i < SIZES.pages; i++) {
      const c = code(Math.floor(rand() * SIZES.codes), '6');
      const offset = Math.floor(rand() * Math.max(1, SIZES.days - 100));
      const q = `${svc.url}/api/v1/etf/kline?code=${c}&limit=100&offset=${offset}`;
      current.push(q);
      // An instant between the first batch and the last (each key: 1 to 4 revisions back).
      asOf.push(`${q}&as_of=${encodeURIComponent(pick(instants.slice(0, 3)))}`);
    }
    // Alternating rounds, so both see the same machine.
    const cur: number[] = [];
    const past: number[] = [];
    for (let round = 0; round < 2; round++) {
      cur.push(await pageMs(current));
      past.push(await pageMs(asOf));
    }
    const curMs = Math.min(...cur);
    const pastMs = Math.min(...past);
    const qphase = `history: random kline pages, 4 revisions per key (${label})`;
    log(`${qphase}: current ${curMs.toFixed(2)} ms, as_of ${pastMs.toFixed(2)} ms`);
    rows.push({
      phase: qphase,
      server: 'current pages (one connection)',
      rate: 1000 / curMs,
      unit: 'req/s',
      p50: curMs,
    });
    rows.push({
      phase: qphase,
      server: 'as_of pages, random instant (one connection)',
      rate: 1000 / pastMs,
      unit: 'req/s',
      p50: pastMs,
      ratio: curMs / pastMs,
      vs: 'current',
      goal: '≥ 0.5× current',
      met: curMs / pastMs >= 0.5,
    });
  } finally {
    await svc.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
