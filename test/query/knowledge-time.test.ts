// Issue 25, knowledge time: a change is known at the instant it became visible. Live reads
// made by another server process while a large batch (and a revert) is inside its transaction
// are each answered again afterwards by `as_of` at the instant the read was sent, and must
// agree — on SQLite also reads sent after the instant was recorded, before COMMIT (the read
// gate makes them wait for the commit); a row's created_at is never earlier than that instant; a revert that changes nothing
// keeps the dataset's version (ETag) and latest change.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_TOKEN, QUERY_KEY, backends, freshDatabaseUrl } from '../helpers/harness.js';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { adjFactor, batch, etfBar, uniqueId } from '../helpers/batches.js';
import { pushBatch } from '../helpers/server-calls.js';
import {
  heldWriterAndReader,
  request,
  sleep,
  startServer,
  type ServerProcess,
} from '../helpers/server-process.js';

type Json = Record<string, unknown>;

/** A page of one code as a client reads it: its rows and when the request was sent. */
interface Read {
  sentAt: string;
  data: Json[];
}

async function getJson(port: number, url: string): Promise<{ status: number; body: Json; etag: string }> {
  const r = await request(port, { method: 'GET', path: url, headers: { 'q-api-key': QUERY_KEY } });
  return { status: r.status, body: JSON.parse(r.body) as Json, etag: String(r.headers.etag ?? '') };
}

async function read(port: number, url: string): Promise<Read> {
  const sentAt = new Date().toISOString();
  const r = await getJson(port, url);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return { sentAt, data: r.body.data as Json[] };
}

function revert(port: number, id: string): Promise<{ status: number; body: Json }> {
  return request(port, {
    method: 'POST',
    path: `/admin/api/batches/${encodeURIComponent(id)}/revert`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  }).then((r) => ({ status: r.status, body: JSON.parse(r.body) as Json }));
}

/** Waits until the writer holds a change inside its transaction (test/helpers/ingest-hooks.mjs). */
async function heldChange(hold: string): Promise<string> {
  for (let i = 0; i < 6000; i++) {
    if (fs.existsSync(`${hold}.held`)) return fs.readFileSync(`${hold}.held`, 'utf8');
    await sleep(10);
  }
  throw new Error('the change was never held');
}

