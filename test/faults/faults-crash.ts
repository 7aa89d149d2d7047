// Issue 6, faults: SIGKILL of the real server at several points of an etf_daily batch (50,000
// records where the kill point depends on the batch's work). After a restart the batch is wholly
// applied ("accepted", every row queryable) or absent (404 / 4040, no row), and a retry applies
// it exactly once. Run once per backend, side by side: faults-crash-{sqlite,postgres}.test.ts.
//
// A server start costs about 2.4 s of CPU (docs/testing.md), so the tests share their servers:
// the server started to recover from one kill takes that test's retries and is then the server
// the next test kills (a test that fails leaves none behind). Every server loads the test hooks
// with a hold file, so that only the batch a test holds stops before its commit.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QUERY_KEY, type Backend } from '../helpers/harness.js';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';
import {
  INGEST_HEADERS as HEADERS,
  INGEST_PATH,
  ingestLogged,
  request,
  serverOnFreshDatabase,
  sleep,
  StagedPost,
  type ServerOnDatabase,
  type ServerProcess,
} from '../helpers/server-process.js';
import { batchState, pushBatch, rowCount } from '../helpers/server-calls.js';

const ROWS = 50_000;
/**
 * For kill points that do not depend on how long the batch takes to parse and write (before its
 * body is whole, at the hold before commit, or after its answer): the outcome is decided by the
 * point, not by the size, and the restart, retry and duplicate then write a tenth of the rows.
 * (A 50,000-row transaction killed before its commit is the full snapshot's test below.)
 */
const SMALL_ROWS = 5_000;

/**
 * The suite's servers and the batch a test holds before its commit (test/helpers/ingest-hooks.mjs,
 * MDS_TEST_HOLD_FILE: a batch that reaches its commit while `file` exists stops there).
 */
interface Servers {
  fx: ServerOnDatabase;
  /** The running server (the one the previous test restarted), or a new one. */
  running(): Promise<ServerProcess>;
  /** A new server on the database (after a kill: it recovers the database). */
  restart(): Promise<ServerProcess>;
  /** The next batch to reach its commit stops there. */
  hold(): void;
  /** Resolves once batch `batchId` is held before its commit. */
  held(batchId: string): Promise<void>;
  /** Lets no batch be held any longer. */
  release(): void;
}

function sharedServers(backend: Backend): Servers {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-crash-'));
  const file = path.join(dir, 'hold');
  const fx = serverOnFreshDatabase(backend, { MDS_TEST_HOLD_FILE: file });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return {
    fx,
    running: async () => fx.server ?? fx.start({ hooks: true }),
    restart: () => fx.start({ hooks: true }),
    hold() {
      fs.rmSync(`${file}.held`, { force: true });
      fs.writeFileSync(file, '');
    },
    async held(batchId) {
      const server = fx.server;
      for (const deadline = Date.now() + 120_000; ; await sleep(20)) {
        const at = `${file}.held`;
        if (fs.existsSync(at) && fs.readFileSync(at, 'utf8') === batchId) return;
        if (!server || server.child.exitCode !== null || Date.now() > deadline)
          throw new Error(
            `batch ${batchId} never reached its commit; output:\n${server?.output().slice(-3000)}`,
          );
      }
    },
    release: () => fs.rmSync(file, { force: true }),
  };
}

/**
 * Runs one test on the shared servers: whatever it leaves held is released, and if it fails its
 * server is stopped, so that the next test starts a clean one.
 */
async function onShared(servers: Servers, test: () => Promise<void>): Promise<void> {
  try {
    await test();
  } catch (err) {
    await servers.fx.stop('SIGKILL');
    throw err;
  } finally {
    servers.release();
  }
}

interface Scenario {
  name: string;
  rows: number;
  /** The outcome when the kill point is deterministic; otherwise either is correct. */
  expect?: 'absent' | 'applied';
  /** Holds the batch before its commit. */
  hold?: true;
  /**
   * Drives the staged POST up to the kill point; `from` is the server's output offset before
   * the POST (its earlier requests logged before it).
   */
  drive(
    post: StagedPost,
    server: ServerProcess,
    from: number,
    servers: Servers,
    batchId: string,
  ): Promise<void>;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'early: right after the request headers',
    rows: SMALL_ROWS,
    expect: 'absent',
    drive: async (_post, server, from) => ingestLogged(server, from),
  },
  {
    name: 'mid-parse: after half of the body',
    rows: SMALL_ROWS,
    expect: 'absent',
    drive: async (post, server, from) => {
      await post.sendUpTo(0.5);
      await ingestLogged(server, from);
    },
  },
  {
    name: 'body complete, killed at once (parsing or validating)',
    rows: ROWS,
    drive: async (post) => {
      await post.sendUpTo(1);
    },
  },
  {
    name: 'body complete, killed after 2000 ms (writing, or committed)',
    rows: ROWS,
    drive: async (post) => {
      await post.sendUpTo(1);
      await sleep(2000);
    },
  },
  {
    name: 'mid-write, just before commit (every row written; test-only hold hook)',
    rows: SMALL_ROWS,
    expect: 'absent',
    hold: true,
    drive: async (post, _server, _from, servers, batchId) => {
      await post.sendUpTo(1);
      await servers.held(batchId);
    },
  },
  {
    name: 'right after the answer (an acknowledged batch is durable)',
    rows: SMALL_ROWS,
    expect: 'applied',
    drive: async (post) => {
      await post.sendUpTo(1);
      const raw = await post.response();
      assert.match(raw, /^HTTP\/1\.1 200 /);
    },
  },
];

