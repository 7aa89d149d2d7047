import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { CATALOG } from '../../src/catalog/catalog.js';
import { adjFactor, batch, days, etfBar } from '../helpers/batches.js';
import { sampleRow } from '../helpers/sample-rows.js';
import {
  INGEST_KEY,
  QUERY_KEY,
  get,
  json,
  push,
  startApp,
  type Backend,
  type Harness,
} from '../helpers/harness.js';
import { sleep } from '../helpers/server-process.js';

/**
 * Exports (format=csv|ndjson|arrow) against clients that stop reading, on real sockets: they must
 * hold no pooled connection, open transaction or SQLite snapshot while they wait for the
 * client, and a client that reads nothing is cut off after MDS_EXPORT_STALL_TIMEOUT_MS.
 * Before the fix, two stalled exports took both connections of a 2-connection pool (every
 * other request, /health and ingest answered 503) and pinned SQLite's WAL. Run once per backend,
 * side by side: faults-exports-{sqlite,postgres}.test.ts.
 */

const ROWS = 100_000;
const EXPORT = '/api/v1/etf/kline?format=ndjson&source=exp';
/** The last chunk of a complete chunked response. */
const END = '\r\n0\r\n\r\n';

/** The server side of every connection, to see when an export waits for its client. */
function serverSockets(h: Harness): Set<net.Socket> {
  const sockets = new Set<net.Socket>();
  h.app.server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return sockets;
}

async function listen(h: Harness): Promise<number> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  return (h.app.server.address() as net.AddressInfo).port;
}

/** An export whose client reads its first 64 KB and then nothing: a socket that stops reading. */
interface StalledExport {
  socket: net.Socket;
  /** Reads again, to the end of the connection; resolves with everything received. */
  drain(): Promise<string>;
}

