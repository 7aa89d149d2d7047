// Exports under steady ingest, from outside: the built server as its own process on every backend,
// a client that reads a 50,000-row export slowly (seconds) while another pushes 10 records every
// 250 ms, into another partition of the dataset and into the exported rows' own. Every export ends
// whole: an `as_of` export with exactly its instant's rows, a current one with each row once.
// Before, any batch into the dataset cut every running export of it, `as_of` ones too.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { QUERY_KEY, backends } from '../helpers/harness.js';
import { batch, days, etfBar, uniqueId } from '../helpers/batches.js';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { serverOnFreshDatabase, sleep, type ServerProcess } from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';

const ROWS = 50_000;
const DATES = days('2030-01-01', 400);

/** A GET read slowly (a pause after every piece): whether it ended whole, and its body. */
function slowGet(port: number, path: string): Promise<{ status: number; complete: boolean; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port, path, headers: { 'q-api-key': QUERY_KEY }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          res.pause();
          setTimeout(() => res.resume(), 25);
        });
        const done = (complete: boolean) => () =>
          resolve({ status: res.statusCode ?? 0, complete, body: Buffer.concat(chunks).toString('utf8') });
        res.once('end', done(true));
        res.once('aborted', done(false));
        res.once('error', done(false));
      },
    );
    req.on('error', reject);
  });
}

/** Pushes `records` bars every `everyMs` until stopped; resolves with the batches answered 200. */
function steadyIngest(
  port: number,
  source: string,
  code: (i: number) => string,
): { stop(): Promise<number> } {
  let running = true;
  let n = 0;
  const loop = (async () => {
    let ok = 0;
    while (running) {
      const rows = Array.from({ length: 10 }, (_, i) =>
        etfBar(code(n), DATES[(n * 10 + i) % DATES.length] as string, { source, close: 5 + (n % 7) }),
      );
      n++;
      const res = await pushBatch(port, JSON.stringify(batch('etf_daily', rows, { source })));
      assert.equal(res.status, 200, res.body.slice(0, 300));
      ok++;
      await sleep(250);
    }
    return ok;
  })();
  return {
    stop: async () => {
      running = false;
      return loop;
    },
  };
}

/** Each CSV row's key (code, date, source), from the header's columns. */
function keys(csv: string): string[] {
  const [header = '', ...lines] = csv.trim().split('\n');
  const at = ['code', 'date', 'source'].map((f) => header.split(',').indexOf(f));
  assert.ok(!at.includes(-1), header);
  return lines.map((l) => {
    const cells = l.split(',');
    return at.map((i) => cells[i]).join(',');
  });
}

for (const backend of await backends()) {
  describe(`exports under steady ingest, the built server (${backend})`, { timeout: 600_000 }, () => {
    const fx = serverOnFreshDatabase(backend);
    let server: ServerProcess;
    let asOf: string;
    before(async () => {
      server = await fx.start();
      const seed = await pushBatch(server.port, bigEtfBatch(ROWS, 'big', uniqueId('big')).body);
      assert.equal(seed.status, 200, seed.body.slice(0, 300));
      await sleep(20);
      asOf = new Date().toISOString();
    });
    after(() => fx.stop());

    it('exports of one partition, current and as_of, end whole while another partition takes a batch every 250 ms', async () => {
      const ingest = steadyIngest(server.port, 'other', (i) => String(700000 + (i % 50)));
      try {
        const [current, fixed] = await Promise.all([
          slowGet(server.port, '/api/v1/etf/kline?source=big&format=csv'),
          slowGet(server.port, `/api/v1/etf/kline?source=big&format=csv&as_of=${encodeURIComponent(asOf)}`),
        ]);
        const pushed = await ingest.stop();
        for (const e of [current, fixed]) {
          assert.equal(e.status, 200);
          assert.ok(e.complete, 'the export ends whole');
          assert.equal(e.body.trim().split('\n').length, ROWS + 1);
        }
        assert.ok(pushed >= 3, `${pushed} batches landed during the exports`);
        assert.deepEqual(keys(fixed.body), keys(current.body));
      } finally {
        await ingest.stop();
      }
    });

    it('an export of the whole dataset ends whole, each row once, while batches land in it', async () => {
      const ingest = steadyIngest(server.port, 'big', (i) => String(800000 + (i % 50)));
      try {
        const e = await slowGet(server.port, '/api/v1/etf/kline?format=csv');
        const pushed = await ingest.stop();
        assert.equal(e.status, 200);
        assert.ok(e.complete, 'the export ends whole');
        assert.ok(pushed >= 3, `${pushed} batches landed during the export`);
        const seen = keys(e.body);
        assert.equal(new Set(seen).size, seen.length, 'each row once');
        assert.ok(seen.length >= ROWS, `${seen.length} rows`);
      } finally {
        await ingest.stop();
      }
    });
  });
}
