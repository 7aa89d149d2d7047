import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { INGEST_KEY, QUERY_KEY, freshDatabaseUrl } from '../helpers/harness.js';
import {
  StagedPost,
  rawExchange,
  rawStatus,
  request,
  sleep,
  startServer,
  type ServerProcess,
} from '../helpers/server-process.js';
import { pushBatch } from '../helpers/server-calls.js';

/**
 * Issue 24 budgets, on a real server process and real sockets: concurrent exports per key
 * (MDS_EXPORTS_PER_KEY → 429 / 4291) and per process (MDS_EXPORTS_PER_PROCESS → 503 / 5031),
 * and bytes of batch bodies in flight (MDS_INGEST_MEMORY_BUDGET → 503 / 5032, before the body
 * is read when its length is declared). Each refusal carries Retry-After; a place is given back
 * when its export or batch ends. Before: nothing bounded either (200 slow exports from one key
 * held a worker; 24 concurrent 60 MiB batches took one to 2.1 GB).
 */

const OTHER_KEY = 'test-query-key-other-0123456789';
const EXPORT = '/api/v1/etf/kline?format=ndjson&source=budget';
const PUSH = '/api/v1/upstream/ingest/batches';
const BUDGET = 1024 * 1024;

/** An export whose client reads its first 64 KB and then nothing (it keeps its place). */
async function stalledExport(port: number, key: string): Promise<{ head: string; socket: net.Socket }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.write(`GET ${EXPORT} HTTP/1.1\r\nHost: 127.0.0.1\r\nQ-API-KEY: ${key}\r\n\r\n`);
  let got = '';
  await new Promise<void>((resolve) => {
    const onData = (d: Buffer): void => {
      got += d.toString('latin1');
      if (got.length >= 64 * 1024 || /^HTTP\/1\.1 [45]/.test(got)) {
        socket.pause();
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
  });
  return { head: got.slice(0, got.indexOf('\r\n')), socket };
}

/** An export refused with `status` / `code`, told to come back in 5 s. */
async function refusedExport(port: number, key: string, status: number, code: number): Promise<void> {
  const r = await request(port, { method: 'GET', path: EXPORT, headers: { 'q-api-key': key } });
  assert.equal(r.status, status, r.body.slice(0, 300));
  assert.equal((JSON.parse(r.body) as { code: number }).code, code);
  assert.equal(r.headers['retry-after'], '5');
}

/**
 * A client that uploads a chunked body of `pieces` × 64 KiB slowly (10 ms apart) and reads
 * nothing until it has sent all of it and its last chunk: what it then reads. A server that
 * closed at once with unread bytes makes the kernel answer the client's next bytes with a
 * reset, and the client never reads the answer (a lingering close reads and drops them).
 */
function slowChunkedUpload(port: number, headers: string, pieces: number): Promise<string> {
  return new Promise<string>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    s.pause();
    s.on('error', (err: Error) => resolve(`${got}<${err.message}>`));
    s.on('data', (d: Buffer) => (got += d.toString('utf8')));
    s.on('close', () => resolve(got));
    s.on('connect', () => {
      s.write(`POST ${PUSH} HTTP/1.1\r\nHost: x\r\n${headers}Transfer-Encoding: chunked\r\n\r\n`);
      const piece = Buffer.alloc(64 * 1024, 0x20);
      let n = 0;
      const more = (): void => {
        if (s.destroyed) return;
        if (n++ === pieces) {
          s.write('0\r\n\r\n', () => s.resume());
          return;
        }
        s.write(`${piece.length.toString(16)}\r\n`);
        s.write(piece);
        s.write('\r\n', () => setTimeout(more, 10));
      };
      more();
    });
  });
}

const bodyOf = (raw: string): { code?: number } =>
  JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { code?: number };