function batchKills(servers: Servers): void {
  SCENARIOS.forEach((sc, i) => {
    it(`${sc.name}, ${sc.rows} records`, (t) =>
      onShared(servers, async () => {
        const source = `crash${i}`;
        const batchId = uniqueId(`crash${i}`);
        const { body } = bigEtfBatch(sc.rows, source, batchId);

        let server = await servers.running();
        if (sc.hold) servers.hold();
        const from = server.output().length;
        const post = new StagedPost(server.port, INGEST_PATH, body, HEADERS);
        await sc.drive(post, server, from, servers, batchId);
        const exit = await servers.fx.stop('SIGKILL');
        post.destroy();
        servers.release();
        assert.equal(exit?.signal, 'SIGKILL', 'the server was killed, not finished on its own');

        server = await servers.restart();
        const state = await batchState(server.port, batchId);
        const rows = await rowCount(server.port, source);
        if (state.status === 404) {
          assert.equal(state.code, 4040);
          assert.equal(rows, 0, 'an absent batch left no row behind');
        } else {
          assert.equal(state.status, 200);
          assert.equal(state.batchStatus, 'accepted');
          assert.equal(state.accepted, sc.rows);
          assert.equal(rows, sc.rows, 'a registered batch has every row');
        }
        const outcome = state.status === 404 ? 'absent' : 'applied';
        t.diagnostic(`after the kill: ${outcome}`);
        if (sc.expect) assert.equal(outcome, sc.expect);

        // The retry applies it exactly once; a further retry is a duplicate.
        const retry = await pushBatch(server.port, body);
        assert.equal(retry.status, 200, retry.body);
        assert.equal(
          (JSON.parse(retry.body) as { status: string }).status,
          state.status === 404 ? 'accepted' : 'duplicate',
        );
        const again = await pushBatch(server.port, body);
        assert.equal(again.status, 200);
        assert.equal((JSON.parse(again.body) as { status: string }).status, 'duplicate');
        assert.equal(await rowCount(server.port, source), sc.rows);
        const final = await batchState(server.port, batchId);
        assert.equal(final.batchStatus, 'accepted');
        assert.equal(final.accepted, sc.rows);
      }));
  });
}

/** `n` etf_daily rows of one partition (date, source), symbols from `first` in steps of `step`. */
function partitionBatch(
  n: number,
  opts: { first: number; step: number; close: number; snapshot: boolean; batchId: string },
): Buffer {
  const data = Array.from({ length: n }, (_, i) =>
    etfBar(String(opts.first + i * opts.step), SNAP_DATE, { source: SNAP_SOURCE, close: opts.close }),
  );
  const b = batch('etf_daily', data, {
    batchId: opts.batchId,
    source: SNAP_SOURCE,
    businessDate: SNAP_DATE,
    snapshotType: opts.snapshot ? 'full_snapshot' : 'incremental',
  });
  return Buffer.from(JSON.stringify(b));
}

const SNAP_DATE = '2024-05-06';
const SNAP_SOURCE = 'snapcrash';

function snapshotKill(servers: Servers): void {
  it(`a ${ROWS}-record full snapshot killed after the upserts and the prune, before commit: the old partition is intact`, () =>
    onShared(servers, async () => {
      // 1,000 old rows; half of them are not in the snapshot, so its prune deletes 500.
      const seed = partitionBatch(1000, {
        first: 100_000,
        step: 100,
        close: 1,
        snapshot: false,
        batchId: uniqueId('seed'),
      });
      const snapId = uniqueId('snapcrash');
      const snap = partitionBatch(ROWS, {
        first: 100_000,
        step: 1,
        close: 2,
        snapshot: true,
        batchId: snapId,
      });

      let server = await servers.running();
      assert.equal((await pushBatch(server.port, seed)).status, 200);

      servers.hold();
      const post = new StagedPost(server.port, INGEST_PATH, snap, HEADERS);
      await post.sendUpTo(1);
      await servers.held(snapId);
      await servers.fx.stop('SIGKILL');
      post.destroy();
      servers.release();

      server = await servers.restart();
      assert.equal((await batchState(server.port, snapId)).status, 404, 'the snapshot is absent');
      assert.equal(await rowCount(server.port, SNAP_SOURCE), 1000, 'no upsert and no prune survived');
      const page = await request(server.port, {
        method: 'GET',
        path: `/api/v1/etf/kline?source=${SNAP_SOURCE}&limit=1000`,
        headers: { 'q-api-key': QUERY_KEY },
      });
      const closes = new Set(
        (JSON.parse(page.body) as { data: { close: number }[] }).data.map((r) => r.close),
      );
      assert.deepEqual([...closes], [1], 'every old row keeps its old value');

      const retry = await pushBatch(server.port, snap);
      assert.match(retry.body, /"status":"accepted"/);
      assert.match(retry.body, /"pruned":500/);
      assert.equal(await rowCount(server.port, SNAP_SOURCE), ROWS);
    }));
}

/**
 * The crash suite on one backend (each backend's file calls this): one database, its servers
 * shared from test to test.
 */
export function crashSuites(backend: Backend): void {
  describe(`faults: SIGKILL during a batch (${backend})`, { timeout: 900_000 }, () => {
    const servers = sharedServers(backend);
    batchKills(servers);
    snapshotKill(servers);
  });
}
