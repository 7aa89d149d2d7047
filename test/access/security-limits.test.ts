// Issue 6, security: the transport limits are enforced and configurable — headers timeout
// (slowloris), request timeout (slow body), keep-alive timeout, connection limit, body limit.
// Real sockets on loopback against an in-process server; no timing assertions, only outcomes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { get, INGEST_KEY, QUERY_KEY, startApp, type Harness } from '../helpers/harness.js';
import { sleep } from '../helpers/server-process.js';

const LIMITS = {
  MDS_HEADERS_TIMEOUT_MS: '600',
  MDS_REQUEST_TIMEOUT_MS: '1500',
  MDS_KEEP_ALIVE_TIMEOUT_MS: '500',
  MDS_MAX_CONNECTIONS: '4',
  MDS_BODY_LIMIT: '4096',
  MDS_AUTH_FAILURES_PER_MINUTE: '3',
};

interface Conn {
  socket: net.Socket;
  /** Everything received, once the server closed the connection. */
  closed: Promise<string>;
}

function connect(port: number): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let raw = '';
    socket.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    const closed = new Promise<string>((res) => socket.on('close', () => res(raw)));
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

describe('security: transport limits (configurable, enforced)', { timeout: 120_000 }, () => {
  let h: Harness;
  let port: number;
  before(async () => {
    h = await startApp('sqlite', LIMITS);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as net.AddressInfo).port;
  });
  after(async () => h.close());

  it('headers that never finish (slowloris) are cut off after MDS_HEADERS_TIMEOUT_MS', async () => {
    const c = await connect(port);
    c.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    // Trickle a header line byte by byte; the server must not wait for ever.
    let open = true;
    void c.closed.then(() => (open = false));
    for (let i = 0; i < 100 && open; i++) {
      if (!c.socket.destroyed) c.socket.write('X');
      await sleep(100);
    }
    assert.equal(open, false, 'cut off within 10 s of trickling (configured: 0.6 s)');
    const raw = await c.closed;
    assert.ok(raw === '' || /^HTTP\/1\.1 408 /.test(raw), `closed or 408, got ${raw.slice(0, 80)}`);
  });

  it('a body that trickles in is cut off after MDS_REQUEST_TIMEOUT_MS', async () => {
    const c = await connect(port);
    c.socket.write(
      `POST /api/v1/upstream/ingest/batches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `UP-API-KEY: ${INGEST_KEY}\r\nContent-Length: 4000\r\n\r\n{`,
    );
    let open = true;
    void c.closed.then(() => (open = false));
    for (let i = 0; i < 100 && open; i++) {
      if (!c.socket.destroyed) c.socket.write(' ');
      await sleep(100);
    }
    assert.equal(open, false, 'cut off within 10 s of trickling (configured: 1.5 s)');
    const raw = await c.closed;
    assert.ok(raw === '' || /^HTTP\/1\.1 408 /.test(raw), `closed or 408, got ${raw.slice(0, 80)}`);
  });

  it('an idle keep-alive connection is closed after MDS_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const c = await connect(port);
    c.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const raw = await c.closed;
    assert.match(raw, /^HTTP\/1\.1 200 /);
    assert.match(raw, /keep-alive/i);
  });

  it(`at most MDS_MAX_CONNECTIONS (${LIMITS.MDS_MAX_CONNECTIONS}) connections at once`, async () => {
    const max = Number(LIMITS.MDS_MAX_CONNECTIONS);
    const held: Conn[] = [];
    for (let i = 0; i < max; i++) {
      const c = await connect(port);
      c.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n'); // active, not idle
      held.push(c);
    }
    await sleep(100);
    const extra = await connect(port);
    extra.socket.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const refused = await extra.closed;
    assert.equal(refused, '', 'the connection over the limit is dropped without an answer');
    for (const c of held) c.socket.destroy();
    await sleep(200);
    const again = await connect(port);
    again.socket.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(await again.closed, /^HTTP\/1\.1 200 /, 'served again once below the limit');
  });

  it('a body over MDS_BODY_LIMIT is refused with 413 / 4130 before it is read', async () => {
    const c = await connect(port);
    c.socket.write(
      `POST /api/v1/upstream/ingest/batches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `UP-API-KEY: ${INGEST_KEY}\r\nContent-Length: 5000000\r\nConnection: close\r\n\r\n`,
    );
    const raw = await c.closed;
    assert.match(raw, /^HTTP\/1\.1 413 /);
    assert.match(raw, /"code":4130/);
  });

  // Last: it leaves this client address's invalid keys refused for the rest of the minute.
  it('failed authentications over MDS_AUTH_FAILURES_PER_MINUTE: 429 / 4290 with Retry-After', async () => {
    for (let i = 0; i < Number(LIMITS.MDS_AUTH_FAILURES_PER_MINUTE); i++) {
      assert.equal((await get(h.app, '/api/v1/etf/kline', `guess-${i}-0123456789abcdef`)).statusCode, 401);
    }
    const blocked = await get(h.app, '/api/v1/etf/kline', 'guess-again-0123456789abcdef');
    assert.equal(blocked.statusCode, 429);
    assert.equal((blocked.json() as { code: number }).code, 4290);
    assert.ok(Number(blocked.headers['retry-after']) > 0);
    // Over the allowance only invalid keys are refused: a valid key still passes (issue 14).
    assert.equal((await get(h.app, '/api/v1/etf/kline', QUERY_KEY)).statusCode, 200);
  });
});
