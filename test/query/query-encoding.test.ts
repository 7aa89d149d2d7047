import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { QUERY_KEY, freshDatabaseUrl } from '../helpers/harness.js';
import { rawExchange, rawStatus, startServer, type ServerProcess } from '../helpers/server-process.js';

/**
 * Issue 24 item 7b, on a real server over raw sockets: a filter value whose percent-encoding is
 * not UTF-8 (`?code=%FF`) is refused like the same byte sent raw (400 / 4001), instead of being
 * kept as the text "%FF" and answered 200 with no rows. Valid encodings still pass.
 */

const KLINE = '/api/v1/etf/kline';

/** GET `target` (bytes, sent as they are) with the query key; the raw answer. */
const rawGet = (port: number, target: Buffer): Promise<string> =>
  rawExchange(
    port,
    Buffer.concat([
      Buffer.from('GET '),
      target,
      Buffer.from(` HTTP/1.1\r\nHost: x\r\nQ-API-KEY: ${QUERY_KEY}\r\nConnection: close\r\n\r\n`),
    ]),
  );

const bodyOf = (raw: string): { code: number; parameter?: string; message: string } =>
  JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { code: number; parameter?: string; message: string };

describe('percent-encoded bytes in query parameters (a real server)', () => {
  let server: ServerProcess;
  let db: { url: string; drop(): Promise<void> };
  before(async () => {
    db = await freshDatabaseUrl('sqlite');
    server = await startServer({ databaseUrl: db.url });
  });
  after(async () => {
    await server.kill('SIGKILL');
    await db.drop();
  });

  test('a raw 0xFF byte and %FF get the same 400 / 4001', async () => {
    const raw = await rawGet(
      server.port,
      Buffer.concat([Buffer.from(`${KLINE}?code=`), Buffer.from([0xff])]),
    );
    assert.equal(rawStatus(raw), 400, raw);
    assert.equal(bodyOf(raw).code, 4001);
    for (const bad of ['%FF', '%E4%B8', '%C0%80', '%ED%A0%80', '%ZZ', '51%']) {
      const r = await rawGet(server.port, Buffer.from(`${KLINE}?limit=5&code=${bad}`));
      assert.equal(rawStatus(r), 400, `${bad}: ${r}`);
      const body = bodyOf(r);
      assert.equal(body.code, 4001, bad);
      assert.equal(body.parameter, 'code', bad);
      assert.match(body.message, /not valid percent-encoded UTF-8/);
    }
  });

  test('valid encodings are decoded as before', async () => {
    for (const ok of ['510300', '%35%31%30%33%30%30', '%E4%B8%AD', '%F0%9F%98%80', '%25FF']) {
      const r = await rawGet(server.port, Buffer.from(`${KLINE}?code=${ok}`));
      assert.equal(rawStatus(r), 200, `${ok}: ${r}`);
      assert.equal(bodyOf(r).code, 0);
    }
  });
});