for (const backend of await backends()) {
  describe(`knowledge time (${backend})`, { timeout: 300_000 }, () => {
    let db: { url: string; drop(): Promise<void> };
    let writer: ServerProcess;
    let reader: ServerProcess;
    let dir: string;
    let hold: string;
    /** SQLite: a writer that holds each change once its instant is recorded (reads wait: read gate). */
    let knownWriter: ServerProcess | undefined;
    let knownHold: string;

    before(async () => {
      db = await freshDatabaseUrl(backend, { migrated: true });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-known-'));
      hold = path.join(dir, 'hold');
      // The writer holds each change just before it becomes known while `hold` exists; the
      // reader is another process on the same database.
      ({ writer, reader } = await heldWriterAndReader(db.url, hold));
      knownHold = path.join(dir, 'known-hold');
      if (backend === 'sqlite') {
        knownWriter = await startServer({
          databaseUrl: db.url,
          env: { MDS_TEST_HOLD_FILE: knownHold, MDS_TEST_HOLD_AT: 'known', LOG_LEVEL: 'warn' },
          hooks: true,
          readyTimeoutMs: 180_000,
        });
      }
    });
    after(async () => {
      fs.rmSync(hold, { force: true });
      fs.rmSync(knownHold, { force: true });
      await knownWriter?.kill('SIGTERM');
      await writer?.kill('SIGTERM');
      await reader?.kill('SIGTERM');
      await db?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    /**
     * Live reads of `urls` while the writer holds a change (started by `start`), then `as_of`
     * at each read's instant: the same rows. Returns the change's answer.
     */
    async function readsWhileHeld<T>(
      urls: string[],
      start: () => Promise<T>,
    ): Promise<{ answer: T; reads: number }> {
      fs.rmSync(`${hold}.held`, { force: true });
      fs.writeFileSync(hold, '');
      const pending = start();
      await heldChange(hold);
      const live: { url: string; r: Read }[] = [];
      for (let i = 0; i < 4; i++) {
        for (const url of urls) live.push({ url, r: await read(reader.port, url) });
        await sleep(5);
      }
      fs.rmSync(hold);
      const answer = await pending;
      for (const url of urls) live.push({ url, r: await read(reader.port, url) });
      for (const { url, r } of live) {
        const asOf = await read(reader.port, `${url}&as_of=${encodeURIComponent(r.sentAt)}`);
        assert.deepEqual(asOf.data, r.data, `as_of=${r.sentAt} differs from what ${url} answered then`);
      }
      return { answer, reads: live.length };
    }

    it('live reads during a large batch and a revert are what as_of at their instants answers', async () => {
      const source = uniqueId('known');
      const first = bigEtfBatch(5000, source, uniqueId('first'), { close: 1 });
      assert.equal((await pushBatch(writer.port, first.body)).status, 200);
      // Every row updated, one code new.
      const id = uniqueId('big');
      const second = bigEtfBatch(5100, source, id, { close: 2 });
      const urls = [
        `/api/v1/etf/kline?source=${source}&code=510000&sort=date&order=asc&limit=3`,
        `/api/v1/etf/kline?source=${source}&code=510050&limit=3`,
        `/api/v1/etf/kline?source=${source}&limit=2&fields=code,date,close`,
      ];
      const heldReads: string[] = [];
      const { answer } = await readsWhileHeld(urls, async () => {
        const r = await pushBatch(writer.port, second.body);
        heldReads.push(new Date().toISOString());
        return r;
      });
      assert.equal(answer.status, 200, answer.body);
      const processedAt = String((JSON.parse(answer.body) as Json).processed_at);
      // The rows it inserted: created_at is the instant they became known, never earlier.
      const inserted = await read(reader.port, urls[1] as string);
      assert.equal(inserted.data.length, 3);
      for (const row of inserted.data) assert.equal(row.created_at, processedAt);
      const trail = await getJson(
        reader.port,
        `/api/v1/revisions/etf_daily?source=${source}&batch_id=${id}&limit=1`,
      );
      assert.equal((trail.body.data as Json[])[0]?.valid_from, processedAt);

      const reverted = await readsWhileHeld(urls, () => revert(writer.port, id));
      assert.equal(reverted.answer.status, 200, JSON.stringify(reverted.answer.body));
      const data = reverted.answer.body.data as Json;
      assert.equal(data.deleted, 100);
      assert.equal(data.updated, 5000);
      const after = await read(reader.port, urls[0] as string);
      assert.deepEqual(
        after.data.map((r) => r.close),
        [1, 1, 1],
      );
    });

    /**
     * Reads of `urls` sent while the writer holds a change whose known instant is recorded but
     * not yet committed (started by `start`), answered whenever the change lets them through,
     * then `as_of` at each read's instant: the same rows. Returns the change's answer.
     */
    async function readsWhileKnownNotCommitted<T>(urls: string[], start: () => Promise<T>): Promise<T> {
      fs.rmSync(`${knownHold}.held`, { force: true });
      fs.writeFileSync(knownHold, '');
      const pending = start();
      await heldChange(knownHold);
      const sent: { url: string; r: Promise<Read> }[] = [];
      for (let i = 0; i < 4; i++) {
        for (const url of urls) sent.push({ url, r: read(reader.port, url) });
        await sleep(20);
      }
      fs.rmSync(knownHold);
      const answer = await pending;
      for (const { url, r } of sent) {
        const live = await r;
        const asOf = await read(reader.port, `${url}&as_of=${encodeURIComponent(live.sentAt)}`);
        assert.deepEqual(asOf.data, live.data, `as_of=${live.sentAt} differs from what ${url} answered then`);
      }
      return answer;
    }

    it("reads sent between a change's known instant and its COMMIT wait for it (SQLite read gate)", async (t) => {
      const writerKnown = knownWriter;
      if (!writerKnown) {
        t.skip('PostgreSQL has no read gate: its residual window is its COMMIT (docs/point-in-time.md)');
        return;
      }
      const source = uniqueId('gate');
      assert.equal(
        (await pushBatch(writerKnown.port, bigEtfBatch(2000, source, uniqueId('g1'), { close: 1 }).body))
          .status,
        200,
      );
      const id = uniqueId('g2');
      const urls = [
        `/api/v1/etf/kline?source=${source}&code=510000&sort=date&order=asc&limit=3`,
        `/api/v1/etf/kline?source=${source}&limit=2&fields=code,date,close`,
      ];
      const pushed = await readsWhileKnownNotCommitted(urls, () =>
        pushBatch(writerKnown.port, bigEtfBatch(2000, source, id, { close: 2 }).body),
      );
      assert.equal(pushed.status, 200, pushed.body);
      const reverted = await readsWhileKnownNotCommitted(urls, () => revert(writerKnown.port, id));
      assert.equal(reverted.status, 200, JSON.stringify(reverted.body));
      const now = await read(reader.port, urls[0] as string);
      assert.deepEqual(
        now.data.map((r) => r.close),
        [1, 1, 1],
      );
    });

    it('as_of answers captured at T are byte-identical after new factors, sources and reverts', async () => {
      const src = uniqueId('pit');
      const other = `${src}-b`;
      const days = ['2024-04-25', '2024-04-26', '2024-04-29', '2024-04-30', '2024-05-06'];
      const code = (k: string): string => `${src.slice(-12)}${k}`;
      const [A, B] = [code('A'), code('B')];
      const bars = (c: string, source: string, close: number) =>
        days.map((d, i) => etfBar(c, d, { source, close: close + i, pre_close: close + i - 1 }));
      const pushed = async (dataset: string, rows: Json[], source: string): Promise<string> => {
        const r = await pushBatch(writer.port, JSON.stringify(batch(dataset, rows, { source })));
        assert.equal(r.status, 200, r.body);
        return String((JSON.parse(r.body) as Json).batch_id);
      };
      await pushed('etf_daily', [...bars(A, src, 10), ...bars(B, src, 20)], src);
      await pushed(
        'adj_factor',
        [adjFactor(A, '2024-04-25', 1, src), adjFactor(A, '2024-04-30', 2, src)],
        src,
      );
      await sleep(3);
      const t = encodeURIComponent(new Date().toISOString());
      await sleep(3);
      const urls = [
        `/api/v1/etf/kline?source=${src}&adjust=qfq&as_of=${t}`,
        `/api/v1/etf/kline?code=${A}&adjust=hfq&as_of=${t}`,
        `/api/v1/etf/kline?code=${A}&adjust=qfq&interval=1w&as_of=${t}`,
        `/api/v1/etf/kline?code=${A}&adjust=qfq&sort=close&order=desc&as_of=${t}`,
        `/api/v1/etf/kline?code=${B}&adjust=qfq&as_of=${t}`,
        `/api/v1/market/adj-factor?code=${A}&as_of=${t}`,
        `/api/v1/revisions/etf_daily?source=${src}&until=${t}`,
      ];
      const before: string[] = [];
      for (const u of urls) {
        const r = await request(reader.port, { method: 'GET', path: u, headers: { 'q-api-key': QUERY_KEY } });
        assert.equal(r.status, 200, `${u}: ${r.body}`);
        before.push(r.body);
      }
      // B had no factors at T: its answer says so.
      const meta = (JSON.parse(before[0] as string) as { meta: { adjust: Json } }).meta.adjust;
      assert.deepEqual(meta.codes_without_factors, [B]);
      // After T: factors of B, a second factor source of A, bars of A from another source, new
      // factors, and a revert.
      await pushed('adj_factor', [adjFactor(B, '2024-04-25', 3, src)], src);
      await pushed('adj_factor', [adjFactor(A, '2024-04-25', 5, other)], other);
      const otherBars = await pushed('etf_daily', bars(A, other, 30), other);
      const newFactors = await pushed('adj_factor', [adjFactor(A, '2024-05-06', 4, src)], src);
      assert.equal((await revert(writer.port, otherBars)).status, 200);
      assert.equal((await revert(writer.port, newFactors)).status, 200);
      for (const [i, u] of urls.entries()) {
        const r = await request(reader.port, { method: 'GET', path: u, headers: { 'q-api-key': QUERY_KEY } });
        assert.equal(r.status, 200, `${u}: ${r.body}`);
        assert.equal(r.body, before[i], u);
      }
    });

    it('a revert that changes nothing keeps the version, the ETag and the latest change', async () => {
      const source = uniqueId('noop');
      const bars = [etfBar('N1', '2024-05-06', { source, close: 1 })];
      assert.equal(
        (await pushBatch(writer.port, JSON.stringify(batch('etf_daily', bars, { source })))).status,
        200,
      );
      // The same again: every record a duplicate.
      const dup = uniqueId('dup');
      const again = await pushBatch(
        writer.port,
        JSON.stringify(batch('etf_daily', bars, { source, batchId: dup })),
      );
      assert.equal(again.status, 200, again.body);
      const url = `/api/v1/etf/kline?source=${source}`;
      const asOfUrl = `${url}&as_of=${encodeURIComponent(new Date().toISOString())}`;
      const before = await getJson(reader.port, url);
      const beforeAsOf = await getJson(reader.port, asOfUrl);
      const r = await revert(writer.port, dup);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.message, 'nothing to revert');
      const afterward = await getJson(reader.port, url);
      assert.equal(afterward.etag, before.etag);
      const afterAsOf = await getJson(reader.port, asOfUrl);
      assert.equal(afterAsOf.etag, beforeAsOf.etag);
      assert.deepEqual(afterAsOf.body, beforeAsOf.body);
    });
  });
}
