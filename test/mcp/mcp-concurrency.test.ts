// MCP tool calls while something else happens, on a real server process on every backend: a
// batch held inside its transaction (test-only hook, test/helpers/ingest-hooks.mjs), a CSV
// export read at full speed and another whose client has stopped reading, and /health probed
// from another process on fresh connections (test/helpers/fresh-probe.mjs). The tool calls must
// answer meanwhile, with what the HTTP API answers at the same moment (nothing of the held batch),
// the probes must all be answered, and the exports and the batch must end whole afterwards.
// No timing assertions: the probe gives a request up after 10 s, far beyond any answer here.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { backends, QUERY_KEY } from '../helpers/harness.js';
import { batch, days, etfBar, uniqueId } from '../helpers/batches.js';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { call, connect, structured } from '../helpers/mcp-client.js';
import { probe } from '../helpers/probe.js';
import { holdingServer, type HoldingServer } from '../helpers/held-batches.js';
import { request, type ServerProcess } from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';

/** Rows seeded for the exports: enough that a CSV of them is megabytes, beyond a socket's buffers. */
const ROWS = 30_000;
const SOURCE = 'bulk';
const Q = { 'q-api-key': QUERY_KEY };
const DATES = days('2024-03-01', 31);
const EXPORT = `/api/v1/etf/kline?source=${SOURCE}&format=csv`;

/** An export whose client reads its first bytes and then stops; `resume()` reads the rest. */
function stalledExport(port: number): Promise<{ ended: () => boolean; resume: () => Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: EXPORT, headers: Q, agent: false }, (res) => {
      assert.equal(res.statusCode, 200);
      const chunks: Buffer[] = [];
      let ended = false;
      const done = new Promise<string>((ok, fail) => {
        res.on('end', () => {
          ended = true;
          ok(Buffer.concat(chunks).toString('utf8'));
        });
        res.on('error', fail);
      });
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('data', () => {
        res.pause();
        resolve({
          ended: () => ended,
          resume: () => {
            res.resume();
            return done;
          },
        });
      });
    });
    req.on('error', reject);
  });
}

for (const backend of await backends()) {
  describe(`MCP tool calls while a batch, exports and probes run (${backend})`, { timeout: 300_000 }, () => {
    let held: HoldingServer;
    let server: ServerProcess;
    let client: Client;
    before(async () => {
      held = await holdingServer(backend);
      server = held.server;
      const seed = [
        batch(
          'trade_calendar',
          DATES.map((date) => ({
            exchange: 'SSE',
            date,
            is_open: [0, 6].includes(new Date(`${date}T00:00:00Z`).getUTCDay()) ? 0 : 1,
            source: 'test',
          })),
        ),
        batch(
          'etf_daily',
          DATES.map((d) => etfBar('510300', d, { close: 9.4 })),
        ),
      ];
      for (const b of seed) {
        const res = await pushBatch(server.port, JSON.stringify(b));
        assert.equal(res.status, 200, res.body.slice(0, 300));
      }
      const bulk = await pushBatch(server.port, bigEtfBatch(ROWS, SOURCE, uniqueId('bulk')).body);
      assert.equal(bulk.status, 200, bulk.body.slice(0, 300));
      client = await connect(server.base, Q);
    });
    after(async () => {
      await client?.close();
      await held?.close();
    });

    it('answers every tool call as the HTTP API does, none of the held batch; probes answered; all ends whole', async () => {
      const stalled = await stalledExport(server.port);

      // A correction of 510300 held before its commit, every row written.
      held.hold();
      const fix = batch(
        'etf_daily',
        DATES.map((d) => etfBar('510300', d, { close: 9.45 })),
      );
      const answer = pushBatch(server.port, JSON.stringify(fix));
      await held.held();

      const httpJson = async (p: string): Promise<Record<string, unknown>> => {
        const res = await request(server.port, { method: 'GET', path: p, headers: Q });
        assert.equal(res.status, 200, res.body.slice(0, 300));
        return JSON.parse(res.body) as Record<string, unknown>;
      };
      /** Each tool's answer beside the HTTP API's to the same request, three rounds. */
      const toolCalls = async (): Promise<void> => {
        for (let round = 0; round < 3; round++) {
          const q = structured(
            await call(client, 'query', { dataset: 'etf_daily', filters: { code: '510300' }, limit: 40 }),
          );
          assert.deepEqual(q.rows, (await httpJson('/api/v1/etf/kline?code=510300&limit=40')).data);
          assert.ok(
            (q.rows as { close: number }[]).every((r) => r.close === 9.4),
            'nothing of the held batch',
          );
          const quality = structured(
            await call(client, 'quality_report', { dataset: 'etf_daily', code: '510300' }),
          );
          const apiQuality = await httpJson('/api/v1/quality/etf_daily?code=510300');
          assert.deepEqual(quality.rows, apiQuality.data);
          assert.deepEqual(quality.calendar, (apiQuality.meta as Record<string, unknown>).calendar);
          const trail = structured(
            await call(client, 'revision_trail', {
              dataset: 'etf_daily',
              filters: { code: '510300', date: DATES[0] },
            }),
          );
          assert.equal((trail.items as unknown[]).length, 1, 'the held correction is no revision yet');
          const cal = structured(await call(client, 'trading_days', { exchange: 'SSE' }));
          assert.equal(cal.total, 21);
          const list = structured(await call(client, 'list_datasets', {}));
          assert.ok((list.datasets as unknown[]).length > 0);
        }
      };
      const fullExport = request(server.port, { method: 'GET', path: EXPORT, headers: Q });
      const [probed] = await Promise.all([
        probe(
          server.port,
          Array.from({ length: 20 }, () => ({ path: '/health' })),
          10_000,
        ),
        toolCalls(),
      ]);
      assert.deepEqual(
        probed.map((p) => p.status),
        probed.map(() => 200),
        JSON.stringify(probed.filter((p) => p.status !== 200)),
      );
      assert.ok(held.holding(), 'the batch was held while all of this was answered');
      assert.equal(stalled.ended(), false, 'the stalled export was still in flight');

      const exported = await fullExport;
      assert.equal(exported.status, 200);
      assert.equal(exported.body.trim().split('\n').length, ROWS + 1, 'the full-speed export, whole');

      held.release();
      const res = await answer;
      assert.equal(res.status, 200, res.body.slice(0, 300));
      const after = structured(
        await call(client, 'query', { dataset: 'etf_daily', filters: { code: '510300' }, limit: 40 }),
      );
      assert.ok(
        (after.rows as { close: number }[]).every((r) => r.close === 9.45),
        'the batch, once committed',
      );
      const trail = structured(
        await call(client, 'revision_trail', {
          dataset: 'etf_daily',
          filters: { code: '510300', date: DATES[0] },
        }),
      );
      assert.equal((trail.items as unknown[]).length, 2);

      const rest = await stalled.resume();
      assert.equal(rest.trim().split('\n').length, ROWS + 1, 'the stalled export, whole once read');
    });
  });
}