async function stalledExport(port: number, path = EXPORT): Promise<StalledExport> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  let size = 0;
  let stopped = false;
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nQ-API-KEY: ${QUERY_KEY}\r\n\r\n`);
  await new Promise<void>((resolve) => {
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      size += d.length;
      if (size >= 64 * 1024 && !stopped) {
        stopped = true;
        socket.pause();
        resolve();
      }
    });
  });
  return {
    socket,
    drain: () =>
      new Promise<string>((resolve) => {
        const done = (): void => resolve(Buffer.concat(chunks).toString('latin1'));
        // The whole response received: the client would close (keep-alive otherwise).
        socket.on('data', () => {
          if (Buffer.concat(chunks.slice(-2)).toString('latin1').endsWith(END)) socket.destroy();
        });
        socket.on('close', done);
        socket.resume();
      }),
  };
}

/** The body of a raw chunked response, and whether it ended with its last chunk. */
function dechunk(raw: string): { body: string; complete: boolean } {
  let at = raw.indexOf('\r\n\r\n') + 4;
  const parts: string[] = [];
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) return { body: parts.join(''), complete: false };
    const size = parseInt(raw.slice(at, eol), 16);
    if (size === 0) return { body: parts.join(''), complete: true };
    parts.push(raw.slice(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** Waits until `check` holds (polling); fails after 60 s. */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; !check(); i++) {
    if (i > 600) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** The stalled-export suite on one backend (each backend's file calls this). */
export function stalledExportSuite(backend: Backend): void {
  // 100,000 rows seeded and three whole exports read: at a load average of 37 that outlasted 120 s.
  describe(`stalled exports (${backend})`, { timeout: 600_000 }, () => {
    let h: Harness;
    let server: Set<net.Socket>;
    before(async () => {
      h = await startApp(backend, {
        MDS_PG_POOL_SIZE: '2',
        MDS_PG_CONNECT_TIMEOUT_MS: '1000',
        MDS_EXPORT_STALL_TIMEOUT_MS: '600000',
      });
      const dates = days('2020-01-01', 100);
      for (let part = 0; part < ROWS / 50_000; part++) {
        const rows = Array.from({ length: 50_000 }, (_, i) => {
          const n = part * 50_000 + i;
          return etfBar(String(600000 + Math.floor(n / 100)), dates[n % 100] as string, { source: 'exp' });
        });
        const res = await push(h.app, batch('etf_daily', rows, { source: 'exp' }));
        assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      }
    });
    after(async () => h.close());

    test('stalled exports hold no connection or snapshot: queries, ingest, /health and the WAL checkpoint go on', async () => {
      server = serverSockets(h);
      const port = await listen(h);
      const stalled = [await stalledExport(port), await stalledExport(port), await stalledExport(port)];
      try {
        await whileStalled(stalled.length);
        // Still open, and complete when read: 100,000 rows then the end of the response.
        for (const s of stalled) {
          const { body, complete } = dechunk(await s.drain());
          assert.ok(complete, 'the export ends properly');
          assert.equal(body.split('\n').filter((l) => l.startsWith('{"code"')).length, ROWS);
        }
      } finally {
        for (const s of stalled) s.socket.destroy();
      }
    });

    async function whileStalled(count: number): Promise<void> {
      // Each export is blocked on its client: the server's socket buffer is full.
      await until('the exports to wait for their clients', () => {
        return [...server].filter((s) => s.writableNeedDrain).length >= count;
      });

      for (let i = 0; i < 5; i++) {
        const health = await h.app.inject({ method: 'GET', url: '/health' });
        assert.equal(health.statusCode, 200, health.body);
        const page = await get(h.app, '/api/v1/etf/kline?source=exp&limit=5');
        assert.equal(page.statusCode, 200, page.body);
        assert.equal((json(page).meta as { total: number }).total, ROWS);
      }
      // Another dataset: a batch of etf_daily itself would cut these exports (next test).
      const other = CATALOG.byName.get('index_daily');
      assert.ok(other);
      const res = await push(h.app, batch('index_daily', [sampleRow(other, 1)]), INGEST_KEY);
      assert.equal(res.statusCode, 200, res.body);

      if (backend === 'sqlite') {
        // Another connection checkpoints the whole WAL and truncates it: no reader pins a frame.
        const file = h.databaseUrl.slice('sqlite:'.length);
        const db = new Database(file);
        try {
          db.pragma('busy_timeout = 0');
          const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number }[];
          assert.deepEqual(r, { busy: 0, log: 0, checkpointed: 0 });
          assert.equal(fs.statSync(`${file}-wal`).size, 0);
        } finally {
          db.close();
        }
      }
    }

    // Arrow too: its writer once queued every batch without waiting for the client (the whole
    // answer read ahead of a stalled client, in memory).
    for (const [format, date, added] of [
      ['ndjson', '2020-01-01', 1],
      ['arrow', '2020-01-02', 2],
    ] as const) {
      test(`a batch landing mid-export: the export goes on after its cursor and ends whole (format=${format})`, async () => {
        const port = (h.app.server.address() as net.AddressInfo | null)?.port ?? (await listen(h));
        const s = await stalledExport(port, EXPORT.replace('format=ndjson', `format=${format}`));
        // A new code after the export's cursor, and a change of the first row, already sent.
        const res = await push(
          h.app,
          batch('etf_daily', [
            etfBar('610000', date, { source: 'exp', close: 1 }),
            etfBar('600000', '2020-01-01', { source: 'exp', close: 2 }),
          ]),
        );
        assert.equal(res.statusCode, 200, res.body);
        const { body, complete } = dechunk(await s.drain());
        assert.ok(complete, 'the response ends with its last chunk');
        if (format === 'ndjson') {
          const lines = body.trim().split('\n');
          assert.equal(lines.length, ROWS + added, 'every row once, and the new code after the cursor');
          assert.match(lines.at(-1) ?? '', /"610000"[^\n]*"close":1[,}]/);
          assert.doesNotMatch(lines[0] ?? '', /"close":2[,}]/, 'the first row as it was when it was sent');
        }
        // A new export sees the batch whole.
        const again = await get(h.app, `${EXPORT}&code=610000`);
        assert.equal(again.statusCode, 200);
        assert.match(again.body, new RegExp(`"date":"${date}"[^\\n]*"close":1[,}]`));
      });
    }

    test('an adjusted export whose factors change mid-export is cut: its rows would be adjusted two ways', async () => {
      const port = (h.app.server.address() as net.AddressInfo | null)?.port ?? (await listen(h));
      const s = await stalledExport(port, `${EXPORT}&adjust=qfq`);
      const res = await push(h.app, batch('adj_factor', [adjFactor('600999', '2020-01-02', 1.1)]));
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(!dechunk(await s.drain()).complete, 'the response is cut, without its last chunk');
    });

    test('a client that reads nothing is disconnected after the stall timeout', async () => {
      const cut = await startApp(
        backend,
        { MDS_EXPORT_STALL_TIMEOUT_MS: '300' },
        { databaseUrl: h.databaseUrl },
      );
      try {
        const sockets = serverSockets(cut);
        const s = await stalledExport(await listen(cut));
        // The server closes its side once the timeout passes; then read what it had sent.
        await until('the server to close the stalled connection', () => sockets.size === 0);
        assert.ok(!dechunk(await s.drain()).complete, 'the server closed the connection before the end');
        const health = await cut.app.inject({ method: 'GET', url: '/health' });
        assert.equal(health.statusCode, 200);
      } finally {
        await cut.app.close();
        await cut.store.close();
      }
    });
  });
}
