// Issue 14 item 13: answers made below the routes are in the service's error shape too. A wrong
// method on a known path is 405 / 4050 with `Allow` (not 404); headers too large (431), a
// request not received in time (408) and malformed HTTP (400) carry `{code, message}`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { INGEST_KEY, startApp, type Harness } from '../helpers/harness.js';

/** Sends raw bytes; resolves with everything received once the server closes the connection. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let out = '';
    socket.on('data', (c: Buffer) => (out += c.toString('utf8')));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    socket.write(text);
  });
}

function parse(answer: string): { status: number; headers: string; body: { code: number; message: string } } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  return { status, headers: head, body: JSON.parse(body) as { code: number; message: string } };
}

describe('HTTP protocol errors in the error shape', { timeout: 60_000 }, () => {
  let h: Harness;
  let port: number;
  before(async () => {
    h = await startApp('sqlite', { MDS_HEADERS_TIMEOUT_MS: '300' });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as net.AddressInfo).port;
  });
  after(async () => h.close());

  const cases: [method: string, url: string, allow: string][] = [
    ['DELETE', '/api/v1/etf/kline', 'GET, HEAD'],
    ['POST', '/api/v1/etf/kline?limit=5', 'GET, HEAD'],
    ['PUT', '/api/v1/upstream/ingest/batches', 'POST'],
    ['DELETE', '/api/v1/upstream/ingest/batches/some-batch', 'GET, HEAD'],
    ['PUT', '/admin/api/keys/some-key-id', 'GET, HEAD, PATCH'],
    ['POST', '/health/', 'GET, HEAD'],
  ];
  for (const [method, url, allow] of cases) {
    it(`${method} ${url}: 405 / 4050 with Allow: ${allow}`, async () => {
      const r = await h.app.inject({ method: method as 'GET', url, headers: { 'up-api-key': INGEST_KEY } });
      assert.equal(r.statusCode, 405, r.body);
      assert.equal(r.json().code, 4050);
      assert.equal(r.headers.allow, allow);
      assert.match(r.json().message as string, new RegExp(`allowed: ${allow}`));
    });
  }

  it('a query path keeps its envelope on 405; an unknown path is still 404 / 4041', async () => {
    const r = await h.app.inject({ method: 'DELETE', url: '/api/v1/etf/kline?limit=5' });
    assert.deepEqual(r.json().meta, { total: 0, limit: 5, offset: 0, has_more: false });
    assert.deepEqual(r.json().data, []);
    const unknown = await h.app.inject({ method: 'DELETE', url: '/api/v1/no/such' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 4041);
    assert.equal(unknown.headers.allow, undefined);
  });

  it('headers over the size limit: 431 / 4310', async () => {
    const answer = parse(
      await raw(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    assert.equal(answer.status, 431);
    assert.equal(answer.body.code, 4310);
    assert.match(answer.headers, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
  });

  it('headers not received in time: 408 / 4080', async () => {
    const answer = parse(await raw(port, `GET /health HTTP/1.1\r\nHost: x\r\n`));
    assert.equal(answer.status, 408);
    assert.equal(answer.body.code, 4080);
  });

  it('malformed HTTP: 400 / 4001', async () => {
    const answer = parse(await raw(port, `GET /health HTTP/1.1\r\nHost x\r\n\r\n`));
    assert.equal(answer.status, 400);
    assert.equal(answer.body.code, 4001);
  });
});