describe('export and ingest budgets (a real server)', { timeout: 180_000 }, () => {
  let server: ServerProcess;
  let db: { url: string; drop(): Promise<void> };
  before(async () => {
    db = await freshDatabaseUrl('sqlite');
    server = await startServer({
      databaseUrl: db.url,
      env: {
        MDS_QUERY_KEYS: `${QUERY_KEY},${OTHER_KEY}`,
        MDS_EXPORTS_PER_KEY: '2',
        MDS_EXPORTS_PER_PROCESS: '3',
        MDS_INGEST_MEMORY_BUDGET: String(BUDGET),
      },
    });
    // Enough rows that an export far outgrows the sockets' buffers (about 15 MB of NDJSON).
    const big = bigEtfBatch(60_000, 'budget', uniqueId('budget'));
    const r = await pushBatch(server.port, big.body);
    assert.equal(r.status, 200, r.body);
  });
  after(async () => {
    await server.kill('SIGKILL');
    await db.drop();
  });

  test('exports: MDS_EXPORTS_PER_KEY per key (429 / 4291), MDS_EXPORTS_PER_PROCESS in all (503 / 5031)', async () => {
    const a1 = await stalledExport(server.port, QUERY_KEY);
    const a2 = await stalledExport(server.port, QUERY_KEY);
    assert.equal(a1.head, 'HTTP/1.1 200 OK');
    assert.equal(a2.head, 'HTTP/1.1 200 OK');
    // The key's third export at once is refused; its pages are not.
    await refusedExport(server.port, QUERY_KEY, 429, 4291);
    const page = await request(server.port, {
      method: 'GET',
      path: '/api/v1/etf/kline?source=budget&limit=5',
      headers: { 'q-api-key': QUERY_KEY },
    });
    assert.equal(page.status, 200);
    // Another key gets the process's last place, then the process is full.
    const b1 = await stalledExport(server.port, OTHER_KEY);
    assert.equal(b1.head, 'HTTP/1.1 200 OK');
    await refusedExport(server.port, OTHER_KEY, 503, 5031);
    // A client that leaves gives its place back.
    a1.socket.destroy();
    let again = 0;
    for (let i = 0; i < 100 && again !== 200; i++) {
      await sleep(100);
      const s = await stalledExport(server.port, QUERY_KEY);
      again = Number(s.head.split(' ')[1]);
      s.socket.destroy();
    }
    assert.equal(again, 200, 'the key exports again once one of its exports ended');
    for (const s of [a2, b1]) s.socket.destroy();
  });

  test('ingest memory: past MDS_INGEST_MEMORY_BUDGET a batch is refused 503 / 5032 before its body is read', async () => {
    // 900 KB in flight: half sent, so the server holds its reservation.
    const held = bigEtfBatch(3_000, 'mem', uniqueId('mem'));
    assert.ok(held.body.length > 700_000 && held.body.length < BUDGET, String(held.body.length));
    const first = new StagedPost(server.port, PUSH, held.body, {
      'UP-API-KEY': INGEST_KEY,
      'Content-Type': 'application/json',
    });
    await first.sendUpTo(0.5);
    await sleep(300);

    // A declared 400 KB would pass the budget: refused from its headers, the body never read.
    // Only its headers are sent: the answer shows what was decided before the body.
    const refused = await rawExchange(
      server.port,
      `POST ${PUSH} HTTP/1.1\r\nHost: x\r\nUP-API-KEY: ${INGEST_KEY}\r\nContent-Type: application/json\r\n` +
        `Content-Length: 400000\r\n\r\n`,
    );
    assert.equal(rawStatus(refused), 503, refused);
    assert.match(refused, /retry-after: 2\r\n/i);
    assert.match(refused, /connection: close\r\n/i);
    assert.equal(bodyOf(refused).code, 5032);

    // A chunked body (no length) is cut off once what it sent passes the budget.
    const chunked = await new Promise<string>((resolve) => {
      const s = net.connect(server.port, '127.0.0.1');
      let got = '';
      s.on('error', () => resolve(got));
      s.on('data', (d: Buffer) => (got += d.toString('utf8')));
      s.on('close', () => resolve(got));
      s.on('connect', () => {
        s.write(
          `POST ${PUSH} HTTP/1.1\r\nHost: x\r\nUP-API-KEY: ${INGEST_KEY}\r\nContent-Type: application/json\r\n` +
            `Transfer-Encoding: chunked\r\n\r\n`,
        );
        const piece = Buffer.alloc(64 * 1024, 0x20);
        let n = 0;
        const more = (): void => {
          if (s.destroyed || n++ > 20) return;
          s.write(`${piece.length.toString(16)}\r\n`);
          s.write(piece);
          s.write('\r\n', () => setTimeout(more, 5));
        };
        more();
      });
    });
    assert.equal(rawStatus(chunked), 503, chunked.slice(0, 300));
    assert.equal(bodyOf(chunked).code, 5032);

    // The same refusal to a client that goes on uploading 2 MiB and reads only then: the
    // server lingers (reads and drops the rest) so the answer is read, not reset away.
    const ingestHeaders = `UP-API-KEY: ${INGEST_KEY}\r\nContent-Type: application/json\r\n`;
    const slow = await slowChunkedUpload(server.port, ingestHeaders, 32);
    assert.equal(rawStatus(slow), 503, slow.slice(0, 300));
    assert.match(slow, /retry-after: 2\r\n/i);
    assert.match(slow, /connection: close\r\n/i);
    assert.equal(bodyOf(slow).code, 5032);
    // Every refusal before the body is read shares it: a wrong key (401) too.
    const wrongKey = await slowChunkedUpload(
      server.port,
      'UP-API-KEY: not-a-key\r\nContent-Type: application/json\r\n',
      32,
    );
    assert.equal(rawStatus(wrongKey), 401, wrongKey.slice(0, 300));
    assert.equal(bodyOf(wrongKey).code, 4012);

    // Small batches still fit beside the first.
    const small = await pushBatch(
      server.port,
      JSON.stringify(
        batch('etf_daily', [etfBar('510300', '2024-01-02', { source: 'mem' })], { batchId: uniqueId('s') }),
      ),
    );
    assert.equal(small.status, 200, small.body);

    await first.sendUpTo(1);
    assert.equal(rawStatus(await first.response()), 200);
    // Answered: its bytes are given back, and a 350 KB batch is accepted.
    const after = bigEtfBatch(1_200, 'mem2', uniqueId('mem2'));
    assert.ok(after.body.length > 300_000, String(after.body.length));
    const ok = await pushBatch(server.port, after.body);
    assert.equal(ok.status, 200, ok.body);
    // A body larger than the whole budget is admitted when it is alone in flight.
    const lone = bigEtfBatch(7_000, 'mem3', uniqueId('mem3'));
    assert.ok(lone.body.length > BUDGET, String(lone.body.length));
    const alone = await pushBatch(server.port, lone.body);
    assert.equal(alone.status, 200, alone.body.slice(0, 300));
  });
});
